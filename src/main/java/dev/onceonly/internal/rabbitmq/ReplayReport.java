package dev.onceonly.internal.rabbitmq;

import dev.onceonly.api.Outcome;
import dev.onceonly.api.ReplayResult;
import dev.onceonly.internal.deadletter.ReplayWatch;
import dev.onceonly.internal.support.LogId;

/**
 * The guard's decision on a replay of a dead letter, as the connector settles it: one log line, and
 * the decision handed to a replay on this instance that waits for it. BUSY and RETRY decide nothing
 * yet (the replay comes back).
 */
final class ReplayReport {

    private ReplayReport() {
    }

    static void settled(String replayOf, String channel, Disposition d, ReplayWatch replays) {
        ReplayResult.Status status = switch (d.action()) {
            case ACK -> d.outcome() == Outcome.DUPLICATE ? ReplayResult.Status.ALREADY_PROCESSED : ReplayResult.Status.PROCESSED;
            case REQUEUE_LATER -> null;
            case RETRY_LATER -> ReplayResult.Status.FAILED;
            case DEAD_LETTER -> d.outcome() == Outcome.FAILED ? ReplayResult.Status.FAILED : ReplayResult.Status.REFUSED;
        };
        if (status == null) {
            return;
        }
        String detail = switch (status) {
            case ALREADY_PROCESSED -> "the key was processed already: acknowledged as a duplicate, the handler not run";
            case PROCESSED -> "processed";
            case REFUSED -> d.outcome() + ": " + d.loggedReason() + "; dead-lettered again";
            default -> d.loggedReason() + (d.action() == Disposition.Action.DEAD_LETTER ? "; dead-lettered again" : "; tried again");
        };
        LogId.ONCE0803I.log(replayOf, channel, d.consumer() != null ? d.consumer() : channel,
                d.keyDigest().isEmpty() ? "-" : d.keyDigest(), status, detail);
        replays.settled(replayOf, status, detail);
    }
}
