package dev.onceonly.internal.cdi;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.Replayable;
import dev.onceonly.internal.config.OnceOnlyConfig;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.KeyDeriver;
import dev.onceonly.internal.memory.InMemoryClaimStore;
import dev.onceonly.internal.memory.InMemoryResultStore;
import dev.onceonly.internal.result.ResultSettings;
import dev.onceonly.internal.result.ResultWrites;
import dev.onceonly.spi.TransactionRunner;
import dev.onceonly.testing.LogCapture;
import dev.onceonly.testing.MutableClock;
import dev.onceonly.testing.Settings;
import org.junit.jupiter.api.Test;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Which store each keeping consumer gets at startup, and the starts that fail naming the consumer's {@code result.keep}. */
class ResultKeepersTest {

    private final Clock clock = new MutableClock();
    private final KeyDeriver keys = new KeyDeriver("oo:");
    private final ResultSettings keep = new ResultSettings(1_000, Duration.ofHours(1));

    public Replayable<String> charge(String body) {
        return Replayable.of(body);
    }

    private GuardedMethod method(boolean ledger, ResultSettings results) throws Exception {
        ConsumerSettings s = Settings.withLedger(Settings.defaults("c", KeyStrategy.CONTENT), ledger);
        return new GuardedMethod(ResultKeepersTest.class.getMethod("charge", String.class), s, false, results);
    }

    private static OnceOnlyConfig.Global store(String store) {
        return new OnceOnlyConfig.Global(true, store, "oo:", 1_000, false, false, Duration.ofSeconds(1));
    }

    private ResultKeepers open(List<GuardedMethod> methods, String store, Optional<String> ledgerProblem) {
        return ResultKeepers.open(methods, store(store), new InMemoryClaimStore(100, clock),
                () -> new ResultKeepers.LedgerResults(new InMemoryResultStore(10, clock), ledgerProblem),
                consumer -> "onceonly.consumers." + consumer + ".result.keep", keys, clock);
    }

    @Test
    void withoutTheLedgerResultsAreWrittenAfterTheCommitBesideTheClaims() throws Exception {
        GuardedMethod m = method(false, keep);
        try (LogCapture log = new LogCapture()) {
            ResultKeepers keepers = open(List.of(m), "memory", Optional.empty());
            assertEquals("memory", keepers.keeper(m).store().name());
            assertInstanceOf(ResultWrites.class, keepers.transactions(TransactionRunner.NONE));
            assertEquals(List.of("ONCE0901I: Consumer 'c' keeps its results in memory: up to 1000 bytes of JSON each, given to "
                    + "duplicates for 1h"), log.lines());
        }
    }

    /** Nothing kept beside the claims: the runner is left as it is, nothing is added to each call. */
    @Test
    void withTheLedgerOnlyTheRunnerIsLeftAsItIs() throws Exception {
        GuardedMethod inLedger = method(true, keep);
        GuardedMethod none = method(false, null);
        ResultKeepers keepers = open(List.of(inLedger, none), "database", Optional.empty());
        assertSame(TransactionRunner.NONE, keepers.transactions(TransactionRunner.NONE));
        assertEquals("memory", keepers.keeper(inLedger).store().name(), "the ledger's store, as the supplier gave it");
    }

    @Test
    void aLedgerTableWithoutTheResultColumnsStopsTheStartNamingTheProperty() throws Exception {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> open(List.of(method(true, keep)), "redis", Optional.of("the ledger table t with the columns result_json, result_until")));
        assertEquals("onceonly.consumers.c.result.keep", e.property());
        assertTrue(e.getMessage().contains("result_json") && e.getMessage().contains("docs/ledger.md"), e.getMessage());
    }

    @Test
    void theDatabaseClaimStoreKeepsNoResultsOfAConsumerWithoutTheLedger() throws Exception {
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> open(List.of(method(false, keep)), "database", Optional.empty()));
        assertEquals("onceonly.consumers.c.result.keep", e.property());
        assertTrue(e.getMessage().contains("ledger=true"), e.getMessage());
    }

    @Test
    void aMethodFirstSeenAtItsFirstCallHasNoKeeper() throws Exception {
        ResultKeepers keepers = open(List.of(), "memory", Optional.empty());
        assertEquals("onceonly.consumers.c.result.keep",
                assertThrows(InvalidConfigurationException.class, () -> keepers.keeper(method(false, keep))).property());
    }
}
