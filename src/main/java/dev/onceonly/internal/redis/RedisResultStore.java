package dev.onceonly.internal.redis;

import dev.onceonly.spi.ResultStore;
import redis.clients.jedis.params.SetParams;

import java.time.Duration;
import java.util.Optional;
import java.util.function.UnaryOperator;

/**
 * {@link ResultStore} on the Redis of the claim store, through its connection and its calls (one
 * retry after a lost connection, the quiet time after a timeout): a result is a string of its own
 * next to its key's claim, {@code SET ... PX retention}, read with {@code GET}. Its name puts it in the
 * claim's hash slot ({@link #resultKey}), so in a cluster it lives on the claim's master and moves
 * with it. Not waited for by replicas ({@code wait-replicas} covers the done mark): a fail-over may
 * lose a result the done mark survived, and its duplicates then get none.
 */
final class RedisResultStore implements ResultStore {

    /** What a result's name adds to its claim's. */
    static final String SUFFIX = ":result";

    private final RedisConnection connection;
    private final RedisCalls calls;

    RedisResultStore(RedisConnection connection, RedisCalls calls) {
        this.connection = connection;
        this.calls = calls;
    }

    @Override
    public String name() {
        return RedisCalls.STORE;
    }

    @Override
    public boolean transactional() {
        return false;
    }

    @Override
    public void put(String key, String result, Duration retention) {
        String name = resultKey(key);
        SetParams px = SetParams.setParams().px(retention.toMillis());
        calls.call("put result", UnaryOperator.identity(), () -> connection.jedis().set(name, result, px));
    }

    @Override
    public Optional<String> get(String key) {
        String name = resultKey(key);
        return Optional.ofNullable(calls.call("get result", UnaryOperator.identity(), () -> connection.jedis().get(name)));
    }

    /**
     * The name of a result, in its claim key's hash slot: {@code {<claim key>}:result}, whose hash
     * tag is the whole claim key. A claim key never has a tag of its own ({@code onceonly.key-prefix}
     * has no {@code {}); one with a {@code }} (from its prefix) would end such a tag early, so its
     * result is {@code <claim key>:result}, in a slot of its own: nothing reads or writes the two in
     * one command, so that costs only their being together.
     */
    static String resultKey(String claimKey) {
        return claimKey.indexOf('}') < 0 ? "{" + claimKey + "}" + SUFFIX : claimKey + SUFFIX;
    }
}
