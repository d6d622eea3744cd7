package dev.onceonly.it;

import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The ledger on MariaDB, under REPEATABLE READ (InnoDB's default, set explicitly in db/mariadb.xml),
 * on a server in the database-only mode as docs/database-only.md sets it up: its claims are in the
 * table onceonly_claim, and the only Redis it is given does not exist.
 */
class LedgerMariadbIT extends LedgerContract {

    LedgerMariadbIT() {
        super(LedgerDatabase.MARIADB);
    }

    /**
     * The server's Redis URL names a port nothing listens on (it-database-store-server.env): were
     * Redis needed for anything, readiness would be DOWN or the claim would fail.
     */
    @Test
    void aDuplicateIsRefusedByTheClaimTableWithNoRedisToBeHad() throws Exception {
        HttpResponse<String> ready = HTTP.send(HttpRequest.newBuilder(URI.create(db.baseUrl().replace("/api", "/health/ready")))
                .build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, ready.statusCode(), ready.body());
        assertTrue(ready.body().contains("\"claim-store:database\":\"UP\""), ready.body());
        assertFalse(ready.body().toLowerCase(java.util.Locale.ROOT).contains("redis"), ready.body());

        Payment p = Payment.of(10);
        HttpResponse<String> first = post(p.body());
        assertOutcome(200, "PROCESSED", first);
        awaitClaimDone(p.key().storeKey());
        assertReplayOf(first, post(p.body()));
        assertEquals(1, charges(p.id()));
        assertNull(redis.get(p.key().storeKey()), "nothing in the build's Redis");
    }
}
