package dev.onceonly.demo.inventory;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.sse.Sse;
import jakarta.ws.rs.sse.SseEventSink;

import static dev.onceonly.demo.DemoJson.JSON;

/** What the live page follows: the guard's decisions as they are made, and the last minutes second by second. */
@Path("/live")
@ApplicationScoped
public class LiveResource {

    @Inject
    LiveFeed feed;

    /**
     * The inventory consumer's decisions as Server-Sent Events named {@code decisions}, each a JSON
     * array of decisions (oldest first, numbered by {@code seq}); the first event holds the last
     * {@value LiveFeed#RECENT} made before the page connected.
     */
    @GET
    @Path("/decisions")
    @Produces(MediaType.SERVER_SENT_EVENTS)
    public void decisions(@Context SseEventSink sink, @Context Sse sse) {
        feed.subscribe(sink, sse);
    }

    /**
     * Per second (epoch second {@code t}), the last {@value LiveFeed#WINDOW_SECONDS} seconds after
     * {@code since}: messages per outcome, and consumer call and guard time p50/p99 in microseconds.
     */
    @GET
    @Path("/timeline")
    @Produces(MediaType.APPLICATION_JSON)
    public JsonObject timeline(@QueryParam("since") @DefaultValue("0") long since) {
        JsonArrayBuilder seconds = JSON.createArrayBuilder();
        feed.secondsAfter(since).forEach(s -> seconds.add(s.toJson()));
        return JSON.createObjectBuilder().add("seconds", seconds).build();
    }
}
