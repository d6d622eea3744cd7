package dev.onceonly.internal.redis;

import dev.onceonly.testing.RedisTopology;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * What readiness says about a standalone Redis of the test's own with a password: the topology
 * and the address when it is down, never the password. (Sentinel and Cluster: in their own tests,
 * on their real deployments.)
 */
class RedisHealthTest {

    private static final String PASSWORD = "h3alth/s3cret";

    @Test
    void readinessNamesTheNodeThatIsDownAndNeverTheSecret() throws Exception {
        try (RedisTopology one = RedisTopology.standalone("--requirepass", PASSWORD)) {
            RedisTopology.Node node = one.nodes().get(0);
            RedisSettings settings = new RedisSettings(RedisSettings.Mode.STANDALONE, List.of(node.address()), "", false,
                    null, PASSWORD, 0, Duration.ofSeconds(1), Duration.ofSeconds(1), 2);
            try (RedisClaimStore store = RedisClaimStore.connect(settings)) {
                assertEquals(Optional.empty(), store.problem());
                assertEquals("standalone " + node.address(), store.topology());
                one.kill9(node);
                String problem = store.problem().orElseThrow();
                assertEquals("standalone " + node.address() + " does not answer PING (JedisConnectionException)", problem);
                assertFalse(problem.contains(PASSWORD) || store.topology().contains(PASSWORD));
            }
        }
    }
}
