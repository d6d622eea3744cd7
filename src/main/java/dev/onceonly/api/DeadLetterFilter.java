package dev.onceonly.api;

import java.time.Duration;
import java.time.Instant;
import java.util.Locale;

/**
 * Which dead letters an operation applies to; a {@code null} component matches any.
 *
 * @param outcome        the outcome, exactly ({@code FAILED}, {@code CONFLICT}, {@code REJECTED}), any case
 * @param reasonContains a piece of the reason, any case
 * @param consumer       the consumer, exactly
 * @param olderThan      dead-lettered longer ago than this; a dead letter whose time is unknown matches no age
 */
public record DeadLetterFilter(String outcome, String reasonContains, String consumer, Duration olderThan) {

    /** Every dead letter. */
    public static final DeadLetterFilter ALL = new DeadLetterFilter(null, null, null, null);

    /**
     * @param letter a dead letter
     * @param now    what "now" is, for {@link #olderThan}
     * @return whether {@code letter} matches every component set
     */
    public boolean matches(DeadLetter letter, Instant now) {
        return (outcome == null || outcome.equalsIgnoreCase(letter.outcome()))
                && (reasonContains == null
                    || letter.reason().toLowerCase(Locale.ROOT).contains(reasonContains.toLowerCase(Locale.ROOT)))
                && (consumer == null || consumer.equals(letter.consumer()))
                && (olderThan == null
                    || letter.deadLetteredAt() != null && letter.deadLetteredAt().isBefore(now.minus(olderThan)));
    }
}
