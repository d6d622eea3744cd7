package dev.onceonly.redis;

import dev.onceonly.spi.ClaimResult;
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
 * The least privilege the store needs, as README states it: a Redis ACL user limited to the key
 * prefix and a handful of commands. Every primitive works under it, scripts are reloaded after a
 * SCRIPT FLUSH, readiness answers, and a key outside the prefix is refused (the limit is real).
 */
class RedisAclTest {

    /** The ACL rule of README's "Operations" section. */
    static final String RULE = "~oo:* resetchannels -@all +evalsha +eval +script|load +get +set +del +pexpire +exists +ping"
            + " +client|setname +hello";

    @Test
    void theStoreWorksWithTheDocumentedLeastPrivilege() throws Exception {
        try (PrivateRedis server = new PrivateRedis(); RedisClient admin = server.client()) {
            admin.sendCommand(redis.clients.jedis.Protocol.Command.ACL, ("SETUSER onceonly on >pw-of-onceonly " + RULE).split(" "));
            RedisSettings settings = new RedisSettings(RedisSettings.Mode.STANDALONE, List.of("127.0.0.1:" + server.port()), "", false,
                    "onceonly", "pw-of-onceonly", 0, Duration.ofSeconds(2), Duration.ofSeconds(2), 2);
            try (RedisClaimStore store = RedisClaimStore.connect(settings)) {
                assertEquals(ClaimResult.ACQUIRED, store.claim("oo:acl:1", "t1", "fp", Duration.ofSeconds(30)));
                assertEquals(HolderResult.APPLIED, store.extend("oo:acl:1", "t1", Duration.ofSeconds(30)));
                assertEquals(HolderResult.APPLIED, store.complete("oo:acl:1", "t1", "fp", Duration.ofHours(1)));
                assertEquals(ClaimResult.ACQUIRED, store.claim("oo:acl:2", "t1", "fp", Duration.ofSeconds(30)));
                assertEquals(HolderResult.APPLIED, store.release("oo:acl:2", "t1"));
                admin.scriptFlush();
                assertEquals(ClaimResult.done("fp"), store.claim("oo:acl:1", "t2", "fp", Duration.ofSeconds(30)), "scripts reloaded");
                assertEquals(Optional.empty(), store.problem());
                assertThrows(ClaimStoreException.class, () -> store.claim("other:key", "t1", "fp", Duration.ofSeconds(30)),
                        "keys outside the prefix are refused");
            }
        }
    }
}
