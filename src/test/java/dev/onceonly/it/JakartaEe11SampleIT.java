package dev.onceonly.it;

import dev.onceonly.testing.PrometheusText;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The sample on Jakarta EE 11: the same application, built against the same APIs, on a server
 * whose configuration is the sample's server.xml with each Jakarta EE 10 feature replaced by its
 * EE 11 version ({@code servlet-6.1}, {@code cdi-4.1}, {@code concurrent-3.1},
 * {@code persistenceContainer-3.2}; the pom's it-ee11-server-config) and the optional MicroProfile
 * features beside them ({@code mpHealth-4.0}, {@code mpMetrics-5.1}, {@code mpTelemetry-2.1}).
 * Every test of {@link PaymentsSampleIT} runs here too: duplicates processed once, again once Redis
 * forgot the claims, refusals dead-lettered, a Redis outage ridden out, and a log without the
 * library's warnings or errors. Hibernate 6.6 from the library's WEB-INF/lib is the sample's
 * persistence provider under Jakarta Persistence 3.2 here.
 */
class JakartaEe11SampleIT extends PaymentsSampleIT {

    static final String PORT = System.getProperty("onceonly.test.ee11.port");
    static final HttpClient HTTP = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Override
    Sample sample() {
        return Sample.on("onceonly-it-ee11", "ee11.payments", "onceonly.test.ee11.schema", "ee11:");
    }

    /**
     * The server runs the EE 11 features and none of their EE 10 versions: a feature the sample's
     * server.xml adds without a replacement in the pom fails here instead of testing EE 10 again.
     */
    @Test
    @Order(0)
    void theServerRunsTheJakartaEe11Features() throws Exception {
        String installed = serverLog().stream().filter(l -> l.contains("CWWKF0012I")).findFirst()
                .orElseThrow(() -> new AssertionError("no CWWKF0012I (features installed) line"));
        Set<String> features = Arrays.stream(installed.substring(installed.indexOf('[', installed.indexOf("CWWKF0012I")) + 1,
                installed.lastIndexOf(']')).split(",")).map(String::trim).collect(Collectors.toCollection(TreeSet::new));
        for (String f : List.of("servlet-6.1", "cdi-4.1", "concurrent-3.1", "persistenceContainer-3.2", "jsonp-2.1", "jdbc-4.3",
                "mpConfig-3.1", "mpReactiveMessaging-3.0", "mpHealth-4.0", "mpMetrics-5.1", "mpTelemetry-2.1")) {
            assertTrue(features.contains(f), f + " among " + features);
        }
        for (String f : List.of("servlet-6.0", "cdi-4.0", "concurrent-3.0", "persistenceContainer-3.1")) {
            assertTrue(!features.contains(f), f + " (Jakarta EE 10) among " + features);
        }
    }

    /**
     * After the payments and the refusals: the guard's metrics and the connector's dead letters (the
     * CONFLICT and the REJECTED payment) on /metrics, and readiness UP with the library's checks.
     */
    @Test
    @Order(5)
    void theGuardsMetricsAndHealthChecksAnswerOnJakartaEe11() throws Exception {
        List<PrometheusText.Sample> metrics = PrometheusText.parse(get("/metrics?scope=application"));
        double processed = PrometheusText.sum(metrics, "onceonly_messages_total", "consumer", "payments", "outcome", "PROCESSED");
        assertTrue(processed >= PAYMENTS, "onceonly_messages_total{outcome=PROCESSED} = " + processed);
        assertEquals(1.0, PrometheusText.sum(metrics, "onceonly_dead_letters_total", "channel", "payments", "reason", "conflict"));
        assertEquals(1.0, PrometheusText.sum(metrics, "onceonly_dead_letters_total", "channel", "payments", "reason", "rejected"));
        String ready = get("/health/ready");
        assertTrue(ready.contains("\"name\":\"onceonly-readiness\"") && ready.contains("\"ledger\":\"UP\"")
                && ready.contains("\"rabbitmq\":\"UP\"") && ready.contains("\"claim-store:redis\":\"UP\""), ready);
    }

    private static String get(String path) throws Exception {
        HttpResponse<String> r = HTTP.send(HttpRequest.newBuilder(URI.create("http://localhost:" + PORT + path))
                .timeout(Duration.ofSeconds(30)).build(), HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), path + ": " + r.body());
        return r.body();
    }
}
