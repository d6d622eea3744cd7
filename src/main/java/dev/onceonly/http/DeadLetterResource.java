package dev.onceonly.http;

import dev.onceonly.api.DeadLetter;
import dev.onceonly.api.DeadLetterFilter;
import dev.onceonly.api.DeadLetterPage;
import dev.onceonly.api.DeadLetterQueue;
import dev.onceonly.api.DeadLetterQueues;
import dev.onceonly.api.ReplayResult;
import dev.onceonly.internal.support.Durations;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.json.JsonObjectBuilder;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

/**
 * The dead-letter operations over HTTP, for an application to mount under its own path and role:
 * nothing is exposed unless it subclasses this, and every call is refused unless the caller is
 * authenticated and in {@link #role()} (401 without a user, 403 without the role), whatever the
 * application's other security settings:
 * <pre>
 * &#64;Path("/ops/dead-letters")
 * &#64;RequestScoped
 * public class DeadLetterOps extends DeadLetterResource {
 *     &#64;Override
 *     protected String role() {
 *         return "operator";
 *     }
 * }
 * </pre>
 * Under that path: {@code GET /} the channels; {@code GET /{channel}} a page of dead letters
 * ({@code outcome}, {@code reason}, {@code consumer}, {@code older-than} filter it; {@code offset},
 * {@code limit} page it); {@code GET /{channel}/{id}} one; {@code GET /{channel}/{id}/body} its body
 * (the one call that returns it); {@code POST /{channel}/{id}/replay} and {@code DELETE
 * /{channel}/{id}} one; {@code POST /{channel}/replay} and {@code POST /{channel}/discard} all
 * matching the filters, or with {@code dry-run=true} only those they would touch. A replay waits
 * {@code wait} (default 5s) for the guard's decision. JSON, never a key or a body but on the body's call.
 */
public abstract class DeadLetterResource {

    private static final String DEFAULT_WAIT = "5s";

    @Inject
    DeadLetterQueues queues;

    /** {@return the role a caller must have: the application's own, never empty} */
    protected abstract String role();

    /**
     * @return 0 when the caller may go on, else the status that refuses it: 401 without an
     *         authenticated user, 403 without the role (or with no role configured)
     */
    static int refusal(SecurityContext security, String role) {
        if (security == null || security.getUserPrincipal() == null) {
            return Response.Status.UNAUTHORIZED.getStatusCode();
        }
        return role == null || role.isBlank() || !security.isUserInRole(role) ? Response.Status.FORBIDDEN.getStatusCode() : 0;
    }

    private DeadLetterQueue queue(SecurityContext security, String channel) {
        int refused = refusal(security, role());
        if (refused != 0) {
            throw new WebApplicationException(refused);
        }
        if (channel == null) {
            return null;
        }
        try {
            return queues.channel(channel);
        } catch (IllegalArgumentException e) {
            throw new NotFoundException(e.getMessage());
        }
    }

    /**
     * @param security the caller, as the server authenticated it
     * @return the incoming channels whose dead-letter queues these are
     */
    @GET
    @Produces(MediaType.APPLICATION_JSON)
    public JsonObject channels(@Context SecurityContext security) {
        queue(security, null);
        JsonArrayBuilder a = Json.createArrayBuilder();
        queues.channels().forEach(a::add);
        return Json.createObjectBuilder().add("channels", a).build();
    }

    /**
     * @param security the caller, as the server authenticated it
     * @param channel the channel
     * @param outcome filter: the outcome
     * @param reason filter: a piece of the reason
     * @param consumer filter: the consumer
     * @param olderThan filter: dead-lettered longer ago than this ({@code 1h}, {@code PT1H})
     * @param offset matching dead letters to skip
     * @param limit at most this many
     * @return the page
     */
    @GET
    @Path("{channel}")
    @Produces(MediaType.APPLICATION_JSON)
    public JsonObject list(@Context SecurityContext security, @PathParam("channel") String channel, @QueryParam("outcome") String outcome,
                           @QueryParam("reason") String reason, @QueryParam("consumer") String consumer,
                           @QueryParam("older-than") String olderThan, @QueryParam("offset") @DefaultValue("0") int offset,
                           @QueryParam("limit") @DefaultValue("50") int limit) {
        DeadLetterPage page = queue(security, channel).list(filter(outcome, reason, consumer, olderThan), offset, limit);
        return Json.createObjectBuilder().add("matching", page.matching()).add("inQueue", page.inQueue())
                .add("letters", letters(page.letters())).build();
    }

    /**
     * @param security the caller, as the server authenticated it
     * @param channel the channel
     * @param id the dead letter
     * @return it, or 404
     */
    @GET
    @Path("{channel}/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    public JsonObject show(@Context SecurityContext security, @PathParam("channel") String channel, @PathParam("id") String id) {
        return queue(security, channel).find(id).map(DeadLetterResource::json).orElseThrow(() -> new NotFoundException("no dead letter " + id));
    }

    /**
     * @param security the caller, as the server authenticated it
     * @param channel the channel
     * @param id the dead letter
     * @return its body, or 404
     */
    @GET
    @Path("{channel}/{id}/body")
    @Produces(MediaType.APPLICATION_OCTET_STREAM)
    public byte[] body(@Context SecurityContext security, @PathParam("channel") String channel, @PathParam("id") String id) {
        return queue(security, channel).body(id).orElseThrow(() -> new NotFoundException("no dead letter " + id));
    }

