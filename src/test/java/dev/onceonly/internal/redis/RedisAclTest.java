package dev.onceonly.internal.redis;

import dev.onceonly.spi.ClaimResult;
import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.ClaimStoreException;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.testing.PrivateRedis;
import org.junit.jupiter.api.Test;
import redis.clients.jedis.RedisClient;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The least privilege the store needs, as docs/operations.md states it: a Redis ACL user limited to the key
 * prefix and a handful of commands. Every primitive works under it, scripts are reloaded after a
 * SCRIPT FLUSH, readiness answers, and a key outside the prefix is refused (the limit is real).
 */
class RedisAclTest {

    /** The ACL rule of docs/operations.md, "Least privilege". */
    static final String RULE = "~oo:* resetchannels -@all +evalsha +eval +get +set +del +pexpire +exists +ping"
            + " +client|setname +hello";

    @Test
    void theStoreWorksWithTheDocumentedLeastPrivilege() throws Exception {
        try (PrivateRedis server = new PrivateRedis(); RedisClient admin = server.client()) {
            admin.sendCommand(redis.clients.jedis.Protocol.Command.ACL, ("SETUSER onceonly on >pw-of-onceonly " + RULE).split(" "));
            RedisSettings settings = new RedisSettings(RedisSettings.Mode.STANDALONE, List.of("127.0.0.1:" + server.port()), "", false,
                    "onceonly", "pw-of-onceonly", 0, Duration.ofSeconds(2), Duration.ofSeconds(2), 2);
            try (RedisClaimStore store = RedisClaimStore.connect(settings)) {
                assertEquals(ClaimState.ACQUIRED, store.claim("oo:acl:1", "t1", "fp", Duration.ofSeconds(30)).state());
                assertEquals(HolderResult.APPLIED, store.extend("oo:acl:1", "t1", Duration.ofSeconds(30)));
                assertEquals(HolderResult.APPLIED, store.complete("oo:acl:1", "t1", "fp", Duration.ofHours(1)));
                assertEquals(ClaimState.ACQUIRED, store.claim("oo:acl:2", "t1", "fp", Duration.ofSeconds(30)).state());
                assertEquals(HolderResult.APPLIED, store.release("oo:acl:2", "t1"));
                admin.scriptFlush();
                assertEquals(ClaimResult.done("fp"), store.claim("oo:acl:1", "t2", "fp", Duration.ofSeconds(30)), "scripts reloaded");
                assertEquals(Optional.empty(), store.problem());
                assertThrows(ClaimStoreException.class, () -> store.claim("other:key", "t1", "fp", Duration.ofSeconds(30)),
                        "keys outside the prefix are refused");
            }
        }
    }

    /**
     * With onceonly.redis.wait-replicas the user needs {@code +wait}; without it a completion is
     * still applied and reported unconfirmed, never failed after its write.
     */
    @Test
    void waitNeedsItsOwnPermissionAndItsRefusalNeverFailsACompletion() throws Exception {
        try (PrivateRedis server = new PrivateRedis(); RedisClient admin = server.client()) {
            admin.sendCommand(redis.clients.jedis.Protocol.Command.ACL, ("SETUSER with-wait on >pw " + RULE + " +wait").split(" "));
            admin.sendCommand(redis.clients.jedis.Protocol.Command.ACL, ("SETUSER without-wait on >pw " + RULE).split(" "));
            for (String user : List.of("with-wait", "without-wait")) {
                RedisSettings settings = new RedisSettings(RedisSettings.Mode.STANDALONE, List.of("127.0.0.1:" + server.port()), "",
                        false, user, "pw", 0, Duration.ofSeconds(2), Duration.ofSeconds(2), 2).withWait(1, Duration.ofMillis(50));
                try (RedisClaimStore store = RedisClaimStore.connect(settings)) {
                    String key = "oo:acl:wait:" + user;
                    store.claim(key, "t1", "fp", Duration.ofSeconds(30));
                    // No replica here: WAIT answers 0 after its timeout, or is refused (-1) without +wait.
                    assertEquals(new ReplicaWait.Completion(HolderResult.APPLIED, user.equals("with-wait") ? 0 : -1, false),
                            store.completeReplicated(key, "t1", "fp", Duration.ofHours(1)));
                    assertEquals(ClaimResult.done("fp"), store.claim(key, "t2", "fp", Duration.ofSeconds(30)));
                }
            }
        }
    }
}
