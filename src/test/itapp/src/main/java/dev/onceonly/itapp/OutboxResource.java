package dev.onceonly.itapp;

import dev.onceonly.api.Outbox;
import dev.onceonly.api.OutboxMessage;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;
import jakarta.ws.rs.POST;
import jakarta.ws.rs.Path;
import jakarta.ws.rs.PathParam;
import jakarta.ws.rs.QueryParam;

/**
 * Sends through this application's outbox, whose table is its own (onceonly.outbox.table) on the
 * database the demo beside it uses too.
 */
@Path("/it/outbox")
@ApplicationScoped
public class OutboxResource {

    @Inject
    Outbox outbox;

    /** Sends {@code count} messages {@code <run>-<i>} to {@code exchange} with {@code routingKey}, in one transaction. */
    @POST
    @Path("/{run}")
    @Transactional
    public int send(@PathParam("run") String run, @QueryParam("exchange") String exchange,
                    @QueryParam("routingKey") String routingKey, @QueryParam("count") int count) {
        for (int i = 0; i < count; i++) {
            outbox.send(OutboxMessage.text(exchange, routingKey, run + "-" + i).withMessageId(run + "-" + i));
        }
        return count;
    }
}
