package dev.onceonly.internal.redis;

import redis.clients.jedis.HostAndPort;
import redis.clients.jedis.Pipeline;
import redis.clients.jedis.Protocol;
import redis.clients.jedis.Response;
import redis.clients.jedis.exceptions.JedisAskDataException;
import redis.clients.jedis.exceptions.JedisNoScriptException;
import redis.clients.jedis.exceptions.JedisRedirectionException;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The Redis store's Lua scripts and how they are run: by SHA ({@code EVALSHA}), and by source
 * ({@code EVAL}, which caches them again) on {@code NOSCRIPT} after a restart, a fail-over or
 * {@code SCRIPT FLUSH}; and a completion's script with {@code WAIT} after it on one connection.
 *
 * <p>Contract: every script takes one key ({@code KEYS[1]}), so a cluster finds everything it
 * touches in one slot; the holder-checked ones answer
 * {@code 1} when they changed the key ({@link #isApplied}), else {@code 0}. A script is never
 * loaded with {@code SCRIPT LOAD} (see {@link #evalsha}). Jedis exceptions pass through.
 */
final class ClaimScripts {

    /**
     * The claim with its fence: the value found, unchanged, when the key exists (what the native
     * {@code SET NX PX GET} answers); else the key taken with the fence appended to its value
     * ({@code ARGV[1]|<fence>}), and the fence as the reply, an integer. The fence is Redis's clock in
     * microseconds ({@code TIME}), read in the same atomic step as the claim: no holder can take the
     * key between the two. Both replies tell apart from the native command's (nil: taken). A write
     * after {@code TIME} needs scripts replicated by their effects, the default since Redis 5.0 (and
     * the only way since 7.0): a replica gets the {@code SET} with the fence, never the script.
     */
    static final String CLAIM = """
            local v = redis.call('GET', KEYS[1])
            if v then return v end
            local t = redis.call('TIME')
            redis.call('SET', KEYS[1], ARGV[1] .. '|' .. t[1] .. string.format('%06d', tonumber(t[2])), 'PX', ARGV[2])
            return tonumber(t[1]) * 1000000 + tonumber(t[2])""";
    /** Compare-and-set from in progress (held by the token in ARGV[1]) to done. */
    static final String COMPLETE = """
            local v = redis.call('GET', KEYS[1])
            if v and string.sub(v, 1, #ARGV[1]) == ARGV[1] then
              redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3]) return 1 end
            return 0""";
    /** Compare-and-delete. */
    static final String RELEASE = """
            local v = redis.call('GET', KEYS[1])
            if v and string.sub(v, 1, #ARGV[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) return 1 end
            return 0""";
    /** Compare-and-PEXPIRE. */
    static final String EXTEND = """
            local v = redis.call('GET', KEYS[1])
            if v and string.sub(v, 1, #ARGV[1]) == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
            return 0""";

    /** A script's source and its SHA-1, by which Redis caches it. */
    record Script(String source, String sha) {
        static Script of(String source) {
            try {
                byte[] sha1 = MessageDigest.getInstance("SHA-1").digest(source.getBytes(StandardCharsets.UTF_8));
                return new Script(source, HexFormat.of().formatHex(sha1));
            } catch (NoSuchAlgorithmException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    static final Script CLAIM_SCRIPT = Script.of(CLAIM);
    static final Script COMPLETE_SCRIPT = Script.of(COMPLETE);
    static final Script RELEASE_SCRIPT = Script.of(RELEASE);
    static final Script EXTEND_SCRIPT = Script.of(EXTEND);

    /** What a holder-checked script answers when it changed the key. */
    static final Long APPLIED = 1L;

    private final RedisConnection connection;
    private final ReplicaWait wait;

    ClaimScripts(RedisConnection connection, ReplicaWait wait) {
        this.connection = connection;
        this.wait = wait;
    }

    /** {@return whether a holder-checked script's reply says it changed the key} */
    static boolean isApplied(Object reply) {
        return APPLIED.equals(reply);
    }

    /**
     * Runs the script on the key's node.
     *
     * @param keyAndArgs the key, then the script's arguments
     * @return the script's reply
     */
    Object evalsha(Script script, String key, String[] keyAndArgs) {
        try {
            return connection.jedis().evalsha(script.sha, 1, keyAndArgs);
        } catch (JedisNoScriptException e) {
            // Script cache lost (restart, fail-over, SCRIPT FLUSH) or never filled on this node: run
            // the source, which caches it there. EVAL goes to the key's node like EVALSHA; SCRIPT LOAD
            // does not: Jedis broadcasts it to every master of a cluster, so one frozen master failed
            // (or held up by a socket timeout) every first call on the other masters' keys.
            return connection.jedis().eval(script.source, 1, keyAndArgs);
        }
    }

    /**
     * Runs the script and then {@code WAIT} on ONE connection, pipelined: WAIT counts the replicas
     * that acknowledged the writes of the connection it is sent on, so it must follow the write on
     * the same connection (a pooled command would take any connection). In a cluster that is the
     * connection to the key's master, following MOVED and ASK like the client does. This path does
     * not refresh the client's slot map itself; the claim that precedes every completion goes
     * through the client, which does. A redirected attempt's own WAIT is spent (it answers at once
     * unless that node's replicas lag).
     *
     * @param replicas receives WAIT's answer when the script changed the key, else -1
     * @return the script's reply
     */
    Object evalshaThenWait(Script script, String key, String[] keyAndArgs, int[] replicas) {
        HostAndPort target = null;
        boolean asking = false;
        boolean bySource = false;
        for (int hop = 0; ; hop++) {
            Response<Object> r;
            Response<Long> acknowledged;
            try (Pipeline p = connection.pipelineFor(key, target)) {
                if (asking) {
                    p.sendCommand(Protocol.Command.ASKING, new String[0]);
                }
                r = bySource ? p.eval(script.source, 1, keyAndArgs) : p.evalsha(script.sha, 1, keyAndArgs);
                acknowledged = wait.send(p, key);
                p.sync();
            }
            Object reply;
            try {
                reply = r.get();
            } catch (JedisNoScriptException e) {
                if (bySource) {
                    throw e;
                }
                // Script cache lost on this node (restart, fail-over, SCRIPT FLUSH): run the source
                // there, which caches it (see evalsha). Nothing was written by the refused call.
                bySource = true;
                continue;
            } catch (JedisRedirectionException e) {
                // The slot moved (MOVED) or is moving (ASK): nothing was written; go where Redis says.
                if (hop >= 3) {
                    throw e;
                }
                target = e.getTargetNode();
                asking = e instanceof JedisAskDataException;
                continue;
            }
            replicas[0] = isApplied(reply) ? ReplicaWait.acknowledged(acknowledged) : -1;
            return reply;
        }
    }
}
