package dev.onceonly.http;

import dev.onceonly.api.DeadLetterFilter;
import dev.onceonly.api.DeadLetterPage;
import dev.onceonly.api.DeadLetterQueue;
import dev.onceonly.api.DeadLetterQueues;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonArrayBuilder;
import jakarta.json.JsonObject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.DELETE;
import jakarta.ws.rs.DefaultValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.NotFoundException;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.QueryParam;
import jakarta.ws.rs.WebApplicationException;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.HttpHeaders;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;
import jakarta.ws.rs.core.SecurityContext;

import java.util.Set;

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
 * {@code limit} (50 by default, at most 500) page it); {@code GET /{channel}/{id}} one; {@code GET
 * /{channel}/{id}/body} its body (the one call that returns it); {@code DELETE /{channel}/{id}}
 * discards one.
 *
 * <p>The calls that change the queue take their parameters from a JSON body, never from the query,
 * and refuse any other body type (415): a page on another site that an operator's browser visits
 * can post a form with the operator's session, but not {@code application/json} without a CORS
 * preflight. {@code POST /{channel}/{id}/replay} with {@code {"wait":"5s"}} replays one;
 * {@code POST /{channel}/replay} and {@code POST /{channel}/discard} with the filters
 * ({@code {"outcome":"FAILED","reason":"timeout","consumer":"inventory","olderThan":"1h"}}) act on
 * all matching, or with {@code "dryRun":true} list a page ({@code offset}, {@code limit}) of those
 * they would touch, with how many match. A replay waits {@code wait} (default 5s, at most a minute;
 * more is refused, not shortened) for the guard's decision. A refused request is answered with a
 * problem (RFC 9457) naming the field. JSON, never a key or a body but on the body's call.
 */
public abstract class DeadLetterResource {

