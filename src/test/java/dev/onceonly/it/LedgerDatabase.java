package dev.onceonly.it;

import dev.onceonly.testing.TestRabbit;

import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.SQLException;

/**
 * One integration-test server (the pom starts one per database) and the database behind it.
 *
 * @param baseUrl  the demo's REST root on that server
 * @param jdbcUrl  the same database as the test reaches it
 * @param amqpPort the broker the demo on that server uses (the embedded one, or this machine's RabbitMQ)
 * @param exchange the demo's exchange on that broker ({@code demo.exchange} of that server)
 * @param databaseStore whether that server keeps its claims in the database ({@code onceonly.store=database},
 *                      src/test/liberty/it-database-store-server.env) rather than in Redis
 */
record LedgerDatabase(String name, String baseUrl, String jdbcUrl, String user, String password, int amqpPort, String exchange,
                      boolean databaseStore) {

    static final LedgerDatabase H2 = new LedgerDatabase("h2", api("http.port", "9080"),
            System.getProperty("onceonly.test.h2.url"), "", "", 5673, "orders", false);
    static final LedgerDatabase POSTGRESQL = new LedgerDatabase("postgresql", api("onceonly.test.postgresql.port", "9081"),
            "jdbc:postgresql://127.0.0.1:5432/test", "postgres", "", 5672,
            TestRabbit.names(System.getProperty("http.port", "9080")) + ".postgresql.orders", false);
    static final LedgerDatabase MARIADB = new LedgerDatabase("mariadb", api("onceonly.test.mariadb.port", "9082"),
            "jdbc:mariadb://127.0.0.1:3306/test", "root", "", 5672,
            TestRabbit.names(System.getProperty("http.port", "9080")) + ".mariadb.orders", true);

    private static String api(String portProperty, String fallback) {
        return "http://localhost:" + System.getProperty(portProperty, fallback) + "/api";
    }

    Connection connect() throws SQLException {
        return DriverManager.getConnection(jdbcUrl, user, password);
    }
}
