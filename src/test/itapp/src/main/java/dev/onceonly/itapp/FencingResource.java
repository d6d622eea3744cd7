package dev.onceonly.itapp;

import dev.onceonly.api.MessageRefusedException;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonValue;
import jakarta.ws.rs.GET;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.Produces;
import jakarta.ws.rs.core.Context;
import jakarta.ws.rs.core.MediaType;
import jakarta.ws.rs.core.UriInfo;

/** FencingIT's steps: open a transfer, run it as holder A or B, see where A waits, resume A, read the state. */
@Path("/fencing")
@Produces(MediaType.APPLICATION_JSON)
public class FencingResource {

    @Inject
    FencedTransfers transfers;

    @Inject
    FenceCheckingService service;

    @Context
    UriInfo uri;

    @POST
    @Path("/{transfer}/open")
    public JsonObject open(@PathParam("transfer") String transfer) throws Exception {
        transfers.open(transfer);
        return Json.createObjectBuilder().add("opened", transfer).build();
    }

    /** Runs the transfer as {@code holder}: what its writes did, and how the guard ended the call. */
    @POST
    @Path("/{transfer}/run/{holder}")
    public JsonObject run(@PathParam("transfer") String transfer, @PathParam("holder") String holder) throws Exception {
        String outcome = "PROCESSED";
        try {
            transfers.transfer(transfer, holder, uri.getBaseUri() + "fence-service");
        } catch (MessageRefusedException e) {
            outcome = e.outcome().name();
        }
        JsonObject writes = transfers.writes(transfer, holder);
        return Json.createObjectBuilder().add("outcome", outcome)
                .add("writes", writes == null ? JsonValue.EMPTY_JSON_OBJECT : writes).build();
    }

    /** {@code {"key": ...}} once holder A holds the claim and waits; {@code {}} before. */
    @GET
    @Path("/{transfer}/paused")
    public JsonObject paused(@PathParam("transfer") String transfer) {
        String key = transfers.pausedKey(transfer);
        return key == null ? JsonValue.EMPTY_JSON_OBJECT : Json.createObjectBuilder().add("key", key).build();
    }

    @POST
    @Path("/{transfer}/resume")
    public JsonObject resume(@PathParam("transfer") String transfer) {
        transfers.resume(transfer);
        return Json.createObjectBuilder().add("resumed", transfer).build();
    }

    /** Who wrote last: each row of the other system's table, each resource of its service. */
    @GET
    @Path("/{transfer}/state")
    public JsonObject state(@PathParam("transfer") String transfer) throws Exception {
        return Json.createObjectBuilder()
                .add("checkedRow", transfers.holderOf(transfer + ":checked"))
                .add("uncheckedRow", transfers.holderOf(transfer + ":unchecked"))
                .add("checkedService", service.lastWriter("checked", transfer))
                .add("uncheckedService", service.lastWriter("unchecked", transfer))
                .build();
    }
}
