package dev.onceonly.chaos;

import org.junit.jupiter.api.Test;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.Statement;
import java.util.UUID;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A chaos run counts what happened in its own schema: rows an earlier run left under the same
 * schema name (a second build on one machine) must not be counted as this run's. Runs on this
 * machine's PostgreSQL; fails (never skips) when it is down.
 */
class ChaosDatabaseTest {

    @Test
    void aRunStartsFromAnEmptySchemaWhateverAnEarlierRunLeft() throws Exception {
        String schema = "onceonly_chaos_test_" + UUID.randomUUID().toString().replace("-", "").substring(0, 12);
        try {
            try (ChaosDatabase earlier = new ChaosDatabase(schema)) {
                earlier.prepare();
                insertLedgerRow(schema, "left-by-an-earlier-run");
                assertEquals(1, earlier.ledgerRowsOf("inventory-batch"), "the earlier run sees its own row");
            }
            try (ChaosDatabase next = new ChaosDatabase(schema)) {
                next.prepare();
                assertEquals(0, next.ledgerRowsOf("inventory-batch"), "the next run starts with no ledger rows");
            }
        } finally {
            try (Connection c = DriverManager.getConnection(ChaosDatabase.URL, "postgres", "");
                 Statement st = c.createStatement()) {
                st.execute("DROP SCHEMA IF EXISTS " + schema + " CASCADE");
            }
        }
    }

    private static void insertLedgerRow(String schema, String key) throws Exception {
        try (Connection c = DriverManager.getConnection(ChaosDatabase.URL + "?currentSchema=" + schema, "postgres", "");
             Statement st = c.createStatement()) {
            st.executeUpdate("INSERT INTO onceonly_processed_message (msg_id, consumer, body_sha256, processed_at) VALUES ('" + key
                    + "', 'inventory-batch', '', now())");
        }
    }
}
