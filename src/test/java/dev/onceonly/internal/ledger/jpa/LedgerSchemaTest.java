package dev.onceonly.internal.ledger.jpa;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
}
