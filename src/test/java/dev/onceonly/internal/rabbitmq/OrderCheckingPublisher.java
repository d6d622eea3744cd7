package dev.onceonly.internal.rabbitmq;

import dev.onceonly.internal.outbox.OutboxPublisher;
import dev.onceonly.internal.outbox.OutboxRecord;
import dev.onceonly.testing.ScratchDatabase;

import java.sql.Connection;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * A broker stand-in for the relay's order tests, on a PostgreSQL outbox: each publish is answered as
 * scripted per message id (by default confirmed after {@code defaultDelayMs}), and checked against
 * the outbox's two promises at the moment it is made:
 * <ul>
 *   <li>its row is locked by a relay transaction (a {@code FOR UPDATE NOWAIT} from a connection of
 *       its own fails); a row whose lock is free is published by nobody holding it;</li>
 *   <li>every earlier row of its source is sent, parked, or confirmed by this broker already.</li>
 * </ul>
 * What broke either promise is in {@link #violations}.
 */
final class OrderCheckingPublisher implements OutboxPublisher {

    /** How one publish is answered. */
    sealed interface Answer {
    }

    /** Confirmed after {@code delayMs}. */
    record Confirm(long delayMs) implements Answer {
    }

    /** Refused at once, as an unroutable message. */
    record Refuse() implements Answer {
    }

    private final ScratchDatabase db;
    private final ScheduledExecutorService scheduler;
    private final long defaultDelayMs;
    private final Map<String, Deque<Answer>> scripts = new ConcurrentHashMap<>();
    private final Set<Long> confirmed = ConcurrentHashMap.newKeySet();
    private final List<String> published = new CopyOnWriteArrayList<>();
    private final List<String> violations = new CopyOnWriteArrayList<>();

    OrderCheckingPublisher(ScratchDatabase db, ScheduledExecutorService scheduler, long defaultDelayMs) {
        this.db = db;
        this.scheduler = scheduler;
        this.defaultDelayMs = defaultDelayMs;
    }

    /** The next publishes of {@code messageId} are answered so, in order; later ones as by default. */
    OrderCheckingPublisher script(String messageId, Answer... answers) {
        scripts.put(messageId, new ArrayDeque<>(List.of(answers)));
        return this;
    }

    /** {@return the message ids published, in the order the publishes were made} */
    List<String> published() {
        return List.copyOf(published);
    }

    /** {@return what broke the order or the lock promise} */
    List<String> violations() {
        return List.copyOf(violations);
    }

    @Override
    public CompletableFuture<Void> publish(OutboxRecord row) {
        check(row);
        published.add(row.messageId());
        Deque<Answer> script = scripts.get(row.messageId());
        Answer answer = script == null || script.isEmpty() ? new Confirm(defaultDelayMs) : script.poll();
        if (answer instanceof Refuse) {
            return CompletableFuture.failedFuture(new Refused("unroutable (scripted)"));
        }
        CompletableFuture<Void> confirm = new CompletableFuture<>();
        scheduler.schedule(() -> {
            confirmed.add(row.id());
            confirm.complete(null);
        }, ((Confirm) answer).delayMs(), TimeUnit.MILLISECONDS);
        return confirm;
    }

    private void check(OutboxRecord row) {
        try (Connection c = db.connect()) {
            c.setAutoCommit(false);
            try (PreparedStatement s = c.prepareStatement("select id from onceonly_outbox where id = ? for update nowait")) {
                s.setLong(1, row.id());
                s.executeQuery().close();
                violations.add(row.messageId() + " published while no relay held its lock");
            } catch (SQLException e) {
                if (!"55P03".equals(e.getSQLState())) { // lock_not_available: a relay holds it, as it must
                    violations.add("cannot check the lock of " + row.messageId() + ": " + e);
                }
            } finally {
                c.rollback();
            }
            List<Long> earlierPending = new ArrayList<>();
            try (PreparedStatement s = c.prepareStatement("select id from onceonly_outbox where source_key = ? and id < ?"
                    + " and state = 0")) {
                s.setString(1, row.source());
                s.setLong(2, row.id());
                try (ResultSet r = s.executeQuery()) {
                    while (r.next()) {
                        earlierPending.add(r.getLong(1));
                    }
                }
            }
            c.rollback();
            earlierPending.removeIf(confirmed::contains);
            if (!earlierPending.isEmpty()) {
                violations.add(row.messageId() + " published while earlier rows " + earlierPending + " of its source were pending");
            }
        } catch (SQLException e) {
            violations.add("cannot check " + row.messageId() + ": " + e);
        }
    }

    @Override
    public boolean connected() {
        return true;
    }
}
