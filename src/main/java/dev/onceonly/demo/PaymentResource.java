package dev.onceonly.demo;

import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.Replayable;
import jakarta.inject.Inject;
import jakarta.json.JsonObject;
import jakarta.ws.rs.Consumes;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.Response;

import static dev.onceonly.demo.DemoJson.JSON;

/**
 * Try the guard by hand: {@code POST /api/payments} with {@code {"paymentId":"p1","amount":10}} charges
 * once, however often it is sent. The answer says what the guard decided, with the charge's receipt;
 * a retried request gets the first one's answer again, status and body, with the header
 * {@value #REPLAYED} {@code true} (the receipt the guard kept). {@code GET /api/payments/p1} counts
 * the charges written to the database.
 */
@Path("/payments")
@Produces(MediaType.APPLICATION_JSON)
public class PaymentResource {

    @Inject
    PaymentService payments;

    /** The response header that marks an answer given again to a retried request (as Stripe names it). */
    public static final String REPLAYED = "Idempotent-Replayed";

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Response charge(String body) {
        try {
            Replayable<Receipt> charged = payments.charge(body);
            if (charged == null) {
                // Processed before, and its receipt is not kept any more: all the guard can say.
                return Response.ok(new Answer("DUPLICATE", "processed before; its receipt is no longer kept", null)).build();
            }
            Response.ResponseBuilder ok = Response.ok(new Answer("PROCESSED", "", charged.value()));
            return (charged.replayed() ? ok.header(REPLAYED, "true") : ok).build();
        } catch (MessageRefusedException e) {
            int status = e.outcome().isPermanent() ? 422 : 409;
            return Response.status(status).entity(new Answer(e.outcome().name(), e.reason(), null)).build();
        } catch (Exception e) {
            // The handler threw or the transaction did not commit: nothing was kept, send it again later.
            String reason = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            return Response.status(503).entity(new Answer("FAILED", reason, null)).build();
        }
    }

    /**
     * The body of an answer: what the guard decided, why, and the charge's receipt when there is one.
     *
     * @param outcome the guard's outcome, as the first call had it for a replayed answer
     * @param reason  why it was refused; empty otherwise
     * @param receipt the charge's receipt, or {@code null}
     */
    public record Answer(String outcome, String reason, Receipt receipt) {
    }

    @GET
    @Path("/{id}")
    public JsonObject charges(@PathParam("id") String id) {
        return JSON.createObjectBuilder().add("paymentId", id).add("charges", payments.chargesOf(id)).build();
    }
}
