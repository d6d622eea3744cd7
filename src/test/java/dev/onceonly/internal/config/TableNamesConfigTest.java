package dev.onceonly.internal.config;

import dev.onceonly.api.InvalidConfigurationException;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The tables' names: {@code onceonly.ledger.table}, {@code onceonly.outbox.table}, {@code onceonly.database-store.table}. */
class TableNamesConfigTest {

    private static OnceOnlyConfig config(Map<String, String> props) {
        return new OnceOnlyConfig(new SmallRyeConfigBuilder()
                .withSources(new PropertiesConfigSource(props, "test", 500)).build());
    }

    @Test
    void tableNamesDefaultToTheShippedOnesAndTakeASchema() {
        OnceOnlyConfig.Settings defaults = config(Map.of("onceonly.store", "database")).read();
        assertEquals("onceonly_processed_message", defaults.ledger().table());
        assertEquals("onceonly_outbox", defaults.outbox().table());
        assertEquals("onceonly_claim", defaults.databaseStore().table());
        OnceOnlyConfig.Settings own = config(Map.of("onceonly.store", "database", "onceonly.ledger.table", "billing.ledger_1",
                "onceonly.outbox.table", " billing_outbox ", "onceonly.database-store.table", "_claims.c")).read();
        assertEquals("billing.ledger_1", own.ledger().table());
        assertEquals("billing_outbox", own.outbox().table());
        assertEquals("_claims.c", own.databaseStore().table());
    }

    /** A name that is not a plain lower-case SQL name would be spliced into every statement: it stops the start. */
    @Test
    void aTableNameThatIsNoPlainSqlNameStopsTheStartNamingItsProperty() {
        for (String bad : List.of("Ledger", "1ledger", "a.b.c", "ledger;drop table x", "led-ger", "\"ledger\"", "a.", ".a",
                "x".repeat(49), "s." + "x".repeat(49))) {
            for (String property : List.of("onceonly.ledger.table", "onceonly.outbox.table", "onceonly.database-store.table")) {
                InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                        () -> config(Map.of("onceonly.store", "database", property, bad)).read(), bad);
                assertEquals(property, e.property(), bad);
            }
        }
        assertEquals("x".repeat(48) + "." + "y".repeat(48),
                config(Map.of("onceonly.ledger.table", "x".repeat(48) + "." + "y".repeat(48))).read().ledger().table());
    }

    @Test
    void twoPartsCannotShareATable() {
        assertEquals("onceonly.outbox.table", assertThrows(InvalidConfigurationException.class,
                () -> config(Map.of("onceonly.outbox.table", "onceonly_processed_message")).read()).property());
        assertEquals("onceonly.database-store.table", assertThrows(InvalidConfigurationException.class,
                () -> config(Map.of("onceonly.store", "database", "onceonly.database-store.table", "onceonly_outbox")).read())
                .property());
    }
}
