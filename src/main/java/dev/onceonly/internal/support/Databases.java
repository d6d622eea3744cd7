package dev.onceonly.internal.support;

import java.sql.Connection;
import java.sql.SQLException;
import java.util.Locale;

/** Which database a connection is on, where the library's SQL differs between them. */
public final class Databases {

    private Databases() {
    }

    /**
     * @param productName a JDBC {@code DatabaseMetaData.getDatabaseProductName()}
     * @return whether it is PostgreSQL (which takes {@code insert … on conflict … do nothing}, and
     *         whose transaction a failed statement aborts)
     */
    public static boolean postgresql(String productName) {
        return productName.toLowerCase(Locale.ROOT).contains("postgres");
    }

    /**
     * @param c a connection
     * @return whether its database is PostgreSQL
     * @throws SQLException when the driver cannot say
     */
    public static boolean postgresql(Connection c) throws SQLException {
        return postgresql(c.getMetaData().getDatabaseProductName());
    }
}
