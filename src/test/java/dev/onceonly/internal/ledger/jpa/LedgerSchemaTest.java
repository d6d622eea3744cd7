package dev.onceonly.internal.ledger.jpa;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LedgerSchemaTest {

    @Test
    void picksTheScriptByDatabaseProductName() {
        assertEquals("META-INF/onceonly/ddl/postgresql.sql", LedgerSchema.scriptFor("PostgreSQL"));
        assertEquals("META-INF/onceonly/ddl/mariadb.sql", LedgerSchema.scriptFor("MariaDB"));
        assertEquals("META-INF/onceonly/ddl/mariadb.sql", LedgerSchema.scriptFor("MySQL"));
        assertEquals("META-INF/onceonly/ddl/h2.sql", LedgerSchema.scriptFor("H2"));
        assertThrows(IllegalStateException.class, () -> LedgerSchema.scriptFor("Oracle"));
    }

    @Test
    void everyShippedScriptIsATableAndAnIndexWithoutComments() {
        for (String db : List.of("postgresql", "mariadb", "h2")) {
            List<String> statements = LedgerSchema.statements("META-INF/onceonly/ddl/" + db + ".sql");
            assertTrue(statements.get(0).startsWith("CREATE TABLE IF NOT EXISTS onceonly_processed_message"), db);
            assertTrue(statements.stream().noneMatch(s -> s.contains("--")), db + ": " + statements);
            assertTrue(String.join(" ", statements).contains("onceonly_processed_message_at"), db + ": index for the purge");
        }
    }

    @Test
    void aPartsStatementsNameItsTableAndIndexesAfterIt() {
        for (String db : List.of("postgresql", "mariadb", "h2")) {
            String script = "META-INF/onceonly/ddl/" + db + ".sql";
            List<String> outbox = LedgerSchema.statements(script, LedgerSchema.Part.OUTBOX, "billing.app1_outbox");
            String all = String.join("\n", outbox);
            assertTrue(all.contains("CREATE TABLE IF NOT EXISTS billing.app1_outbox"), db + ": " + all);
            assertTrue(all.contains(" app1_outbox_message_id UNIQUE") || all.contains("UNIQUE KEY app1_outbox_message_id "), db + ": " + all);
            assertFalse(all.contains("billing.app1_outbox_"), db + ": an index is named without the schema: " + all);
            assertFalse(all.contains("onceonly_"), db + ": nothing of the shipped names, nor another part's: " + all);
            for (LedgerSchema.Part part : LedgerSchema.Part.values()) {
                List<String> shipped = LedgerSchema.statements(script, part, part.shipped());
                assertFalse(shipped.isEmpty(), db + " " + part);
                assertTrue(shipped.stream().allMatch(st -> st.contains(part.shipped())), db + " " + part + ": " + shipped);
            }
            int parts = 0;
            for (LedgerSchema.Part part : LedgerSchema.Part.values()) {
                parts += LedgerSchema.statements(script, part, part.shipped()).size();
            }
            assertEquals(LedgerSchema.statements(script).size(), parts, db + ": every statement belongs to exactly one part");
        }
    }
}
