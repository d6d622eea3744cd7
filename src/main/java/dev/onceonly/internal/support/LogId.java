package dev.onceonly.internal.support;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Every line OnceOnly logs, with a stable ID (listed in docs/troubleshooting.md). Lines carry context (consumer,
 * key digest, store, elapsed time) and never a message body or a secret. The last letter of the
 * ID is the severity: I(nfo), W(arning), E(rror).
 */
public enum LogId {
    /** Started: store and consumers. */
    ONCE0001I(Level.INFO, "OnceOnly started: store=%s, consumers=%s"),
    /** The in-memory store is in use (development only). */
    ONCE0002W(Level.WARNING, "The in-memory claim store is in use (max %s entries). It is for development and tests only: "
            + "claims are lost on restart and not shared between instances. Set onceonly.store=redis in production."),
    /** Redis {@code maxmemory-policy} may evict claims. */
    ONCE0003W(Level.WARNING, "Redis maxmemory-policy is '%s': Redis may evict claims and let duplicates through. "
            + "Use maxmemory-policy noeviction: every claim has a TTL, so volatile-* policies evict claims too."),
    /** Resolved settings of a consumer. */
    ONCE0004I(Level.INFO, "Consumer '%s': key=%s, lease=%s, retention=%s, store-failure=%s, ledger=%s, %s"),
    /** Guard disabled by {@code onceonly.enabled=false}. */
    ONCE0005W(Level.WARNING, "onceonly.enabled=false: guarded methods run WITHOUT duplicate protection."),
    /** Connected to Redis (mode, nodes; never credentials). */
    ONCE0006I(Level.INFO, "Connected to Redis (%s, %s)"),
    /** Redis eviction policy could not be read. */
    ONCE0007W(Level.WARNING, "Could not read Redis maxmemory-policy (%s); make sure it does not evict keys."),
    /** Expired claims purged from the database store. */
    ONCE0009I(Level.INFO, "Database claim store purge deleted %d expired claims"),
    /** The application suspended the claim store ({@code ClaimStoreControl}). */
    ONCE0011W(Level.WARNING, "Claim store '%s' suspended by the application: new messages are guarded as if it were "
            + "unreachable (each consumer's store-failure policy) until it is resumed"),
    /** The application resumed the claim store. */
    ONCE0012I(Level.INFO, "Claim store '%s' resumed: new messages are claimed again"),
    /** The database store's purge failed. */
    ONCE0010W(Level.WARNING, "Database claim store purge failed: %s; next attempt at the next interval"),
    /** Stopping with guarded messages still unfinished after {@code onceonly.shutdown-timeout}. */
    ONCE0008W(Level.WARNING, "Stopping with %d guarded message(s) still unfinished after waiting %s "
            + "(onceonly.shutdown-timeout): their claims lapse after the lease and they are processed again"),
    /** Claim store unavailable when claiming; the store-failure policy was applied. */
    ONCE0101W(Level.WARNING, "Claim store '%s' unavailable for consumer '%s' (key %s): %s; policy %s applied, outcome %s"),
    /** Claim store failed to complete or release; the claim expires after its lease. */
    ONCE0102W(Level.WARNING, "Claim store '%s' failed to %s the claim of consumer '%s' (key %s): %s; "
            + "the claim expires after its lease (%s)"),
    /** The claim was no longer held at completion (lease expired while the handler ran). */
    ONCE0103W(Level.WARNING, "Claim of consumer '%s' (key %s) was no longer held at %s after %d ms: the lease (%s) expired "
            + "while the handler ran (raise the lease for this consumer), or the claim store lost the key"),
    /**
     * The claim was taken over (or could not be confirmed) just before the commit: rolled back, the
     * message comes again.
     */
    ONCE0104W(Level.WARNING, "Transaction of consumer '%s' (key %s) rolled back after %d ms: %s. The message comes "
            + "again; raise the lease if handlers run longer than it"),
    /** The claim was gone just before the commit and nobody held it: taken again, committed. */
    ONCE0105I(Level.INFO, "Claim of consumer '%s' (key %s) was gone before commit after %d ms and nobody else held it; "
            + "taken again and committed"),
    /** A committed message could not be marked done (claim store failed); retried by the sweep. */
    ONCE0106W(Level.WARNING, "Could not mark the key of consumer '%s' (key %s) done after its commit: %s; retrying every %d ms "
            + "for up to %s"),
    /** Gave up marking a committed message done (10 leases); a later copy is stopped only by the ledger. */
    ONCE0107W(Level.WARNING, "Gave up marking the key of consumer '%s' (key %s) done after %s: a copy of this message "
            + "published later is stopped only by the ledger (without it, processed again)"),
    /** A committed message was marked done once the claim store answered again. */
    ONCE0108I(Level.INFO, "Marked the key of consumer '%s' (key %s) done %d ms after the message started, once the claim store answered again"),
    /**
     * Fewer replicas than {@code onceonly.redis.wait-replicas} acknowledged completions within
     * {@code wait-timeout}: a fail-over may lose those keys (the ledger still stops a copy). At most
     * one line a minute, with the count since the last.
     */
    ONCE0109W(Level.WARNING, "Redis: %d completion(s) acknowledged by fewer than %d replica(s) within %d ms "
            + "(onceonly.redis.wait-replicas, wait-timeout) since the last report, lately %s: a fail-over now may lose "
            + "those keys, and a copy of such a message is then stopped only by the ledger"),
    /**
     * Redis refused {@code SET NX PX GET} (a server before 7.0): claims go through the Lua script from
     * now on, for the store's life. Logged once.
     */
    ONCE0110I(Level.INFO, "Redis refused SET with NX and GET (a server before 7.0): claims are sent as a Lua script "
            + "(EVALSHA) from now on; onceonly.redis.native-claim=off skips the first attempt"),
    /** Lease lost during renewal: raise the lease. */
    ONCE0201W(Level.WARNING, "Lease lost for consumer '%s' (key %s) after %d ms: another holder may process the same message; "
            + "raise the lease (now %s)"),
    /** Lease renewal failed (store error); retried. */
    ONCE0202W(Level.WARNING, "Lease renewal failed for consumer '%s' (key %s): %s; retrying in %d ms"),
    /** {@code CONFLICT}: same key, different body. */
    ONCE0301W(Level.WARNING, "CONFLICT for consumer '%s' (key %s, found by %s): this key was processed before with a different body"),
    /** {@code REJECTED}: no key could be derived. */
    ONCE0302W(Level.WARNING, "REJECTED for consumer '%s': %s"),
    /** Handler failed; claim released for a retry. */
    ONCE0303I(Level.INFO, "Handler of consumer '%s' failed (key %s, %s); claim released for a retry"),
    /** Handler failed with an exception not worth retrying (no-retry-for); claim released, reported as such to the connector. */
    ONCE0304I(Level.INFO, "Handler of consumer '%s' failed (key %s), %s; claim released, reported as not worth retrying"),
    /** A guarded {@code @Incoming} call found no delivery posted by the connector for its payload (once per method). */
    ONCE0305W(Level.WARNING, "Guarded @Incoming method %s received a payload no onceonly-rabbitmq delivery was posted for: "
            + "it is guarded on %s, and its refusals are thrown to the messaging runtime. The payload was copied or converted "
            + "on its way to the method, or the channel uses another connector. Logged once per method"),
    /** Incoming channel consuming: queue, broker, prefetch, attempts, retry backoff, dead-letter exchange. */
    ONCE0501I(Level.INFO, "RabbitMQ channel '%s' consuming queue '%s' on %s: prefetch %d, max-attempts %d, "
            + "retry-delay %s (failures: x%s per attempt up to %s, held by the broker above %s), dead-letter exchange '%s'"),
    /** Cannot connect or declare the topology; retried. */
    ONCE0502W(Level.WARNING, "RabbitMQ channel '%s' cannot connect to %s or set up its topology (%s); retrying in %s"),
    /** Connection lost; amqp-client recovers it, unacked deliveries go back to the queue. */
    ONCE0503W(Level.WARNING, "RabbitMQ connection '%s' to %s lost (%s); recovering. Unacked deliveries go back to the queue"),
    /** Connection recovered. */
    ONCE0504I(Level.INFO, "RabbitMQ connection '%s' to %s recovered"),
    /** Message dead-lettered: consumer, key digest, body hash, outcome, attempts. */
    ONCE0505W(Level.WARNING, "Dead-lettered a message of channel '%s' (consumer '%s', key %s, body sha256 %s): outcome %s after "
            + "%d attempt(s), to exchange '%s': %s"),
    /** A dead-letter or retry publish failed; the message was requeued instead. */
    ONCE0506W(Level.WARNING, "Could not %s a message of channel '%s' (body sha256 %s): %s; %s after %s"),
    /** Incoming channel stopped: given back unprocessed (requeued, or copied where a requeue counts), finished while draining, requeued at the drain timeout. */
    ONCE0507I(Level.INFO, "RabbitMQ channel '%s' stopped: %d delivery(ies) given back unprocessed, %d finished while draining, "
            + "%d requeued at the drain timeout"),
    /** Outgoing channel publishing with confirms. */
    ONCE0508I(Level.INFO, "RabbitMQ outgoing channel '%s' publishing to exchange '%s' on %s with publisher confirms"),
    /** The broker cancelled a consumer (queue deleted?). */
    ONCE0509W(Level.WARNING, "RabbitMQ channel '%s': the broker cancelled consumer '%s' (queue '%s' deleted?)"),
    /** Outgoing channel stopped with unconfirmed publishes. */
    ONCE0510W(Level.WARNING, "RabbitMQ outgoing channel '%s' stopped with %d publish(es) still unconfirmed after %s"),
    /** A quorum queue exists with other arguments (no delivery limit or dead-letter exchange declared). */
    ONCE0511W(Level.WARNING, "RabbitMQ channel '%s': quorum queue '%s' exists with other arguments; it is used as it is. "
            + "Without x-delivery-limit %d and x-dead-letter-exchange '%s' the broker may drop a message that keeps "
            + "coming back (RabbitMQ 4: after 20 returns): set them with a policy, or delete the queue to let it be declared"),
    /**
     * An incoming channel is not consuming (the broker closed its AMQP channel or cancelled it, or a
     * connection recovery did not restore its consumer); consuming again after {@code network-recovery-interval}.
     */
    ONCE0512W(Level.WARNING, "RabbitMQ channel '%s' is not consuming: %s; consuming again in %s"),
    /** The incoming channel consumes again. */
    ONCE0513I(Level.INFO, "RabbitMQ channel '%s' consumes queue '%s' again"),
    /**
     * A queue configured as classic counts redeliveries (it is a quorum queue): treated as one; set {@code
     * queue.type=quorum}.
     */
    ONCE0514W(Level.WARNING, "RabbitMQ channel '%s': queue '%s' counts redeliveries (x-delivery-count) but is configured "
            + "as classic; treating it as a quorum queue. Set queue.type=quorum"),
    /**
     * A queue exists with other arguments than the channel configures (the broker refused the
     * declaration); it is used as it is.
     */
    ONCE0515W(Level.WARNING, "RabbitMQ channel '%s': queue '%s' exists with other arguments than configured %s (%s); "
            + "it is used as it is: set them with a policy, or delete the queue to let it be declared"),
    /**
     * A handler failed and the delivery is tried again after its backoff; one line per failed attempt,
     * the exception's class only (its message may quote the body). The attempt that ends in the
     * dead-letter exchange is reported by {@link #ONCE0505W} instead, with the stack trace.
     */
    ONCE0516W(Level.WARNING, "Handler of consumer '%s' failed on attempt %d of %d (channel '%s', key %s, body sha256 %s): %s; "
            + "next attempt in %s"),
    /**
     * A delay queue could not be declared (or, with {@code declare=false}, found): failed deliveries
     * are held by the consumer for their backoff instead; tried again after a while.
     */
    ONCE0520W(Level.WARNING, "RabbitMQ channel '%s': delay queue '%s' could not be declared or found (%s); failed "
            + "deliveries are held unacked for their retry delay instead, keeping their prefetch slot. Tried again in %s"),
    /**
     * A delay queue an earlier version declared with {@code x-expires}, found empty, was replaced by one that never
     * expires.
     */
    ONCE0535I(Level.INFO, "RabbitMQ channel '%s': delay queue '%s', declared by an earlier version with an expiry, "
            + "was empty and is replaced by one without: a delay queue holding retry copies is never deleted by "
            + "expiry"),
    /**
     * A delay queue an earlier version declared with {@code x-expires} still holds copies: used as it
     * is (its lease renewed), replaced once empty.
     */
    ONCE0536W(Level.WARNING, "RabbitMQ channel '%s': delay queue '%s' was declared by an earlier version with an "
            + "expiry and still holds retry copies: it is used as it is and replaced once empty (looked at again in "
            + "%s). Until then it is deleted, with its copies, if nobody declares it for its delay plus 10 minutes"),
    /**
     * A quorum delay queue an earlier version declared with {@code x-expires}: used as it is (its
     * lease renewed); RabbitMQ cannot delete it only if empty, so an operator deletes it when empty.
     */
    ONCE0537W(Level.WARNING, "RabbitMQ channel '%s': quorum delay queue '%s' was declared by an earlier version "
            + "with an expiry: it is used as it is, and deleted with the retry copies it holds if nobody declares "
            + "it for its delay plus 10 minutes. Delete it when it is empty (bin/onceonly-topology, or let it "
            + "expire empty): it is then declared without an expiry"),
    /** Ledger in use: consumers, retention, purge schedule. */
    ONCE0401I(Level.INFO, "Ledger in use for consumers %s: retention %s, purge every %s in batches of %d"),
    /** Unique violation on the ledger insert, with SQLState, vendor code and the verifier's decision. */
    ONCE0402I(Level.INFO, "Ledger of consumer '%s' already holds key %s (unique violation: %s); the verifier decided %s"),
    /** Ledger purge deleted rows. */
    ONCE0403I(Level.INFO, "Ledger purge deleted %d rows processed before %s"),
    /** Ledger purge failed; retried at the next interval. */
    ONCE0404W(Level.WARNING, "Ledger purge failed: %s; next attempt in %s"),
    /** Reporting a transaction's outcome to the guard failed. */
    ONCE0405W(Level.WARNING, "Asking the guard before a commit, or telling it the outcome, failed: %s"),
    /** Ledger DDL applied at startup ({@code onceonly.ledger.create-schema=true}). */
    ONCE0406I(Level.INFO, "Table checked or created: %s (onceonly.ledger.create-schema=true)"),
    /** A consumer keeps the results of its calls for duplicates. */
    ONCE0901I(Level.INFO, "Consumer '%s' keeps its results in %s: up to %d bytes of JSON each, given to duplicates for %s"),
    /** A result was not stored (too large, or not writable as JSON); the call succeeded. */
    ONCE0902W(Level.WARNING, "Result of consumer '%s' (key %s) not stored: %s. The call succeeded; its duplicates get no result"),
    /** Writing a result to a store that is not transactional failed; the key is marked done without it. */
    ONCE0903W(Level.WARNING, "Result of consumer '%s' (key %s) could not be stored in %s (%s); the key is marked done without "
            + "it, so its duplicates get no result"),
    /** A duplicate's stored result could not be read; it gets none. */
    ONCE0904W(Level.WARNING, "Stored result of consumer '%s' (key %s) could not be read from %s (%s); the duplicate gets none"),
    /** The outbox is in use. */
    ONCE0601I(Level.INFO, "Outbox in use on %s: sweep every %s for rows older than %s, batches of %d gathered for %s, parked "
            + "after %d refusals, sent rows kept %s"),
    /** A relay round failed; its rows stay pending. */
    ONCE0602W(Level.WARNING, "Outbox relay (%s) did not finish: %s; its rows stay pending for the next sweep"),
    /** The broker refused a row (message id is the outbox's own, never the body). */
    ONCE0603W(Level.WARNING, "Outbox message %s was refused by the broker (%s), refusal %d of %d: %s"),
    /** Sent rows purged. */
    ONCE0604I(Level.INFO, "Outbox purge deleted %d sent rows"),
    /** A JMS listener's permanent refusal moved to the dead-letter queue. */
    ONCE0701W(Level.WARNING, "Moved a message of consumer '%s' (key %s) to the dead-letter queue: outcome %s on delivery %d, "
            + "to '%s': %s"),
    /** The move to the dead-letter queue failed: the message is rolled back instead. */
    ONCE0702W(Level.WARNING, "Could not move a message of consumer '%s' (key %s, outcome %s) to the dead-letter queue (%s): "
            + "rolled back instead; the provider's redelivery limit takes it aside"),
    /**
     * A guarded JMS listener's handler failed: the transaction is marked rollback-only and the
     * provider redelivers; one line per delivery, the stack trace with the first one this instance sees.
     */
    ONCE0704W(Level.WARNING, "Handler of consumer '%s' failed on delivery %d (key %s): %s; rolled back for the provider's redelivery"),
    /** Guarded JMS listeners found at startup, and what their refusals do. */
    ONCE0703I(Level.INFO, "Guarded JMS listeners %s: CONFLICT and REJECTED %s; BUSY and RETRY held %s, then rolled back for redelivery"),
    /** A dead letter sent back to its channel's own queue, confirmed, and removed from its dead-letter queue. */
    ONCE0801I(Level.INFO, "Replayed dead letter %s of channel '%s' (%s) to the channel's own queue, %s (replay %d); "
            + "the guard decides on it"),
    /** A dead letter removed for good by an operator. */
    ONCE0802W(Level.WARNING, "Discarded dead letter %s of channel '%s' (%s): removed for good"),
    /** The guard's decision on a replayed dead letter, as the connector settled it. */
    ONCE0803I(Level.INFO, "Replay of dead letter %s on channel '%s' (consumer '%s', key %s): %s, %s"),
    /** The ledger's purge keeps rows a dead letter may still need. */
    ONCE0804I(Level.INFO, "Ledger purge held back to rows before %s (instead of %s): a dead letter from %s waits in a "
            + "dead-letter queue, and a replay of it must still find its key's row"),
    /** The dead-letter queues could not be read alone for the purge: it skips this run. */
    ONCE0805W(Level.WARNING, "Ledger purge skipped: the dead-letter queues could not be read alone to keep the rows "
            + "their dead letters need (%s); next attempt in %s"),
    /** A replay's decision was not sent back: the letter stays, and shows the replay as published. */
    ONCE0806W(Level.WARNING, "The decision on replay of dead letter %s of channel '%s' could not be sent to the "
            + "replay (%s): the dead letter stays in its queue; replaying it again is safe"),
    /** A message on a replay's reply queue that the connector did not sign: planted, never believed. */
    ONCE0807W(Level.WARNING, "Ignored a decision on a replay received for dead-letter queue '%s' of channel '%s': not "
            + "signed by this application's connector");

    private static final Logger LOG = Logger.getLogger("dev.onceonly");

    private final Level level;
    private final String template;

    LogId(Level level, String template) {
        this.level = level;
        this.template = template;
    }

    /**
     * Logs this line if its level is enabled; formatting only happens then.
     *
     * @param args the values of the template's {@code %} placeholders, in order
     */
    public void log(Object... args) {
        if (LOG.isLoggable(level)) {
            LOG.log(level, name() + ": " + String.format(template, args));
        }
    }

    /**
     * Logs this line with {@code thrown}'s stack trace if its level is enabled: for the one line of
     * a message that carries its trace.
     *
     * @param thrown the exception whose stack trace follows the line
     * @param args   the values of the template's {@code %} placeholders, in order
     */
    public void logWithTrace(Throwable thrown, Object... args) {
        if (LOG.isLoggable(level)) {
            LOG.log(level, name() + ": " + String.format(template, args), thrown);
        }
    }

    /**
     * Formats this line without logging it (for exception messages and tests).
     *
     * @param args the values of the template's {@code %} placeholders, in order
     * @return the ID, a colon and the formatted line
     */
    public String format(Object... args) {
        return name() + ": " + String.format(template, args);
    }
}
