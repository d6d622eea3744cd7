package dev.onceonly.internal.rabbitmq;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * How long a failed delivery waits before its next attempt, and who holds it meanwhile (validated
 * with the channel's other settings). The one place the delay of an attempt is computed.
 *
 * <p>Exponential backoff with "equal jitter": after failed attempt {@code n} the delay is drawn
 * uniformly from {@code [d/2, d]}, where {@code d = min(max, first × multiplier^(n-1))}. Jitter
 * spreads the returns of messages that failed together (a dependency down for all of them), so
 * they do not all come back in the same instant and fail together again. Equal rather than "full"
 * jitter ({@code [0, d)}): a failing dependency is always given at least half of the backoff, and a
 * retry never comes back at once.
 *
 * @param first       {@code retry-delay}: {@code d} after the first failed attempt; also the fixed
 *                    delay of BUSY and RETRY, which are not attempts and are not backed off
 * @param max         {@code retry-max-delay}: no {@code d} is longer
 * @param multiplier  {@code retry-multiplier}: each failed attempt multiplies {@code d}; 1 keeps it fixed
 * @param brokerAbove {@code retry-broker-delay-above}: a longer delay is held by the broker in a delay
 *                    queue ({@link DelayQueues}) instead of by the consumer, unacked
 */
record RetryBackoff(Duration first, Duration max, double multiplier, Duration brokerAbove) {

    /** The longest delay accepted: a delay queue's TTL and expiry must stay far below RabbitMQ's 2^32 - 1 ms. */
    static final Duration LIMIT = Duration.ofDays(1);

    /**
     * The delay before the attempt that follows failed attempt {@code failedAttempt}.
     *
     * @param failedAttempt the 1-based attempt that failed
     * @param random        uniform in {@code [0, 1)}: where in the jitter range the delay falls
     * @return from half of the backed-off delay up to all of it
     */
    Duration delay(int failedAttempt, double random) {
        // In doubles: first × multiplier^n overflows a long long before any cap applies (pow gives Infinity, min takes max).
        double ceiling = Math.min(max.toNanos(), first.toNanos() * Math.pow(multiplier, Math.max(0, failedAttempt - 1)));
        return Duration.ofNanos((long) (ceiling / 2 + random * ceiling / 2));
    }

    /**
     * Whether the broker holds a delay, and for how long: longer than {@code brokerAbove}, rounded
     * down to 1 or 1.5 times a power of two seconds (4 s, 6 s, 8 s, 12 s, 16 s, 24 s, 32 s...). Each
     * such step is one delay queue: about two per doubling of the delay keeps their number small
     * (20 for delays from 5 s to 1 h) while rounding shortens a delay by at most a third and never lengthens it
     * past {@code max}.
     *
     * @param delay a delay from {@link #delay}
     * @return the delay the broker holds, or empty when the consumer holds {@code delay} itself
     */
    Optional<Duration> brokerDelay(Duration delay) {
        if (delay.compareTo(brokerAbove) <= 0) {
            return Optional.empty();
        }
        long millis = delay.toMillis();
        long power = Long.highestOneBit(Math.max(1, millis / 1000)) * 1000;
        return Optional.of(Duration.ofMillis(millis >= power + power / 2 ? power + power / 2 : power));
    }

    /**
     * Every delay {@link #brokerDelay} can give for a delay up to {@code max}, shortest first: one
     * delay queue each. The shortest delay the broker holds, and each step from there to {@code max}.
     */
    List<Duration> brokerDelays() {
        TreeSet<Duration> all = new TreeSet<>();
        if (brokerAbove.compareTo(max) < 0) {
            brokerDelay(brokerAbove.plusMillis(1)).ifPresent(all::add);
        }
        for (long power = 1000; power <= max.toMillis(); power *= 2) {
            for (long step : new long[] {power, power + power / 2}) {
                if (step <= max.toMillis()) {
                    brokerDelay(Duration.ofMillis(step)).ifPresent(all::add);
                }
            }
        }
        return List.copyOf(all);
    }
}
