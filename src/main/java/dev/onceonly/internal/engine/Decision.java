package dev.onceonly.internal.engine;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Outcome;

import java.util.Objects;

/**
 * What {@link GuardEngine#guard} decided for one call: the one value the guard's caller translates
 * into its own terms (the interceptor into a return or a throw, a connector's delivery into a
 * broker action). Nothing else carries the decision out of the engine; the {@code GuardListener}s
 * are told the same event.
 *
 * <p>A decision is <em>final</em> once the transaction the call ran in has completed. A call that
 * joined a transaction of its caller's own (a JMS listener's, a guarded bean called inside one)
 * returns before that transaction completes: its decision is {@linkplain #pending() pending}, its
 * {@link #event()} says what was known at return (the handler returned, threw, or the ledger found
 * the key), and the final event reaches the listeners when the caller's transaction completes.
 *
 * @param <T> what the guarded handler returns
 */
public final class Decision<T> {

    private final GuardEvent event;
    private final boolean pending;
    private final T result;
    /** An {@link Exception} or an {@link Error}: the guard catches nothing else. */
    private final Throwable thrown;

    private Decision(GuardEvent event, boolean pending, T result, Throwable thrown) {
        this.event = Objects.requireNonNull(event, "event");
        this.pending = pending;
        this.result = result;
        this.thrown = thrown;
    }

    /** A final decision; {@code thrown} is what the call throws, {@code null} when it returns {@code result}. */
    static <T> Decision<T> of(GuardEvent event, T result, Throwable thrown) {
        return new Decision<>(event, false, result, thrown);
    }

    /** A decision made before the caller's transaction completed; {@code known} is what was known at return. */
    static <T> Decision<T> pending(GuardEvent known, T result, Throwable thrown) {
        return new Decision<>(known, true, result, thrown);
    }

    /** {@return the decision as the listeners are told it (for a pending one: as known at return)} */
    public GuardEvent event() {
        return event;
    }

    /** {@return the outcome; shorthand for {@code event().outcome()}} */
    public Outcome outcome() {
        return event.outcome();
    }

    /**
     * {@return whether the caller's transaction was still open when the guard returned: the outcome
     * stands only if it commits, and nobody but the caller may act on it yet}
     */
    public boolean pending() {
        return pending;
    }

    /**
     * {@return what the call throws: the handler's (or the commit's) exception for {@code FAILED},
     * or the {@link Error} it threw (a {@code StackOverflowError}, an {@code AssertionError}: a
     * failure like any other, decided and reported, not thrown through the guard); a refusal's
     * exception; {@code null} when it returns}
     */
    public Throwable failure() {
        return thrown;
    }

    /**
     * {@return whether the message was refused ({@code BUSY}, {@code RETRY}, {@code CONFLICT},
     * {@code REJECTED}), or, pending, the call cannot return normally because the ledger's refusal
     * spoiled the caller's transaction (a {@code DUPLICATE} among them)}
     */
    public boolean refused() {
        return pending ? thrown instanceof MessageRefusedException : event.outcome().isRefusal();
    }

    /**
     * {@return the refusal as the exception a caller that cannot be told otherwise receives}
     *
     * @throws IllegalStateException when the message was not {@linkplain #refused() refused}
     */
    public MessageRefusedException refusal() {
        if (!refused()) {
            throw new IllegalStateException("not refused: " + event.outcome());
        }
        return thrown instanceof MessageRefusedException r ? r
                : new MessageRefusedException(event.outcome(), event.consumer(), event.keyDigest(), event.reason(), thrown);
    }

    /**
     * The decision as a method call's result, the way a caller with no other channel gets it: the
     * handler's result for {@code PROCESSED}, {@code null} for a {@code DUPLICATE} skipped, and
     * otherwise a throw — the handler's (or the commit's) exception or error for {@code FAILED},
     * a {@link MessageRefusedException} for a refusal.
     *
     * @return the handler's result, or {@code null} for a duplicate
     * @throws Exception as above
     */
    public T resultOrThrow() throws Exception {
        if (thrown != null) {
            throw rethrown(thrown);
        }
        return result;
    }

    /**
     * For a caller that throws a decision's {@link #failure()} from a method that declares
     * {@code Exception}: throws it when it is an {@link Error}.
     *
     * @param failure an exception or an error, as {@link #failure()} returns
     * @return {@code failure}, to be thrown, when it is an exception
     */
    public static Exception rethrown(Throwable failure) {
        if (failure instanceof Error e) {
            throw e;
        }
        return (Exception) failure;
    }

    @Override
    public String toString() {
        return (pending ? "pending " : "") + event.outcome() + " (" + event.layer() + ")";
    }
}
