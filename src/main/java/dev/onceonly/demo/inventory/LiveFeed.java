package dev.onceonly.demo.inventory;

import dev.onceonly.api.GuardEvent;
import jakarta.annotation.PreDestroy;
import jakarta.annotation.Resource;
import jakarta.enterprise.concurrent.ManagedScheduledExecutorService;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.context.Initialized;
import jakarta.enterprise.event.Observes;
import jakarta.json.JsonArrayBuilder;
import jakarta.ws.rs.sse.OutboundSseEvent;
import jakarta.ws.rs.sse.Sse;
import jakarta.ws.rs.sse.SseBroadcaster;
import jakarta.ws.rs.sse.SseEventSink;

import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import static dev.onceonly.demo.DemoJson.JSON;

/**
 * What the live page shows over time, from OnceOnly's {@link GuardEvent}s for the inventory
 * consumer: the recent decisions, pushed to the page as Server-Sent Events, and the per-second
 * {@link Timeline} of outcomes and latencies.
 *
 * <p>The observer runs on the consumer's thread, inside its delivery, so it only records; a
 * scheduled task sends what is new to the browsers four times a second (at most the ring's
 * capacity each time, so a burst of thousands of messages costs the page a bounded amount), and
 * another closes the timeline's second once a second.
 */
@ApplicationScoped
public class LiveFeed {

    /** Decisions kept for a page that connects (and for the stream between two sends). */
    static final int RECENT = 100;
    /** The charts' window: five minutes. */
    static final int WINDOW_SECONDS = 300;
    private static final long SEND_EVERY_MILLIS = 250;

    private final RecentDecisions recent = new RecentDecisions(RECENT);
    private final Timeline timeline = new Timeline(WINDOW_SECONDS);

    @Resource(lookup = "java:comp/DefaultManagedScheduledExecutorService")
    ManagedScheduledExecutorService scheduler;

    private Sse sse;
    private SseBroadcaster broadcaster;
    /** The last decision sent; only the scheduled task touches it. */
    private long sent;
    private List<ScheduledFuture<?>> tasks = List.of();

    /** Starts with the application, not with the first page, so the charts' history begins at startup. */
    void atStartup(@Observes @Initialized(ApplicationScoped.class) Object ignored) {
        long untilNextSecond = 1000 - System.currentTimeMillis() % 1000;
        tasks = List.of(
                scheduler.scheduleAtFixedRate(this::closeSecond, untilNextSecond, 1000, TimeUnit.MILLISECONDS),
                scheduler.scheduleWithFixedDelay(this::sendNew, SEND_EVERY_MILLIS, SEND_EVERY_MILLIS, TimeUnit.MILLISECONDS));
    }

    @PreDestroy
    void stop() {
        tasks.forEach(t -> t.cancel(false));
        SseBroadcaster b = broadcaster();
        if (b != null) {
            b.close();
        }
    }

    void onGuardEvent(@Observes GuardEvent event) {
        if (!InventoryConsumer.countsAsInventory(event.consumer())) {
            return;
        }
        recent.add(System.currentTimeMillis(), event, AttemptTracker.current());
        timeline.outcome(event.outcome());
        timeline.guard(event.guardNanos());
    }

    /** A consumer call's whole time ({@link MeasuredInterceptor}). */
    void call(long nanos) {
        timeline.call(nanos);
    }

    List<Timeline.Second> secondsAfter(long epochSecond) {
        return timeline.after(epochSecond);
    }

    /** Sends a new page the decisions held so far, then everything new as it comes. */
    void subscribe(SseEventSink sink, Sse sse) {
        // Registered before the backlog is sent, so nothing falls between the two; the page drops
        // a decision it already has by its number.
        broadcaster(sse).register(sink);
        // Sent even when empty: the server sends the response's headers with its first event, and
        // until then the page's EventSource does not open (a fresh server's page stayed "connecting").
        sink.send(event(sse, recent.after(0)));
    }

    private void closeSecond() {
        // Scheduled at second boundaries: the second that just ended, whatever the timer's jitter.
        timeline.close((System.currentTimeMillis() - 500) / 1000);
    }

    private void sendNew() {
        List<RecentDecisions.Decision> fresh = recent.after(sent);
        if (fresh.isEmpty()) {
            return;
        }
        sent = fresh.get(fresh.size() - 1).seq();
        SseBroadcaster b = broadcaster();
        if (b != null) {
            b.broadcast(event(sse, fresh));
        }
    }

    private static OutboundSseEvent event(Sse sse, List<RecentDecisions.Decision> decisions) {
        JsonArrayBuilder a = JSON.createArrayBuilder();
        decisions.forEach(d -> a.add(d.toJson()));
        // Written as text: a JSON media type would have the JSON-B provider quote the string again.
        return sse.newEventBuilder().name("decisions").data(String.class, a.build().toString()).build();
    }

    private synchronized SseBroadcaster broadcaster(Sse from) {
        if (broadcaster == null) {
            sse = from;
            broadcaster = from.newBroadcaster();
        }
        return broadcaster;
    }

    private synchronized SseBroadcaster broadcaster() {
        return broadcaster;
    }
}
