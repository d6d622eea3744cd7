package dev.onceonly.internal.redis;

import dev.onceonly.spi.ClaimStoreException;
import redis.clients.jedis.exceptions.JedisConnectionException;
import redis.clients.jedis.exceptions.JedisException;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;

/**
 * How the Redis store calls Redis: one attempt, one retry after a connection lost mid-call, never
 * one after a timeout, and a quiet time after a timeout during which calls fail at once.
 *
 * <p>Contract: {@link #call} returns the attempt's reply or throws {@link ClaimStoreException}
 * naming {@link #STORE} and the operation; it never lets a {@link JedisException} through.
 */
final class RedisCalls {

    /** The store's name, in logs and in every {@link ClaimStoreException} it throws. */
    static final String STORE = "redis";

    /** How long Redis counts as not answering after a command timed out. */
    private final long quietNanos;
    /**
     * Until when ({@link System#nanoTime()}) commands fail at once, without asking Redis: after a
     * timeout, every message would otherwise wait its own timeout and a paused Redis would stall
     * the consumer for the whole pause. 0 when Redis answers.
     */
    private volatile long quietUntil;

    /**
     * @param quietAfterTimeout after a command timed out, further commands fail at once for this
     *                          long (then one asks Redis again); zero to always ask
     */
    RedisCalls(Duration quietAfterTimeout) {
        this.quietNanos = quietAfterTimeout.toNanos();
    }

    /**
     * @param operation      what the attempt does, for the exception: {@code claim}, {@code complete}, ...
     * @param afterLostReply reads the reply of the retry that follows a connection lost mid-call,
     *                       when the first attempt may have been applied without its reply arriving
     * @param attempt        one attempt of the command; run a second time after a lost connection
     * @return the reply
     * @throws ClaimStoreException when Redis did not answer, answered with an error, or is quiet
     */
    <T> T call(String operation, UnaryOperator<T> afterLostReply, Supplier<T> attempt) {
        long quiet = quietUntil;
        if (quiet != 0 && quiet - System.nanoTime() > 0) {
            throw new ClaimStoreException(STORE, operation,
                    new IOException("Redis did not answer a moment ago (socket-timeout); not asked again yet"));
        }
        try {
            try {
                return answered(attempt.get());
            } catch (JedisConnectionException e) {
                if (timedOut(e)) {
                    // Redis is slow, paused or cut off: a second try would only double the wait. One
                    // command waits at most socket-timeout.
                    throw e;
                }
                // A pooled connection Redis closed meanwhile (restart, fail-over, idle timeout): the
                // pool drops it; one retry on another connection. Safe to repeat: claim recognises
                // its own token, and the holder-checked scripts change nothing a second time.
                return answered(afterLostReply.apply(attempt.get()));
            }
        } catch (JedisException e) {
            if (quietNanos > 0 && timedOut(e)) {
                quietUntil = System.nanoTime() + quietNanos;
            }
            throw new ClaimStoreException(STORE, operation, e);
        }
    }

    private <T> T answered(T reply) {
        if (quietUntil != 0) {
            quietUntil = 0;
        }
        return reply;
    }

    private static boolean timedOut(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SocketTimeoutException) {
                return true;
            }
        }
        return false;
    }
}
