package dev.onceonly.engine;

import dev.onceonly.memory.InMemoryClaimStore;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStore;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The done markers' writer thread on its own: started by the first mark, parked while nothing is
 * queued, ended when idle, stopped or interrupted, and never losing or doubling a mark in the
 * hand-over between an ending writer and the next.
 */
class DoneWriterTest {

    private static final Duration LEASE = Duration.ofMinutes(1);
    private static final Duration RETENTION = Duration.ofHours(1);

    private final ClaimStore store = new InMemoryClaimStore(100_000, Clock.systemUTC());
    /** Every writer thread the factory made, in order. */
    private final List<Thread> writers = new CopyOnWriteArrayList<>();
    private final ThreadFactory threads = r -> {
        Thread t = new Thread(r, "done-writer-" + writers.size());
        t.setDaemon(true);
        writers.add(t);
        return t;
    };

    @Test
    void aWriterEndsAfterItsIdleTimeAndTheNextMarkStartsAnother() throws Exception {
        DoneWriter writer = new DoneWriter(store, threads, TimeUnit.MILLISECONDS.toNanos(100));
        TestMark first = claimed("first");
        writer.add(first);
        first.awaitWritten();
        assertEquals(1, writers.size());
        assertEquals(DoneWriter.THREAD_NAME, writers.get(0).getName());
        writers.get(0).join(5_000);
        assertFalse(writers.get(0).isAlive(), "the writer ended after 100 ms without a mark");

        TestMark second = claimed("second");
        writer.add(second);
        second.awaitWritten();
        assertEquals(2, writers.size(), "a new writer for the mark after the idle end");
        assertEquals(ClaimState.DONE, store.claim("second", "other", "", LEASE).state());
    }

    @Test
    void marksWhileTheWriterRunsShareItAndGoOutTogether() throws Exception {
        DoneWriter writer = new DoneWriter(store, threads);
        List<TestMark> marks = new ArrayList<>();
        for (int i = 0; i < 50; i++) {
            TestMark m = claimed("batch-" + i);
            marks.add(m);
            writer.add(m); // all within the first mark's gathering time
        }
        for (TestMark m : marks) {
            m.awaitWritten();
            assertEquals(HolderResult.APPLIED, m.results.get(0));
        }
        assertEquals(1, writers.size(), "one writer thread for all of them");
        writer.stop();
    }

    /** Liberty interrupts the managed threads of a stopping application; parking would then return at once. */
    @Test
    void anInterruptedWriterEndsInsteadOfSpinningAndLaterMarksAreStillWritten() throws Exception {
        DoneWriter writer = new DoneWriter(store, threads);
        TestMark first = claimed("before-interrupt");
        writer.add(first);
        first.awaitWritten();
        Thread parked = writers.get(0);
        parked.interrupt();
        parked.join(5_000);
        assertFalse(parked.isAlive(), "the interrupted writer ended");

        TestMark second = claimed("after-interrupt");
        writer.add(second);
        second.awaitWritten();
        assertEquals(2, writers.size());
    }

    @Test
    void afterStopEachMarkIsWrittenByTheThreadThatAddsIt() throws Exception {
        DoneWriter writer = new DoneWriter(store, threads);
        TestMark running = claimed("while-running");
        writer.add(running);
        running.awaitWritten();

        writer.stop();
        writers.get(0).join(5_000);
        assertFalse(writers.get(0).isAlive(), "the stopped writer ended");
        TestMark late = claimed("after-stop");
        writer.add(late);
        assertEquals(List.of(HolderResult.APPLIED), late.results, "written before add returned");
        assertSame(Thread.currentThread(), late.writtenBy);
        assertEquals(1, writers.size(), "no writer started after the stop");
    }

    @Test
    void whenNoThreadCanBeHadTheAddingThreadWritesTheMark() {
        DoneWriter writer = new DoneWriter(store, r -> {
            throw new IllegalStateException("the application is stopping");
        });
        TestMark m = claimed("no-thread");
        writer.add(m);
        assertEquals(List.of(HolderResult.APPLIED), m.results);
        assertSame(Thread.currentThread(), m.writtenBy);
    }

    /**
     * Writers that end after 1 ms idle, and adders that pause around that edge: marks added while
     * one writer ends must be taken by it or by the next, each exactly once.
     */
    @Test
    void everyMarkIsWrittenExactlyOnceAcrossWritersEndingAndStarting() throws Exception {
        DoneWriter writer = new DoneWriter(store, threads, TimeUnit.MILLISECONDS.toNanos(1));
        int adders = 4;
        int perAdder = 1_500;
        Map<String, TestMark> all = new ConcurrentHashMap<>();
        ExecutorService pool = Executors.newFixedThreadPool(adders);
        try {
            List<Future<?>> done = new ArrayList<>();
            for (int a = 0; a < adders; a++) {
                int adder = a;
                done.add(pool.submit(() -> {
                    for (int i = 0; i < perAdder; i++) {
                        TestMark m = claimed("edge-" + adder + "-" + i);
                        all.put(m.key, m);
                        writer.add(m);
                        int pause = ThreadLocalRandom.current().nextInt(8);
                        if (pause < 3) {
                            // 0.5-1.5 ms: about the writer's idle time, so writers end and start all along
                            TimeUnit.MICROSECONDS.sleep(500 + pause * 500L);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : done) {
                f.get(60, TimeUnit.SECONDS);
            }
        } finally {
            pool.shutdownNow();
        }
        for (TestMark m : all.values()) {
            m.awaitWritten();
        }
        Thread.sleep(50); // a second answer to any mark would come within a batch's time
        assertEquals(adders * perAdder, all.size());
        for (TestMark m : all.values()) {
            assertEquals(List.of(HolderResult.APPLIED), m.results, m.key + " answered once");
        }
        assertTrue(writers.size() > 1, "writers ended and started during the run: " + writers.size());
    }

    private TestMark claimed(String key) {
        String token = "token-" + key;
        assertEquals(ClaimState.ACQUIRED, store.claim(key, token, "", LEASE).state());
        return new TestMark(key, token);
    }

    /** A claimed key to be marked done, recording each answer and the thread that gave it. */
    private static final class TestMark implements DoneWriter.Mark {
        final String key;
        final String token;
        final List<HolderResult> results = new CopyOnWriteArrayList<>();
        final CountDownLatch written = new CountDownLatch(1);
        final AtomicInteger failures = new AtomicInteger();
        volatile Thread writtenBy;

        TestMark(String key, String token) {
            this.key = key;
            this.token = token;
        }

        @Override
        public ClaimStore.CompleteRequest completeRequest() {
            return new ClaimStore.CompleteRequest(key, token, "", RETENTION);
        }

        @Override
        public void doneWritten(HolderResult result) {
            writtenBy = Thread.currentThread();
            results.add(result);
            written.countDown();
        }

        @Override
        public void doneNotWritten(ClaimStoreException failure) {
            failures.incrementAndGet();
            written.countDown();
        }

        void awaitWritten() throws InterruptedException {
            assertTrue(written.await(10, TimeUnit.SECONDS), key + " written");
            assertEquals(0, failures.get(), key + " not refused");
        }
    }
}
