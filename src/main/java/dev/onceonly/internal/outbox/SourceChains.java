package dev.onceonly.internal.outbox;


import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Publishes the rows of one relay transaction: sources side by side, each source's rows one after
 * the other, each after the previous one's confirm. A source's chain stops at its first row that is
 * not confirmed (the later rows wait for another round), and every chain stops when the wait is
 * over: the relay transaction then marks what was answered and ends, and with it the lock on the
 * rows, so no row may be published after that.
 */
final class SourceChains {

    /**
     * What came of it.
     *
     * @param answers     per row answered in time: empty when confirmed, a failure when refused
     * @param confirmedAt per confirmed row, when ({@link System#nanoTime()})
     * @param timedOut    the wait ended before every chain did
     * @param stalled     timed out, or the broker could not be asked for some row (not a refusal):
     *                    more rows now would likely fare no better
     */
    record Outcome(Map<Long, Optional<OutboxStore.Failure>> answers, Map<Long, Long> confirmedAt, boolean timedOut,
                   boolean stalled) {
    }

    private final OutboxPublisher publisher;
    /** Guards the fields below, and every call of the publisher: the wait's end waits for a publish in progress. */
    private final Object gate = new Object();
    private final Map<Long, Optional<OutboxStore.Failure>> answers = new HashMap<>();
    private final Map<Long, Long> confirmedAt = new HashMap<>();
    private boolean over;
    private boolean failed;

    private SourceChains(OutboxPublisher publisher) {
        this.publisher = publisher;
    }

    /**
     * Publishes {@code rows} and waits up to {@code wait} for the answers.
     *
     * @param publisher the broker
     * @param rows      the rows handed out by the store, in id order
     * @param wait      how long to wait for every chain to end
     * @return what was answered before the wait ended; later answers are ignored
     */
    static Outcome publish(OutboxPublisher publisher, List<OutboxRecord> rows, Duration wait) {
        return new SourceChains(publisher).run(rows, wait);
    }

    private Outcome run(List<OutboxRecord> rows, Duration wait) {
        Map<String, List<OutboxRecord>> bySource = new LinkedHashMap<>();
        rows.forEach(r -> bySource.computeIfAbsent(r.source(), s -> new ArrayList<>()).add(r));
        List<CompletableFuture<Boolean>> chains = new ArrayList<>();
        for (List<OutboxRecord> source : bySource.values()) {
            CompletableFuture<Boolean> chain = CompletableFuture.completedFuture(true);
            for (OutboxRecord row : source) {
                chain = chain.thenCompose(goOn -> goOn ? publishOne(row) : CompletableFuture.completedFuture(false));
            }
            chains.add(chain);
        }
        boolean timedOut = false;
        try {
            CompletableFuture.allOf(chains.toArray(CompletableFuture[]::new)).get(wait.toMillis(), TimeUnit.MILLISECONDS);
        } catch (TimeoutException e) {
            timedOut = true;
        } catch (ExecutionException e) {
            // Each chain records its own failures; none is thrown out of it.
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            timedOut = true;
        }
        synchronized (gate) {
            over = true;
            return new Outcome(Map.copyOf(answers), Map.copyOf(confirmedAt), timedOut, timedOut || failed);
        }
    }

    /** @return whether the source's next row may go: this one was confirmed in time */
    private CompletableFuture<Boolean> publishOne(OutboxRecord row) {
        CompletableFuture<Void> confirm;
        synchronized (gate) {
            if (over) {
                return CompletableFuture.completedFuture(false); // the transaction holding the row's lock is ending
            }
            try {
                confirm = publisher.publish(row);
            } catch (RuntimeException e) {
                confirm = CompletableFuture.failedFuture(e);
            }
        }
        return confirm.handle((ok, failure) -> {
            synchronized (gate) {
                if (over) {
                    return false; // too late to be marked: the row stays pending and goes out once more
                }
                if (failure == null) {
                    confirmedAt.put(row.id(), System.nanoTime());
                    answers.put(row.id(), Optional.empty());
                    return true;
                }
                Throwable cause = failure instanceof CompletionException && failure.getCause() != null ? failure.getCause() : failure;
                if (cause instanceof OutboxPublisher.Refused refused) {
                    answers.put(row.id(), OutboxStore.Failure.refused(refused.getMessage()));
                } else {
                    failed = true; // connection lost, no confirm in time: not the row's fault, it stays pending
                }
                return false;
            }
        });
    }
}
