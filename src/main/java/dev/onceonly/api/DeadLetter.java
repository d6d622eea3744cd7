package dev.onceonly.api;

import java.time.Instant;

/**
 * One message in a dead-letter queue as an operator sees it: why it is there and what identifies
 * it. Never its body (only {@link DeadLetterQueue#body} gives that, when asked) nor its key (only the
 * digest the log lines show).
 *
 * @param id             identifies it in its queue: the id the connector gave it when it dead-lettered
 *                       it, or, for a message it did not dead-letter itself (the broker's own
 *                       dead-lettering, an earlier version), {@code sha256:} and the first 16 hex
 *                       digits of its body's digest
 * @param channel        the channel whose dead-letter queue holds it
 * @param outcome        the guard's outcome ({@code FAILED}, {@code CONFLICT}, {@code REJECTED}); empty when unknown
 * @param reason         why, in words; empty when unknown
 * @param attempts       attempts made before it was dead-lettered; 0 when unknown
 * @param consumer       the guard's consumer, or the channel for a consumer without the guard; empty when unknown
 * @param deadLetteredAt when it was dead-lettered, as its headers say (believed only when {@code verified}); {@code
 * null} when unknown
 * @param keyDigest      the digest of its key as the log lines show it; empty when unknown
 * @param bodySha256     the SHA-256 of its body, in hex
 * @param bodyBytes      the size of its body
 * @param replays        how often it was replayed before it came back here
 * @param exchange       the exchange it was first published to, as its headers say: a replay keys as
 *                       published there (it is sent to the channel's own queue only); {@code null} when unknown
 * @param routingKey     the routing key it was first published with, as its headers say; {@code null} when unknown
 * @param verified       whether the connector's signature vouches for its dead-letter headers (made
 *                       with the channel's copy-signing key): false for a letter planted on the
 *                       queue, altered, dead-lettered by the broker itself or by a version before
 *                       signatures. The ledger purge holds nothing back for an unverified letter,
 *                       and only {@link DeadLetterQueue#replayUnverified} replays it
 */
public record DeadLetter(String id, String channel, String outcome, String reason, int attempts, String consumer,
                         Instant deadLetteredAt, String keyDigest, String bodySha256, int bodyBytes, int replays,
                         String exchange, String routingKey, boolean verified) {

    /** {@return whether {@link DeadLetterQueue#replay} sends it back as the original: it is verified} */
    public boolean replayable() {
        return verified;
    }
}
