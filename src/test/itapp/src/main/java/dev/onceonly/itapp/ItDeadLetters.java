package dev.onceonly.itapp;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.DeadLetterFilter;
import dev.onceonly.api.DeadLetterQueues;
import dev.onceonly.api.ReplayResult;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

import java.time.Duration;

/**
 * The dead-letter operations as the tests drive them, through the library's Java API
 * ({@link DeadLetterQueues}), open like the rest of this application's read-outs. (The library's
 * HTTP resource, mounted under a role, is {@link ItDeadLetterOps}.)
 */
@Path("/it/dead-letters")
@Produces(MediaType.APPLICATION_JSON)
public class ItDeadLetters {

    @Inject
    DeadLetterQueues queues;

    @Inject
    ReplayConsumers replayConsumers;

    /** The dead letters of a channel from one consumer: id, outcome, reason, replays, and when, as epoch millis (0: unknown). */
    @GET
    @Path("/{channel}")
    public JsonObject list(@PathParam("channel") String channel, @QueryParam("consumer") String consumer) {
        JsonArrayBuilder a = Json.createArrayBuilder();
        for (DeadLetter l : queues.channel(channel).list(new DeadLetterFilter(null, null, consumer, null), 0, 1000).letters()) {
            a.add(Json.createObjectBuilder().add("id", l.id()).add("outcome", l.outcome()).add("reason", l.reason())
                    .add("replays", l.replays()).add("bodySha256", l.bodySha256())
                    .add("at", l.deadLetteredAt() == null ? 0 : l.deadLetteredAt().toEpochMilli()));
        }
        return Json.createObjectBuilder().add("letters", a).build();
    }

    /** Replays one, waiting up to 20 s for the guard's decision. */
    @POST
    @Path("/{channel}/{id}/replay")
    public JsonObject replay(@PathParam("channel") String channel, @PathParam("id") String id) {
        ReplayResult r = queues.channel(channel).replay(id, Duration.ofSeconds(20));
        return Json.createObjectBuilder().add("id", r.id()).add("status", r.status().name()).add("detail", r.detail()).build();
    }

    /** Breaks or fixes the cause it-replay-fixed fails on. */
    @POST
    @Path("/broken")
    public JsonObject broken(@QueryParam("on") boolean on) {
        replayConsumers.broken(on);
        return Json.createObjectBuilder().add("broken", on).build();
    }
}
