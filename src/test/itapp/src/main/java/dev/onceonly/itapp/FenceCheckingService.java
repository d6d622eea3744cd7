package dev.onceonly.itapp;

import dev.onceonly.api.IdempotencyContext;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.HeaderParam;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Another system's HTTP service, as FencingIT's handler calls it. {@code checked}: a version check
 * on the fence, per {@code Idempotency-Key}: a fence at or below the highest accepted for the key
 * is refused with 409. {@code unchecked}: every call is accepted. Each keeps who wrote last.
 */
@ApplicationScoped
@Path("/fence-service")
public class FenceCheckingService {

    private final Map<String, Long> highest = new ConcurrentHashMap<>();
    private final Map<String, String> lastWriter = new ConcurrentHashMap<>();

    @POST
    @Path("/checked/{resource}")
    @Consumes(MediaType.TEXT_PLAIN)
    public Response checked(@PathParam("resource") String resource, @HeaderParam(IdempotencyContext.HEADER) String key,
                            @HeaderParam(IdempotencyContext.FENCE_HEADER) String fence, String writer) {
        if (key == null || fence == null) {
            return Response.status(Response.Status.BAD_REQUEST).build();
        }
        long f = Long.parseLong(fence);
        boolean[] accepted = {false};
        // The check and the update in one atomic step: two holders may call at the same moment.
        highest.compute(key, (k, seen) -> {
            accepted[0] = seen == null || f > seen;
            return accepted[0] ? f : seen;
        });
        if (!accepted[0]) {
            return Response.status(Response.Status.CONFLICT).build();
        }
        lastWriter.put("checked/" + resource, writer);
        return Response.ok().build();
    }

    @POST
    @Path("/unchecked/{resource}")
    @Consumes(MediaType.TEXT_PLAIN)
    public Response unchecked(@PathParam("resource") String resource, String writer) {
        lastWriter.put("unchecked/" + resource, writer);
        return Response.ok().build();
    }

    @GET
    @Path("/{kind}/{resource}")
    @Produces(MediaType.TEXT_PLAIN)
    public String lastWriter(@PathParam("kind") String kind, @PathParam("resource") String resource) {
        return lastWriter.getOrDefault(kind + "/" + resource, "nobody");
    }
}
