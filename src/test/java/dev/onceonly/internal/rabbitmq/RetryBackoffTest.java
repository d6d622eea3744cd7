package dev.onceonly.internal.rabbitmq;

import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RetryBackoffTest {

    private static final RetryBackoff BACKOFF =
            new RetryBackoff(Duration.ofSeconds(1), Duration.ofMinutes(1), 2.0, Duration.ofSeconds(5));
    /** The largest value a random source in [0, 1) gives. */
    private static final double ALMOST_ONE = Math.nextDown(1.0);

    @Test
    void theDelayDoublesPerFailedAttemptUpToTheCap() {
        long[] ceilingsMillis = {1_000, 2_000, 4_000, 8_000, 16_000, 32_000, 60_000, 60_000};
        for (int attempt = 1; attempt <= ceilingsMillis.length; attempt++) {
            Duration ceiling = Duration.ofMillis(ceilingsMillis[attempt - 1]);
            assertEquals(ceiling.dividedBy(2), BACKOFF.delay(attempt, 0), "attempt " + attempt + ", lowest");
            Duration highest = BACKOFF.delay(attempt, ALMOST_ONE);
            assertTrue(highest.compareTo(ceiling) <= 0 && highest.compareTo(ceiling.minusMillis(1)) >= 0,
                    "attempt " + attempt + ", highest: " + highest);
        }
    }

    /** Equal jitter: always at least half of the backed-off delay, never more than all of it. */
    @Test
    void jitterStaysWithinHalfToAllOfTheDelay() {
        for (double random = 0; random < 1; random += 0.01) {
            Duration d = BACKOFF.delay(3, random);
            assertTrue(d.compareTo(Duration.ofSeconds(2)) >= 0 && d.compareTo(Duration.ofSeconds(4)) <= 0, d + " at " + random);
        }
        assertEquals(Duration.ofSeconds(3), BACKOFF.delay(3, 0.5));
    }

    @Test
    void aMultiplierOfOneKeepsTheDelayFixed() {
        RetryBackoff fixed = new RetryBackoff(Duration.ofMillis(500), Duration.ofMinutes(1), 1.0, Duration.ofSeconds(5));
        for (int attempt = 1; attempt < 50; attempt++) {
            assertEquals(Duration.ofMillis(250), fixed.delay(attempt, 0));
        }
    }

    @Test
    void manyAttemptsDoNotOverflowPastTheCap() {
        RetryBackoff steep = new RetryBackoff(Duration.ofSeconds(1), Duration.ofDays(1), 10.0, Duration.ofSeconds(5));
        assertEquals(Duration.ofHours(12), steep.delay(1_000, 0));
        assertEquals(Duration.ofHours(12), steep.delay(Integer.MAX_VALUE, 0));
    }

    @Test
    void delaysUpToTheThresholdAreHeldByTheConsumer() {
        assertEquals(Optional.empty(), BACKOFF.brokerDelay(Duration.ofMillis(4_999)));
        assertEquals(Optional.empty(), BACKOFF.brokerDelay(Duration.ofSeconds(5)));
        assertTrue(BACKOFF.brokerDelay(Duration.ofMillis(5_001)).isPresent());
    }

    @Test
    void brokerDelaysAreRoundedDownToOneOrOneAndAHalfTimesAPowerOfTwoSeconds() {
        assertEquals(Optional.of(Duration.ofSeconds(4)), BACKOFF.brokerDelay(Duration.ofMillis(5_500)));
        assertEquals(Optional.of(Duration.ofSeconds(6)), BACKOFF.brokerDelay(Duration.ofMillis(7_999)));
        assertEquals(Optional.of(Duration.ofSeconds(8)), BACKOFF.brokerDelay(Duration.ofSeconds(8)));
        assertEquals(Optional.of(Duration.ofSeconds(24)), BACKOFF.brokerDelay(Duration.ofSeconds(30)));
        assertEquals(Optional.of(Duration.ofSeconds(32)), BACKOFF.brokerDelay(Duration.ofSeconds(33)));
        assertEquals(Optional.of(Duration.ofSeconds(48)), BACKOFF.brokerDelay(Duration.ofMinutes(1)));
    }

    /** Every delay from 5 s to an hour lands in one of a few delay queues, never longer than asked and never under two thirds of it. */
    @Test
    void brokerDelaysUseFewQueuesAndShortenByAtMostAThird() {
        Set<Duration> buckets = new TreeSet<>();
        for (long ms = 5_001; ms <= 3_600_000; ms += 97) {
            Duration asked = Duration.ofMillis(ms);
            Duration held = BACKOFF.brokerDelay(asked).orElseThrow();
            assertTrue(held.compareTo(asked) <= 0 && held.toMillis() * 3 >= ms * 2, asked + " held " + held);
            buckets.add(held);
        }
        assertEquals(20, buckets.size(), buckets.toString());
    }

    @Test
    void brokerDelaysAreEveryDelayTheBrokerMayHoldAndNoOther() {
        for (RetryBackoff b : new RetryBackoff[] {BACKOFF, new RetryBackoff(Duration.ofSeconds(1), Duration.ofMillis(12_500), 2.0,
                Duration.ofMillis(2_500)), new RetryBackoff(Duration.ofSeconds(1), Duration.ofSeconds(5), 2.0, Duration.ofSeconds(5))}) {
            Set<Duration> held = new TreeSet<>();
            for (long millis = 1; millis <= b.max().toMillis(); millis++) {
                b.brokerDelay(Duration.ofMillis(millis)).ifPresent(held::add);
            }
            assertEquals(List.copyOf(held), b.brokerDelays(), b.toString());
        }
    }
}
