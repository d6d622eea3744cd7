package dev.onceonly.internal.deadletter;

import dev.onceonly.api.DeadLetterQueue;
import dev.onceonly.api.DeadLetterQueues;

import java.time.Clock;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * {@link DeadLetterQueues} over the connector's incoming channels, found when asked: channels are
 * created while the application deploys, after this may have been made.
 */
public final class DeadLetterChannels implements DeadLetterQueues {

    private final Supplier<List<DeadLetterAccess>> channels;
    private final Clock clock;

    /**
     * @param channels the dead-letter queue of each incoming channel (one per configured channel)
     * @param clock    what "now" is
     */
    public DeadLetterChannels(Supplier<List<DeadLetterAccess>> channels, Clock clock) {
        this.channels = channels;
        this.clock = clock;
    }

    private Map<String, DeadLetterAccess> byName() {
        Map<String, DeadLetterAccess> byName = new TreeMap<>();
        channels.get().forEach(a -> byName.putIfAbsent(a.channel(), a));
        return byName;
    }

    @Override
    public List<String> channels() {
        return List.copyOf(byName().keySet());
    }

    @Override
    public DeadLetterQueue channel(String channel) {
        Map<String, DeadLetterAccess> byName = byName();
        DeadLetterAccess access = byName.get(channel);
        if (access == null) {
            throw new IllegalArgumentException("no incoming channel '" + channel + "' of the RabbitMQ connector; there are "
                    + byName.keySet());
        }
        return new DeadLetterOperations(access, clock);
    }

    @Override
    public Optional<Instant> oldest() {
        Instant oldest = null;
        for (DeadLetterAccess access : byName().values()) {
            // Alone: a dead letter another read held would be missing from a plain scan, and its
            // key's row would go (issue 46).
            try (DeadLetterAccess.Scan scan = access.scanAlone()) {
                for (DeadLetterAccess.Held h = scan.next(); h != null; h = scan.next()) {
                    // An unverified letter's time is anyone's to write (0 would stop the purge for
                    // good): it holds nothing back, and is replayed only as a new message.
                    Instant at = h.letter().verified() ? h.letter().deadLetteredAt() : null;
                    if (at != null && (oldest == null || at.isBefore(oldest))) {
                        oldest = at;
                    }
                }
            }
        }
        return Optional.ofNullable(oldest);
    }
}