    private static final String PROBLEM_JSON = "application/problem+json";

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
     * @param limit at most this many (at most 500)
     * @return the page
     */
    @GET
    @Path("{channel}")
    @Produces(MediaType.APPLICATION_JSON)
    public JsonObject list(@Context SecurityContext security, @PathParam("channel") String channel, @QueryParam("outcome") String outcome,
                           @QueryParam("reason") String reason, @QueryParam("consumer") String consumer,
                           @QueryParam("older-than") String olderThan, @QueryParam("offset") @DefaultValue("0") int offset,
                           @QueryParam("limit") @DefaultValue("50") int limit) {
        DeadLetterQueue q = queue(security, channel);
        try {
            DeadLetterRequest.checkPage(offset, limit);
        } catch (DeadLetterRequest.Refused e) {
            throw problem(e);
        }
        DeadLetterPage page = q.list(filter(outcome, reason, consumer, olderThan), offset, limit);
        return Json.createObjectBuilder().add("matching", page.matching()).add("inQueue", page.inQueue())
                .add("letters", DeadLetterJson.letters(page.letters())).build();
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
        return queue(security, channel).find(id).map(DeadLetterJson::of)
                .orElseThrow(() -> new NotFoundException("no dead letter " + id));
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
     * @param contentType the body's type: {@code application/json} only
     * @param body a JSON object: {@code wait} ({@code "5s"} by default, at most a minute; {@code "0"} does not
     *             wait, and leaves the letter: it is removed once its replay is decided); {@code unverified}
     *             ({@code true}) to replay an unverified letter as a new message
     *             ({@link DeadLetterQueue#replayUnverified})
     * @return what became of it
     */
    @POST
    @Path("{channel}/{id}/replay")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public JsonObject replay(@Context SecurityContext security, @PathParam("channel") String channel, @PathParam("id") String id,
                             @HeaderParam(HttpHeaders.CONTENT_TYPE) String contentType, String body) {
        DeadLetterQueue q = queue(security, channel);
        DeadLetterRequest r = request(contentType, body, DeadLetterRequest.REPLAY_ONE);
        return DeadLetterJson.of(r.unverified() ? q.replayUnverified(id, r.waitFor()) : q.replay(id, r.waitFor()));
    }

    /**
     * @param security the caller, as the server authenticated it
     * @param channel the channel
     * @param contentType the body's type: {@code application/json} only
     * @param body a JSON object: the filters {@code outcome}, {@code reason}, {@code consumer},
     *             {@code olderThan}; {@code dryRun} to list, a page ({@code offset}, {@code limit})
     *             at a time, what it would replay; {@code wait} for the guard's decisions, in all
     * @return what became of each, or a page of what would be replayed
     */
    @POST
    @Path("{channel}/replay")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public JsonObject replayAll(@Context SecurityContext security, @PathParam("channel") String channel,
                                @HeaderParam(HttpHeaders.CONTENT_TYPE) String contentType, String body) {
        DeadLetterQueue q = queue(security, channel);
        DeadLetterRequest r = request(contentType, body, DeadLetterRequest.REPLAY_ALL);
        if (r.dryRun()) {
            return dryRun(q, r);
        }
        JsonArrayBuilder a = Json.createArrayBuilder();
        q.replayAll(r.filter(), r.waitFor()).forEach(result -> a.add(DeadLetterJson.of(result)));
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
        // DELETE needs no body: a cross-site page cannot send one without a CORS preflight.
        return queue(security, channel).discard(id).map(DeadLetterJson::of)
                .orElseThrow(() -> new NotFoundException("no dead letter " + id));
    }

    /**
     * @param security the caller, as the server authenticated it
     * @param channel the channel
     * @param contentType the body's type: {@code application/json} only
     * @param body a JSON object: the filters {@code outcome}, {@code reason}, {@code consumer},
     *             {@code olderThan}; {@code dryRun} to list, a page ({@code offset}, {@code limit})
     *             at a time, what it would discard
     * @return the discarded dead letters, or a page of those it would discard
     */
    @POST
    @Path("{channel}/discard")
    @Consumes(MediaType.APPLICATION_JSON)
    @Produces(MediaType.APPLICATION_JSON)
    public JsonObject discardAll(@Context SecurityContext security, @PathParam("channel") String channel,
                                 @HeaderParam(HttpHeaders.CONTENT_TYPE) String contentType, String body) {
        DeadLetterQueue q = queue(security, channel);
        DeadLetterRequest r = request(contentType, body, DeadLetterRequest.DISCARD_ALL);
        if (r.dryRun()) {
            return dryRun(q, r);
        }
        return Json.createObjectBuilder().add("dryRun", false).add("letters",
                DeadLetterJson.letters(q.discardAll(r.filter()))).build();
    }

    /** What a call would touch, paged like a listing. */
    private static JsonObject dryRun(DeadLetterQueue q, DeadLetterRequest r) {
        DeadLetterPage page = q.list(r.filter(), r.offset(), r.limit());
        return Json.createObjectBuilder().add("dryRun", true).add("matching", page.matching()).add("inQueue",
                page.inQueue())
                .add("letters", DeadLetterJson.letters(page.letters())).build();
    }

    /** The call's body, or its refusal as a problem response (RFC 9457). */
    private static DeadLetterRequest request(String contentType, String body, Set<String> fields) {
        try {
            return DeadLetterRequest.parse(contentType, body, fields);
        } catch (DeadLetterRequest.Refused e) {
            throw problem(e);
        }
    }

    private static DeadLetterFilter filter(String outcome, String reason, String consumer, String olderThan) {
        try {
            return new DeadLetterFilter(blankToNull(outcome), blankToNull(reason), blankToNull(consumer),
                    blankToNull(olderThan) == null ? null : DeadLetterRequest.duration("older-than", olderThan));
        } catch (DeadLetterRequest.Refused e) {
            throw problem(e);
        }
    }

    private static String blankToNull(String s) {
        return s == null || s.isBlank() ? null : s;
    }

    private static WebApplicationException problem(DeadLetterRequest.Refused refused) {
        Response.Status status = Response.Status.fromStatusCode(refused.status());
        String problem = Json.createObjectBuilder().add("type", "about:blank").add("title", status.getReasonPhrase())
                .add("status", refused.status()).add("detail", refused.getMessage()).build().toString();
        return new WebApplicationException(Response.status(status).type(PROBLEM_JSON).entity(problem).build());
    }
}
