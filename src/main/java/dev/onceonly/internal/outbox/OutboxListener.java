package dev.onceonly.internal.outbox;

import java.time.Duration;

/** Told what the outbox relay did (metrics). Implementations must be quick and must not throw. */
public interface OutboxListener {

    /** Listens to nothing. */
    OutboxListener NONE = new OutboxListener() {
    };

    /**
     * Rows were published and marked sent.
     *
     * @param rows       how many
     * @param sweep      whether the sweep sent them (else the fast path after their commit)
     * @param sinceWrite for each row, from its write to the broker's confirm
     */
    default void relayed(int rows, boolean sweep, Duration[] sinceWrite) {
    }

    /**
     * The broker refused a row.
     *
     * @param parked whether it is now parked
     */
    default void refused(boolean parked) {
    }

    /**
     * The sweep counted the table.
     *
     * @param counts pending and parked rows
     */
    default void counted(OutboxStore.Counts counts) {
    }
}
