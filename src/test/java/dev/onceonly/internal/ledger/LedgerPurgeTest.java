package dev.onceonly.internal.ledger;

import dev.onceonly.spi.Ledger;
import dev.onceonly.testing.LogCapture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.Supplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The purge's horizon: now minus the retention, held back while a dead letter waits, so that the
 * row its key may have (written before it was dead-lettered, or after) is still there when it is
 * replayed; and no run at all when the dead-letter queues cannot be read.
 */
class LedgerPurgeTest {

    static final Instant NOW = Instant.parse("2026-12-03T12:00:00Z");
    static final Duration RETENTION = Duration.ofDays(7);
    static final Duration INTERVAL = Duration.ofHours(1);

    final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    final List<Instant> purgedBefore = new ArrayList<>();
    final Ledger ledger = new Ledger() {
        @Override
        public LedgerDecision insert(String key, String consumer, String bodyHash) {
            throw new UnsupportedOperationException();
        }

        @Override
        public void checkReady() {
        }

        @Override
        public long purge(Instant olderThan, int batchSize) {
            purgedBefore.add(olderThan);
            return 0;
        }
    };

    @AfterEach
    void stop() {
        scheduler.shutdownNow();
    }

    private void runWith(Supplier<Optional<Instant>> oldestDeadLetter) {
        try (LedgerPurge purge = new LedgerPurge(ledger, RETENTION, INTERVAL, 100, Clock.fixed(NOW, ZoneOffset.UTC), scheduler,
                oldestDeadLetter)) {
            purge.run();
        }
    }

    @Test
    void withoutDeadLettersRowsPastTheRetentionGo() {
        runWith(Optional::empty);
        assertEquals(List.of(NOW.minus(RETENTION)), purgedBefore);
    }

    @Test
    void aWaitingDeadLetterKeepsEveryRowItsKeyMayHave() {
        Instant deadLettered = NOW.minus(Duration.ofDays(30));
        try (LogCapture log = new LogCapture()) {
            runWith(() -> Optional.of(deadLettered));
            assertEquals(1, log.lines("ONCE0804I").size(), log.lines().toString());
        }
        assertEquals(List.of(deadLettered.minus(RETENTION).minus(INTERVAL)), purgedBefore,
                "rows from a retention (and the purge's lag) before it was dead-lettered are kept");
    }

    @Test
    void aRecentDeadLetterHoldsBackByItsAgeAndThePurgesLag() {
        runWith(() -> Optional.of(NOW.minusSeconds(60)));
        assertEquals(List.of(NOW.minusSeconds(60).minus(RETENTION).minus(INTERVAL)), purgedBefore);
    }

    @Test
    void queuesThatCannotBeReadSkipTheRun() {
        try (LogCapture log = new LogCapture()) {
            runWith(() -> {
                throw new IllegalStateException("broker down");
            });
            assertTrue(log.lines("ONCE0805W").get(0).contains("broker down"), log.lines().toString());
        }
        assertEquals(List.of(), purgedBefore, "nothing purged: a dead letter's row might go");
    }
}
