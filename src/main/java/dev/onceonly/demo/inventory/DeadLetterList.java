package dev.onceonly.demo.inventory;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.DeadLetterFilter;
import dev.onceonly.api.DeadLetterQueue;
import dev.onceonly.api.DeadLetterQueues;
import dev.onceonly.api.OnceOnlyException;
import dev.onceonly.api.ReplayResult;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;

import static dev.onceonly.demo.DemoJson.JSON;

/**
 * The page's dead-letter list, on the library's dead-letter operations ({@link DeadLetterQueues}):
 * the orders channel's dead-letter queue as the broker holds it, read without taking anything off
 * it. What the page gets of a dead letter is what the operations show: the connector's reasons,
 * the key's digest and the body's SHA-256 and size, never the body or the key. A replay sends one
 * back to the orders exchange and reports the guard's decision on it.
 *
 * <p>Open to anyone, as the whole demo is; an application mounts the library's
 * {@code dev.onceonly.http.DeadLetterResource} under its own role instead.
 */
@Path("/dead-letters")
@ApplicationScoped
@Produces(MediaType.APPLICATION_JSON)
public class DeadLetterList {

    /** The dead letters the page shows: the newest ones. */
    static final int SHOWN = 50;
    /** How long a replay waits for the guard's decision before the page is answered. */
    private static final Duration REPLAY_WAIT = Duration.ofSeconds(5);

    @Inject
    DeadLetterQueues queues;

    private DeadLetterQueue orders() {
        return queues.channel("orders");
    }

    /** {@return how many dead letters the orders channel's queue holds; -1 while it cannot be read (not connected yet)} */
    int count() {
        try {
            return orders().count();
        } catch (OnceOnlyException e) {
            return -1;
        }
    }

    /** @return the newest {@value #SHOWN} dead letters, newest first, and how many the queue holds */
    @GET
    public JsonObject list() {
        List<DeadLetter> all = orders().list(DeadLetterFilter.ALL, 0, Integer.MAX_VALUE).letters();
        JsonArrayBuilder a = JSON.createArrayBuilder();
        for (int i = all.size() - 1; i >= Math.max(0, all.size() - SHOWN); i--) {
            DeadLetter l = all.get(i);
            a.add(JSON.createObjectBuilder().add("id", l.id())
                    .add("time", l.deadLetteredAt() == null ? 0 : l.deadLetteredAt().toEpochMilli())
                    .add("bodySha256", l.bodySha256()).add("bytes", l.bodyBytes()).add("outcome", l.outcome())
                    .add("attempts", l.attempts()).add("reason", l.reason()).add("consumer", l.consumer())
                    .add("keyDigest", l.keyDigest()).add("replays", l.replays()).add("replayable", l.replayable()));
        }
        return JSON.createObjectBuilder().add("inQueue", all.size()).add("letters", a).build();
    }

    /**
     * A JSON body ({@code {}}) only, as the library's resource takes: what a form on another site can
     * post is refused (415) before it replays anything.
     *
     * @param id a dead letter's id
     * @return what became of its replay: the guard's decision when it came in time
     */
    @POST
    @Path("/{id}/replay")
    @Consumes(MediaType.APPLICATION_JSON)
    public JsonObject replay(@PathParam("id") String id) {
        ReplayResult r = orders().replay(id, REPLAY_WAIT);
        return JSON.createObjectBuilder().add("id", r.id()).add("status", r.status().name()).add("detail", r.detail()).build();
    }

    static String sha256(byte[] bytes) {
        try {
            return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
