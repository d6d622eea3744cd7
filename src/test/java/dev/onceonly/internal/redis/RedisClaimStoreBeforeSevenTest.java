package dev.onceonly.internal.redis;

import dev.onceonly.contract.Fences;
import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.BatchClaimStore;
import dev.onceonly.testing.LogCapture;
import dev.onceonly.testing.RespProxy;
import dev.onceonly.testing.TestRedis;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.RedisClient;

import java.io.IOException;
import java.net.URI;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The store contract on a server that refuses {@code SET NX GET} (as Redis before 7.0 does): each
 * store, in its default mode, tries the native claim once, is refused, and keeps the whole contract
 * through the script (the sixteen-thread race included, where many claims are refused at once).
 */
class RedisClaimStoreBeforeSevenTest extends RedisClaimStoreTest {

    private static RespProxy beforeSeven;

    @BeforeAll
    static void startProxy() throws IOException {
        beforeSeven = new RespProxy(URI.create(TestRedis.url()).getPort(), true);
    }

    @AfterAll
    static void stopProxy() throws IOException {
        beforeSeven.close();
    }

    /** Claims go by script after the first: fences. */
    @Override
    protected boolean givesFences() {
        return true;
    }

    @Override
    protected RedisClaimStore newStore() {
        return new RedisClaimStore(RedisClient.create(new HostAndPort("127.0.0.1", beforeSeven.port())));
    }

    @Test
    void theNativeClaimIsTriedOnceThenTheScriptAnswersAndTheSwitchIsLoggedOnce() {
        int refusedBefore = beforeSeven.refused();
        try (LogCapture log = new LogCapture()) {
            String key = prefix + "fallback";
            assertEquals(ClaimState.ACQUIRED, store.claim(key, "t1", "fp", LEASE).state(), "the refused claim is taken by the script");
            assertEquals(ClaimResult.inProgress("fp"), store.claim(key, "t2", "fp", LEASE));
            assertEquals(ClaimState.ACQUIRED, store.claim(prefix + "fallback2", "t1", "fp", LEASE).state());
            assertEquals(1, beforeSeven.refused() - refusedBefore, "asked natively once, then never again");
            assertEquals(1, log.lines().stream().filter(l -> l.startsWith("ONCE0110I")).count(), log.lines().toString());
        }
    }
    /**
     * A batch's first round meets the refusal once per key (the commands were sent together), is
     * then claimed by the script, key by key, without asking natively again; later batches go by
     * script at once. The switch is logged once.
     */
    @Test
    void aBatchIsRefusedNativelyOnceAndThenClaimedByTheScript() {
        int refusedBefore = beforeSeven.refused();
        try (LogCapture log = new LogCapture()) {
            List<BatchClaimStore.ClaimRequest> first = List.of(
                    new BatchClaimStore.ClaimRequest(prefix + "b1", "t1", "fp1", LEASE),
                    new BatchClaimStore.ClaimRequest(prefix + "b2", "t2", "fp2", LEASE),
                    new BatchClaimStore.ClaimRequest(prefix + "b1", "t3", "fp3", LEASE),
                    new BatchClaimStore.ClaimRequest(prefix + "b3", "t4", "fp4", LEASE));
            assertEquals(List.of(ClaimResult.ACQUIRED, ClaimResult.ACQUIRED, ClaimResult.inProgress("fp1"), ClaimResult.ACQUIRED),
                    Fences.unfenced(store.claimAll(first)));
            assertEquals(2, beforeSeven.refused() - refusedBefore,
                    "the first round's two claims, then none: the repeated key's round goes by script");
            assertEquals(List.of(ClaimResult.inProgress("fp2"), ClaimResult.ACQUIRED), Fences.unfenced(store.claimAll(List.of(
                    new BatchClaimStore.ClaimRequest(prefix + "b2", "t5", "fp5", LEASE),
                    new BatchClaimStore.ClaimRequest(prefix + "b4", "t6", "fp6", LEASE)))));
            assertEquals(2, beforeSeven.refused() - refusedBefore, "later batches by script at once");
            assertEquals(1, log.lines().stream().filter(l -> l.startsWith("ONCE0110I")).count(), log.lines().toString());
        }
    }
}
