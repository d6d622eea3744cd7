package dev.onceonly.it;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/**
 * One integration-test server (the pom starts one per database) and the database behind it.
 *
 * @param baseUrl the demo's REST root on that server
 * @param jdbcUrl the same database as the test reaches it
 */
record LedgerDatabase(String name, String baseUrl, String jdbcUrl, String user, String password) {

    static final LedgerDatabase H2 = new LedgerDatabase("h2", api("http.port", "9080"),
            System.getProperty("onceonly.test.h2.url"), "sa", "");
    static final LedgerDatabase POSTGRESQL = new LedgerDatabase("postgresql", api("onceonly.test.postgresql.port", "9081"),
            "jdbc:postgresql://127.0.0.1:5432/test", "postgres", "");
    static final LedgerDatabase MARIADB = new LedgerDatabase("mariadb", api("onceonly.test.mariadb.port", "9082"),
            "jdbc:mariadb://127.0.0.1:3306/test", "root", "");

    private static String api(String portProperty, String fallback) {
        return "http://localhost:" + System.getProperty(portProperty, fallback) + "/api";
    }

    Connection connect() throws SQLException {
        return DriverManager.getConnection(jdbcUrl, user, password);
    }
}
