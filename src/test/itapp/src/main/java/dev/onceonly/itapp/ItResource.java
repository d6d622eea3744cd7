package dev.onceonly.itapp;

import dev.onceonly.api.Outcome;
import dev.onceonly.rabbitmq.IncomingRabbitMetadata;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.core.MediaType;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/** Read-outs of the test consumers, and a publisher that goes through the outgoing channel. */
@Path("/it")
@Produces(MediaType.APPLICATION_JSON)
public class ItResource {

    @Inject
    ItRecorder recorder;

    @Inject
    PhaseCounter phases;

    @Inject
    ItConsumers consumers;

    @Inject
    BusyService busy;

    @Inject
    ItPublisher publisher;

    @GET
    @Path("/deliveries")
    public int deliveries(@QueryParam("consumer") String consumer, @QueryParam("key") String key) {
        return recorder.deliveries(consumer, key);
    }

    @GET
    @Path("/effects")
    public int effects(@QueryParam("consumer") String consumer, @QueryParam("key") String key) {
        return recorder.effects(consumer, key);
    }

    /** Effects of every key starting with {@code prefix}: {keys, total, maxPerKey, deliveries}. */
    @GET
    @Path("/summary")
    public JsonObject summary(@QueryParam("consumer") String consumer, @QueryParam("prefix") String prefix) {
        int[] s = recorder.effectSummary(consumer, prefix);
        return Json.createObjectBuilder().add("keys", s[0]).add("total", s[1]).add("maxPerKey", s[2])
                .add("deliveries", recorder.deliverySum(consumer, prefix))
                .add("withoutContext", recorder.withoutContext()).build();
    }

    @GET
    @Path("/outcomes/{consumer}")
    public JsonObject outcomes(@PathParam("consumer") String consumer) {
        JsonObjectBuilder b = Json.createObjectBuilder();
        for (Outcome o : Outcome.values()) {
            var n = recorder.outcomes(consumer).get(o);
            b.add(o.name(), n == null ? 0 : n.get());
        }
        // Batches of claims taken ahead for buffered deliveries (claim-ahead), as a listener bean counts them.
        b.add("claimAheadBatches", phases.count(consumer, "claim-ahead"));
        return b.build();
    }

    /** The most messages a batch consumer was called with at once. */
    @GET
    @Path("/batches/{consumer}")
    public int largestBatch(@PathParam("consumer") String consumer) {
        return recorder.largestBatch(consumer);
    }

    /** Publishes {@code count} messages through the outgoing channel; answers once all are confirmed. */
    @POST
    @Path("/publish/{run}/{count}")
    public JsonObject publish(@PathParam("run") String run, @PathParam("count") int count) throws Exception {
        return Json.createObjectBuilder().add("confirmed", publisher.publish(run, count)).build();
    }

    /** Checks every arrival of a run against what {@link ItPublisher#publish} sent. */
    @GET
    @Path("/arrivals/{run}")
    public JsonObject arrivals(@PathParam("run") String run, @QueryParam("count") int count) {
        int arrived = 0;
        List<String> mismatches = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            String id = run + "-" + i;
            IncomingRabbitMetadata m = consumers.arrival(id);
            if (m == null) {
                continue;
            }
            arrived++;
            String body = ItPublisher.body(run, i);
            boolean ok = body.equals(consumers.arrivalBody(id))
                    && ItPublisher.routingKey(i).equals(m.routingKey())
                    && m.exchange().endsWith(".x")
                    && Integer.valueOf(i).equals(m.headers().get("x-seq"))
                    && run.equals(m.headers().get("x-run"))
                    && m.deliveryTag() > 0
                    && m.contentType() != null && m.contentType().startsWith("text/plain")
                    && m.attempt() == 1
                    && new String(m.body(), StandardCharsets.UTF_8).equals(body);
            if (!ok && mismatches.size() < 5) {
                mismatches.add(m + " body=" + consumers.arrivalBody(id) + " headers=" + m.headers());
            }
        }
        return Json.createObjectBuilder().add("arrived", arrived).add("mismatches", String.join("; ", mismatches))
                .add("withoutContext", recorder.withoutContext())
                .add("deliveries", recorder.deliverySum("it-arrivals", run + "-")).build();
    }

    @GET
    @Path("/busy/holding")
    public boolean holding() {
        return busy.holding();
    }

    @POST
    @Path("/busy/release")
    public void release() {
        busy.release();
    }
}
