package dev.onceonly.internal.result;

import dev.onceonly.api.Replayable;
import dev.onceonly.internal.support.CurrentKey;
import dev.onceonly.internal.support.LogId;
import dev.onceonly.spi.ResultStore;
import dev.onceonly.spi.TransactionRunner;
import jakarta.json.bind.Jsonb;
import jakarta.json.bind.JsonbBuilder;

import java.lang.invoke.MethodType;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.util.Objects;
import java.util.Optional;

/**
 * Keeps the results of one guarded method that returns a value, and gives a duplicate of a call
 * the first call's: the method's result as JSON (JSON-B, by its generic return type; for
 * {@link Replayable}{@code <T>} the {@code T} inside), stored under the call's key in its
 * {@link ResultStore}, no larger than {@link ResultSettings#maxBytes()}.
 *
 * <p>Beside the guard, not in it: {@link #keeping} wraps the handler the guard runs, so the result
 * is handed over inside the call's transaction, right after the method returned. A transactional
 * store (the ledger) writes it there, committing with the effect; for any other, the handler's
 * result travels out as a pending write that {@link ResultWrites} makes once the transaction
 * committed, before the key is marked done. {@link #returned} gives the caller the method's own
 * result back, {@link #replay} a duplicate the stored one. A result is never logged.
 */
public final class ResultKeeper {

    private final String consumer;
    private final ResultSettings settings;
    private final ResultStore store;
    /** Whether the method returns {@link Replayable}: the stored value is the one inside. */
    private final boolean replayable;
    /** The type of the stored value, boxed. */
    private final Type stored;
    private final Jsonb jsonb;

    /**
     * A keeper for one method.
     *
     * @param consumer   the method's consumer, for the log
     * @param returnType the method's generic return type; not {@code void}
     * @param settings   the consumer's result settings
     * @param store      where its results are kept: the ledger for a consumer with the ledger on
     */
    public ResultKeeper(String consumer, Type returnType, ResultSettings settings, ResultStore store) {
        this.consumer = Objects.requireNonNull(consumer, "consumer");
        this.settings = Objects.requireNonNull(settings, "settings");
        this.store = Objects.requireNonNull(store, "store");
        this.replayable = isReplayable(returnType);
        Type value = replayable ? valueType(returnType) : returnType;
        this.stored = value instanceof Class<?> c && c.isPrimitive() ? MethodType.methodType(c).wrap().returnType() : value;
        this.jsonb = JsonbBuilder.create();
    }

    /**
     * {@return whether {@code returnType} is {@link Replayable}, which turns keeping on by default}
     *
     * @param returnType a guarded method's generic return type
     */
    public static boolean isReplayable(Type returnType) {
        Type raw = returnType instanceof ParameterizedType p ? p.getRawType() : returnType;
        return raw == Replayable.class;
    }

    /** {@return the store results are kept in} */
    public ResultStore store() {
        return store;
    }

    /**
     * The handler, made to keep its result: run inside the guarded call's transaction and under its
     * key ({@link CurrentKey}).
     *
     * @param handler the guarded method
     * @return the handler that keeps what it returns; its result goes through {@link #returned}
     */
    public TransactionRunner.Work<Object> keeping(TransactionRunner.Work<Object> handler) {
        return () -> {
            Object returned = handler.call();
            String key = CurrentKey.get();
            String json = json(returned instanceof Replayable<?> r ? r.value() : returned, key);
            if (json == null) {
                return returned;
            }
            if (store.transactional()) {
                store.put(key, json, settings.retention()); // a failure fails the call: the effect must not commit without it
                return returned;
            }
            return new PendingResult(returned, store, key, json, settings.retention(), consumer);
        };
    }

    /**
     * {@return what the call returns of the method's own result: the handler's value, with its
     * pending write (made by then) taken off}
     *
     * @param result what the guard's decision carries
     */
    public Object returned(Object result) {
        return result instanceof PendingResult p ? p.returned() : result;
    }

    /**
     * The stored result for a duplicate of the call under {@code key}.
     *
     * @param key the call's key
     * @return the first call's result ({@link Replayable#replayed} for a {@code Replayable} method);
     *         {@code null} when none is stored or it cannot be read (logged)
     */
    public Object replay(String key) {
        Optional<String> json;
        Object value;
        try {
            json = store.get(key);
            if (json.isEmpty()) {
                return null;
            }
            value = jsonb.fromJson(json.get(), stored);
        } catch (RuntimeException e) {
            // The class name only: a message could quote the stored data.
            LogId.ONCE0904W.log(consumer, PendingResult.digest(key), store.name(), e.getClass().getName());
            return null;
        }
        return replayable ? Replayable.replayed(value) : value;
    }

    /** The value as JSON, or {@code null} when it is not stored: too large, or JSON-B cannot write it (logged). */
    private String json(Object value, String key) {
        String json;
        try {
            json = jsonb.toJson(value, stored);
        } catch (RuntimeException e) {
            LogId.ONCE0902W.log(consumer, PendingResult.digest(key), "JSON-B could not write it (" + e.getClass().getName() + ")");
            return null;
        }
        // At most 4 bytes a char: the exact count only where the limit could be passed.
        if (json.length() * 4L > settings.maxBytes()) {
            int bytes = json.getBytes(StandardCharsets.UTF_8).length;
            if (bytes > settings.maxBytes()) {
                LogId.ONCE0902W.log(consumer, PendingResult.digest(key),
                        bytes + " bytes, over result.max-size (" + settings.maxBytes() + " bytes)");
                return null;
            }
        }
        return json;
    }

    private static Type valueType(Type replayable) {
        if (replayable instanceof ParameterizedType p) {
            return p.getActualTypeArguments()[0];
        }
        return Object.class; // a raw Replayable: whatever JSON-B reads back
    }
}
