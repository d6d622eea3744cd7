package dev.onceonly.internal.rabbitmq;

import dev.onceonly.api.Outcome;
import dev.onceonly.api.ReplayResult;
import dev.onceonly.internal.support.LogId;

import java.util.Optional;

/**
 * The guard's decision on a replay of a dead letter, as the connector settles it: one log line, and
 * the decision for the replay that waits for it ({@link ReplayHeaders}). BUSY and RETRY decide nothing
 * yet (the replay comes back).
 */
final class ReplayReport {

    private ReplayReport() {
    }

    /** {@return the decision on the replay of {@code replayOf}, logged; empty when the copy comes back undecided} */
    static Optional<ReplayResult> settled(String replayOf, String channel, Disposition d) {
        ReplayResult.Status status = switch (d.action()) {
            case ACK -> d.outcome() == Outcome.DUPLICATE ? ReplayResult.Status.ALREADY_PROCESSED : ReplayResult.Status.PROCESSED;
            case REQUEUE_LATER -> null;
            case RETRY_LATER -> ReplayResult.Status.FAILED;
            case DEAD_LETTER -> d.outcome() == Outcome.FAILED ? ReplayResult.Status.FAILED : ReplayResult.Status.REFUSED;
        };
        if (status == null) {
            return Optional.empty();
        }
        String detail = switch (status) {
            case ALREADY_PROCESSED -> "the key was processed already: acknowledged as a duplicate, the handler not run";
            case PROCESSED -> "processed";
            case REFUSED -> d.outcome() + ": " + d.loggedReason() + "; dead-lettered again";
            default -> d.loggedReason() + (d.action() == Disposition.Action.DEAD_LETTER ? "; dead-lettered again" : "; tried again");
        };
        LogId.ONCE0803I.log(replayOf, channel, d.consumer() != null ? d.consumer() : channel,
                d.keyDigest().isEmpty() ? "-" : d.keyDigest(), status, detail);
        return Optional.of(new ReplayResult(replayOf, status, detail));
    }
}
