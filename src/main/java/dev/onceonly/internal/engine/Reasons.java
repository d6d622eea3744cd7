package dev.onceonly.internal.engine;

import dev.onceonly.api.Outcome;
import dev.onceonly.spi.Ledger.LedgerDecision;

/** What a refusal is called and why, in the words the guard reports: never a value of the message. */
final class Reasons {

    private Reasons() {
    }

    /** {@return the outcome of a message the ledger did not insert (other than a DUPLICATE)} */
    static Outcome ledgerOutcome(LedgerDecision decision) {
        return decision == LedgerDecision.CONFLICT ? Outcome.CONFLICT : Outcome.RETRY;
    }

    /** {@return why the ledger did not insert the message} */
    static String ledgerReason(ConsumerSettings s, LedgerDecision decision) {
        return switch (decision) {
            case CONFLICT -> conflict(s);
            case DUPLICATE -> "processed before (found by the ledger)";
            default -> "ledger row of a concurrent holder was not committed";
        };
    }

    /** Why a copy is a CONFLICT, naming what was compared (the consumer's pointers, never a value). */
    static String conflict(ConsumerSettings s) {
        return s.conflictFields().isEmpty() ? "key was processed before with a different body"
                : "key was processed before with other values at " + String.join(",", s.conflictFields());
    }
}