    /**
     * @param security the caller, as the server authenticated it
     * @param channel the channel
     * @param id the dead letter
     * @param wait how long to wait for the guard's decision
     * @return what became of it
     */
    @POST
    @Path("{channel}/{id}/replay")
    @Produces(MediaType.APPLICATION_JSON)
    public JsonObject replay(@Context SecurityContext security, @PathParam("channel") String channel, @PathParam("id") String id,
                             @QueryParam("wait") @DefaultValue(DEFAULT_WAIT) String wait) {
        return json(queue(security, channel).replay(id, duration("wait", wait)));
    }

    /**
     * @param security the caller, as the server authenticated it
     * @param channel the channel
     * @param outcome filter: the outcome
     * @param reason filter: a piece of the reason
     * @param consumer filter: the consumer
     * @param olderThan filter: dead-lettered longer ago than this
     * @param dryRun only list the dead letters it would replay
     * @param wait how long to wait for the guard's decisions, in all
     * @return what became of each, or what would be replayed
     */
    @POST
    @Path("{channel}/replay")
    @Produces(MediaType.APPLICATION_JSON)
    public JsonObject replayAll(@Context SecurityContext security, @PathParam("channel") String channel, @QueryParam("outcome") String outcome,
                                @QueryParam("reason") String reason, @QueryParam("consumer") String consumer,
                                @QueryParam("older-than") String olderThan, @QueryParam("dry-run") boolean dryRun,
                                @QueryParam("wait") @DefaultValue(DEFAULT_WAIT) String wait) {
        DeadLetterQueue q = queue(security, channel);
        DeadLetterFilter f = filter(outcome, reason, consumer, olderThan);
        if (dryRun) {
            return Json.createObjectBuilder().add("dryRun", true).add("letters", letters(q.list(f, 0, Integer.MAX_VALUE).letters())).build();
        }
        JsonArrayBuilder a = Json.createArrayBuilder();
        q.replayAll(f, duration("wait", wait)).forEach(r -> a.add(json(r)));
        return Json.createObjectBuilder().add("results", a).build();
    }

    /**
     * @param security the caller, as the server authenticated it
     * @param channel the channel
     * @param id the dead letter
     * @return the discarded dead letter, or 404
     */
    @DELETE
    @Path("{channel}/{id}")
    @Produces(MediaType.APPLICATION_JSON)
    public JsonObject discard(@Context SecurityContext security, @PathParam("channel") String channel, @PathParam("id") String id) {
        return queue(security, channel).discard(id).map(DeadLetterResource::json).orElseThrow(() -> new NotFoundException("no dead letter " + id));
    }

    /**
     * @param security the caller, as the server authenticated it
     * @param channel the channel
     * @param outcome filter: the outcome
     * @param reason filter: a piece of the reason
     * @param consumer filter: the consumer
     * @param olderThan filter: dead-lettered longer ago than this
     * @param dryRun only list the dead letters it would discard
     * @return the discarded dead letters, or those it would discard
     */
    @POST
    @Path("{channel}/discard")
    @Produces(MediaType.APPLICATION_JSON)
    public JsonObject discardAll(@Context SecurityContext security, @PathParam("channel") String channel, @QueryParam("outcome") String outcome,
                                 @QueryParam("reason") String reason, @QueryParam("consumer") String consumer,
                                 @QueryParam("older-than") String olderThan, @QueryParam("dry-run") boolean dryRun) {
        DeadLetterQueue q = queue(security, channel);
        DeadLetterFilter f = filter(outcome, reason, consumer, olderThan);
        List<DeadLetter> letters = dryRun ? q.list(f, 0, Integer.MAX_VALUE).letters() : q.discardAll(f);
        return Json.createObjectBuilder().add("dryRun", dryRun).add("letters", letters(letters)).build();
    }

    private static DeadLetterFilter filter(String outcome, String reason, String consumer, String olderThan) {
        return new DeadLetterFilter(blankToNull(outcome), blankToNull(reason), blankToNull(consumer),
                blankToNull(olderThan) == null ? null : duration("older-than", olderThan));
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    private static Duration duration(String name, String value) {
        if (value.equals("0") || value.equals("0s")) {
            return Duration.ZERO;
        }
        Duration d = Durations.parse(value);
        if (d == null) {
            throw new WebApplicationException(Response.status(Response.Status.BAD_REQUEST).type(MediaType.TEXT_PLAIN)
                    .entity(name + ": " + Durations.ACCEPTED + ", or 0").build());
        }
        return d;
    }

    private static JsonArrayBuilder letters(List<DeadLetter> letters) {
        JsonArrayBuilder a = Json.createArrayBuilder();
        letters.forEach(l -> a.add(json(l)));
        return a;
    }

    /** What the resource shows of a dead letter: everything but its body. */
    static JsonObject json(DeadLetter l) {
        JsonObjectBuilder b = Json.createObjectBuilder().add("id", l.id()).add("channel", l.channel())
                .add("outcome", l.outcome()).add("reason", l.reason()).add("attempts", l.attempts())
                .add("consumer", l.consumer()).add("keyDigest", l.keyDigest()).add("bodySha256", l.bodySha256())
                .add("bodyBytes", l.bodyBytes()).add("replays", l.replays()).add("replayable", l.replayable());
        Instant at = l.deadLetteredAt();
        if (at != null) {
            b.add("deadLetteredAt", at.toString());
        }
        return b.build();
    }

    private static JsonObject json(ReplayResult r) {
        return Json.createObjectBuilder().add("id", r.id()).add("status", r.status().name()).add("detail", r.detail()).build();
    }
}
