package dev.onceonly.itapp;

import dev.onceonly.http.DeadLetterResource;
import jakarta.enterprise.context.RequestScoped;
import jakarta.ws.rs.Path;

/**
 * The library's dead-letter resource as an application mounts it: under a path and a role of its
 * own. This application configures no users, so every caller is refused (DeadLetterReplayIT).
 */
@Path("/ops/dead-letters")
@RequestScoped
public class ItDeadLetterOps extends DeadLetterResource {

    @Override
    protected String role() {
        return "operator";
    }
}
