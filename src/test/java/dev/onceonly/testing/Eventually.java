package dev.onceonly.testing;

import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.Predicate;

/** Waits for an effect to show. Tests assert on the effect, never on how long it took. */
public final class Eventually {

    private Eventually() {
    }

    /** Polls {@code probe} until {@code done} holds, and returns that value; fails after {@code limit}. */
    public static <T> T await(String what, Duration limit, Callable<T> probe, Predicate<T> done) throws Exception {
        long deadline = System.nanoTime() + limit.toNanos();
        T last = null;
        while (System.nanoTime() < deadline) {
            last = probe.call();
            if (done.test(last)) {
                return last;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("gave up waiting for " + what + "; last seen: " + last);
    }
}
