package dev.onceonly.demo;

import dev.onceonly.api.MessageRefusedException;
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
 * once, however often it is sent. The answer says what the guard decided; {@code GET /api/payments/p1}
 * counts the charges written to the database.
 */
@Path("/payments")
@Produces(MediaType.APPLICATION_JSON)
public class PaymentResource {

    @Inject
    PaymentService payments;

    @POST
    @Consumes(MediaType.APPLICATION_JSON)
    public Response charge(String body) {
        try {
            Integer charged = payments.charge(body);
            return Response.ok(result(charged == null ? "DUPLICATE" : "PROCESSED", "")).build();
        } catch (MessageRefusedException e) {
            int status = e.outcome().isPermanent() ? 422 : 409;
            return Response.status(status).entity(result(e.outcome().name(), e.reason())).build();
        } catch (Exception e) {
            // The handler threw or the transaction did not commit: nothing was kept, send it again later.
            String reason = e.getMessage() == null ? e.getClass().getSimpleName() : e.getMessage();
            return Response.status(503).entity(result("FAILED", reason)).build();
        }
    }

    @GET
    @Path("/{id}")
    public JsonObject charges(@PathParam("id") String id) {
        return JSON.createObjectBuilder().add("paymentId", id).add("charges", payments.chargesOf(id)).build();
    }

    private static JsonObject result(String outcome, String reason) {
        return JSON.createObjectBuilder().add("outcome", outcome).add("reason", reason).build();
    }
}
