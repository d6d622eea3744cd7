package dev.onceonly.support;

import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Every line OnceOnly logs, with a stable ID (listed in README). Lines carry context (consumer,
 * key digest, store, elapsed time) and never a message body or a secret. The last letter of the
 * ID is the severity: I(nfo), W(arning), E(rror).
 */
public enum LogId {
    ONCE0001I(Level.INFO, "OnceOnly started: store=%s, consumers=%s"),
    ONCE0002W(Level.WARNING, "The in-memory claim store is in use (max %s entries). It is for development and tests only: "
            + "claims are lost on restart and not shared between instances. Set onceonly.store=redis in production."),
    ONCE0003W(Level.WARNING, "Redis maxmemory-policy is '%s': Redis may evict claims and let duplicates through. "
            + "Use maxmemory-policy noeviction: every claim has a TTL, so volatile-* policies evict claims too."),
    ONCE0004I(Level.INFO, "Consumer '%s': key=%s, lease=%s, retention=%s, store-failure=%s, ledger=%s"),
    ONCE0005W(Level.WARNING, "onceonly.enabled=false: guarded methods run WITHOUT duplicate protection."),
    ONCE0006I(Level.INFO, "Connected to Redis (%s, %s)"),
    ONCE0007W(Level.WARNING, "Could not read Redis maxmemory-policy (%s); make sure it does not evict keys."),
    ONCE0008W(Level.WARNING, "Stopping with %d guarded message(s) still unfinished after waiting %s "
            + "(onceonly.shutdown-timeout): their claims lapse after the lease and they are processed again"),
    ONCE0101W(Level.WARNING, "Claim store '%s' unavailable for consumer '%s' (key %s): %s; policy %s applied, outcome %s"),
    ONCE0102W(Level.WARNING, "Claim store '%s' failed to %s the claim of consumer '%s' (key %s): %s; "
            + "the claim expires after its lease (%s)"),
    ONCE0103W(Level.WARNING, "Claim of consumer '%s' (key %s) was no longer held at %s after %d ms: the lease (%s) expired "
            + "while the handler ran (raise the lease for this consumer), or the claim store lost the key"),
    ONCE0104W(Level.WARNING, "Transaction of consumer '%s' (key %s) rolled back after %d ms: %s. The message comes "
            + "again; raise the lease if handlers run longer than it"),
    ONCE0105I(Level.INFO, "Claim of consumer '%s' (key %s) was gone before commit after %d ms and nobody else held it; "
            + "taken again and committed"),
    ONCE0106W(Level.WARNING, "Could not mark the key of consumer '%s' (key %s) done after its commit: %s; retrying every %d ms "
            + "for up to %s"),
    ONCE0107W(Level.WARNING, "Gave up marking the key of consumer '%s' (key %s) done after %s: a copy of this message "
            + "published later is stopped only by the ledger (without it, processed again)"),
    ONCE0108I(Level.INFO, "Marked the key of consumer '%s' (key %s) done %d ms after the message started, once the claim store answered again"),
    ONCE0201W(Level.WARNING, "Lease lost for consumer '%s' (key %s) after %d ms: another holder may process the same message; "
            + "raise the lease (now %s)"),
    ONCE0202W(Level.WARNING, "Lease renewal failed for consumer '%s' (key %s): %s; retrying in %d ms"),
    ONCE0301W(Level.WARNING, "CONFLICT for consumer '%s' (key %s, found by %s): this key was processed before with a different body"),
    ONCE0302W(Level.WARNING, "REJECTED for consumer '%s': %s"),
    ONCE0303I(Level.INFO, "Handler of consumer '%s' failed (key %s, %s); claim released for a retry"),
    ONCE0501I(Level.INFO, "RabbitMQ channel '%s' consuming queue '%s' on %s: prefetch %d, max-attempts %d, "
            + "retry-delay %s, dead-letter exchange '%s'"),
    ONCE0502W(Level.WARNING, "RabbitMQ channel '%s' cannot connect to %s or set up its topology (%s); retrying in %s"),
    ONCE0503W(Level.WARNING, "RabbitMQ connection '%s' to %s lost (%s); recovering. Unacked deliveries go back to the queue"),
    ONCE0504I(Level.INFO, "RabbitMQ connection '%s' to %s recovered"),
    ONCE0505W(Level.WARNING, "Dead-lettered a message of channel '%s' (consumer '%s', key %s, body sha256 %s): outcome %s after "
            + "%d attempt(s), to exchange '%s': %s"),
    ONCE0506W(Level.WARNING, "Could not %s a message of channel '%s' (body sha256 %s): %s; it is requeued after %s instead"),
    ONCE0507I(Level.INFO, "RabbitMQ channel '%s' stopped: %d delivery(ies) requeued unprocessed, %d finished while draining, "
            + "%d requeued at the drain timeout"),
    ONCE0508I(Level.INFO, "RabbitMQ outgoing channel '%s' publishing to exchange '%s' on %s with publisher confirms"),
    ONCE0509W(Level.WARNING, "RabbitMQ channel '%s': the broker cancelled consumer '%s' (queue '%s' deleted?)"),
    ONCE0510W(Level.WARNING, "RabbitMQ outgoing channel '%s' stopped with %d publish(es) still unconfirmed after %s"),
    ONCE0511W(Level.WARNING, "RabbitMQ channel '%s': quorum queue '%s' exists with other arguments; it is used as it is. "
            + "Without x-delivery-limit %d and x-dead-letter-exchange '%s' the broker may drop a message that keeps "
            + "coming back (RabbitMQ 4: after 20 returns): set them with a policy, or delete the queue to let it be declared"),
    ONCE0512W(Level.WARNING, "RabbitMQ channel '%s' is not consuming: %s; consuming again in %s"),
    ONCE0513I(Level.INFO, "RabbitMQ channel '%s' consumes queue '%s' again"),
    ONCE0514W(Level.WARNING, "RabbitMQ channel '%s': queue '%s' counts redeliveries (x-delivery-count) but is configured "
            + "as classic; treating it as a quorum queue. Set queue.type=quorum"),
    ONCE0401I(Level.INFO, "Ledger in use for consumers %s: retention %s, purge every %s in batches of %d"),
    ONCE0402I(Level.INFO, "Ledger of consumer '%s' already holds key %s (unique violation: %s); the verifier decided %s"),
    ONCE0403I(Level.INFO, "Ledger purge deleted %d rows processed before %s"),
    ONCE0404W(Level.WARNING, "Ledger purge failed: %s; next attempt in %s"),
    ONCE0405W(Level.WARNING, "Asking the guard before a commit, or telling it the outcome, failed: %s"),
    ONCE0406I(Level.INFO, "Ledger table checked or created from %s (onceonly.ledger.create-schema=true)");

    private static final Logger LOG = Logger.getLogger("dev.onceonly");

    private final Level level;
    private final String template;

    LogId(Level level, String template) {
        this.level = level;
        this.template = template;
    }

    /** Logs this line if its level is enabled; formatting only happens then. */
    public void log(Object... args) {
        if (LOG.isLoggable(level)) {
            LOG.log(level, name() + ": " + String.format(template, args));
        }
    }

    /** Formats this line without logging it (for exception messages and tests). */
    public String format(Object... args) {
        return name() + ": " + String.format(template, args);
    }
}
