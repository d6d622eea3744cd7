package dev.onceonly.it;

import dev.onceonly.internal.observability.MetricCatalogue;
import dev.onceonly.testing.Eventually;
import dev.onceonly.testing.PrometheusText;
import dev.onceonly.testing.OtlpReceiver;
import dev.onceonly.testing.TestRedis;
import org.junit.jupiter.api.Test;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Metrics and health on the main test server. Its MicroProfile Telemetry exports metrics over OTLP
 * to the receiver this test runs (it-server.env), and its claim store is the Redis the build
 * started on its own port, which this test stops and starts again (with the build's pid file, so
 * that the build stops it afterwards: src/test/redis/it-redis.xml).
 */
class ObservabilityIT {

    private static final String BASE = "http://localhost:" + System.getProperty("http.port", "9080");
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

    @Test
    void metricsCountEveryOutcomeByConsumerAndLayer() throws Exception {
        try (OtlpReceiver otlp = new OtlpReceiver(Integer.getInteger("onceonly.test.otlp.port", 4319))) {
            // The exporter pushes cumulative totals every second: wait for the first push, then count from there.
            Eventually.await("a first metrics export", Duration.ofSeconds(60), otlp::snapshot, s -> !s.isEmpty());
            Map<String, Long> before = otlp.snapshot();

            LedgerContract.Payment p = LedgerContract.Payment.of(10);
            assertEquals(200, post(p.body()));                              // PROCESSED
            p.awaitDoneInRedis();                                           // (a copy before the done mark is BUSY)
            assertEquals(200, post(p.body()));                              // DUPLICATE, caught by Redis
            assertEquals(422, post(p.withAmount(11)));                        // CONFLICT
            assertEquals(422, post("{\"amount\":10}"));                                 // REJECTED
            try (var redis = TestRedis.client()) {                            // Redis forgets: the ledger catches it
                redis.keys("oo:payments:*").forEach(redis::del);
            }
            assertEquals(200, post(p.body()));                              // DUPLICATE, caught by the ledger

            Map<String, Long> expected = Map.of(
                    messages("PROCESSED", "NONE"), 1L,
                    messages("DUPLICATE", "CLAIM_STORE"), 1L,
                    messages("DUPLICATE", "LEDGER"), 1L,
                    messages("CONFLICT", "CLAIM_STORE"), 1L,
                    messages("REJECTED", "NONE"), 1L);
            Eventually.await("the five outcomes exported", Duration.ofSeconds(60), otlp::snapshot,
                    now -> expected.entrySet().stream().allMatch(e -> delta(now, before, e.getKey()) == e.getValue()));
            Map<String, Long> after = otlp.snapshot();
            long guarded = after.entrySet().stream()
                    .filter(e -> e.getKey().startsWith("onceonly.guard.duration.count{consumer=payments"))
                    .mapToLong(e -> e.getValue() - before.getOrDefault(e.getKey(), 0L)).sum();
            assertEquals(5, guarded, "the guard's own time recorded once per message");
            assertTrue(delta(after, before, "onceonly.ledger.decisions{consumer=payments, decision=DUPLICATE}") >= 1, after.toString());
        }
    }

    /**
     * The same measurements on {@code /metrics} (mpMetrics-5.1 beside mpTelemetry-2.0), in Prometheus's
     * text format, under the catalogue's names: a message processed, then its duplicate.
     */
    @Test
    void metricsEndpointServesTheCataloguedNamesWithTheirTags() throws Exception {
        LedgerContract.Payment p = LedgerContract.Payment.of(12);
        List<PrometheusText.Sample> before = scrape();
        assertEquals(200, post(p.body()));
        p.awaitDoneInRedis();
        assertEquals(200, post(p.body()));
        List<PrometheusText.Sample> after = scrape();
        String messages = MetricCatalogue.MESSAGES.prometheusName();
        String[] processed = {"consumer", "payments", "mp_scope", "application", "outcome", "PROCESSED", "layer", "NONE", "retryable", "true"};
        String[] duplicate = {"consumer", "payments", "mp_scope", "application", "outcome", "DUPLICATE", "layer", "CLAIM_STORE", "retryable", "true"};
        assertEquals(1.0, delta(after, before, messages, processed), after.toString());
        assertEquals(1.0, delta(after, before, messages, duplicate), after.toString());
        String guarded = MetricCatalogue.GUARD_DURATION.prometheusName() + "_count";
        assertEquals(1.0, delta(after, before, guarded, "consumer", "payments", "outcome", "PROCESSED"), after.toString());
        assertEquals(1.0, delta(after, before, guarded, "consumer", "payments", "outcome", "DUPLICATE"), after.toString());
        assertTrue(PrometheusText.sum(after, MetricCatalogue.LEASE_RENEWALS.prometheusName(), "consumer", "payments") >= 0,
                "a known consumer's lease renewals are there from the start: " + after);
    }

    /** The application scope of {@code /metrics}, in Prometheus's format (the feature's default). */
    private List<PrometheusText.Sample> scrape() throws Exception {
        HttpResponse<String> r = get("/metrics?scope=application");
        assertEquals(200, r.statusCode(), r.body());
        return PrometheusText.parse(r.body());
    }

    private static double delta(List<PrometheusText.Sample> after, List<PrometheusText.Sample> before, String name, String... labels) {
        double was = PrometheusText.sum(before, name, labels);
        return PrometheusText.sum(after, name, labels) - (Double.isNaN(was) ? 0 : was);
    }

    @Test
    void theGuardsPhasesAreSpansInsideTheRequestsTrace() throws Exception {
        try (OtlpReceiver otlp = new OtlpReceiver(Integer.getInteger("onceonly.test.otlp.port", 4319))) {
            // The request carries a trace of its own (W3C traceparent), so spans that earlier tests'
            // requests export late cannot be taken for this one's.
            String trace = randomHex(16);
            String callerSpan = randomHex(8);
            String id = "t-" + UUID.randomUUID();
            assertEquals(200, post("{\"paymentId\":\"" + id + "\",\"amount\":10}", "traceparent", "00-" + trace + "-" + callerSpan + "-01"));
            List<OtlpReceiver.ReceivedSpan> spans = Eventually.await("the request's span and the guard's three spans", Duration.ofSeconds(60),
                    () -> otlp.spans().stream().filter(s -> s.traceId().equals(trace)).toList(),
                    found -> found.stream().map(OtlpReceiver.ReceivedSpan::name).collect(Collectors.toSet())
                            .containsAll(Set.of("onceonly.claim", "onceonly.ledger", "onceonly.finalise"))
                            && found.stream().anyMatch(s -> s.kind().equals("SPAN_KIND_SERVER")));
            OtlpReceiver.ReceivedSpan request = spans.stream().filter(s -> s.kind().equals("SPAN_KIND_SERVER")).findFirst().orElseThrow();
            assertEquals(callerSpan, request.parentSpanId(), "the server span continues the caller's trace: " + spans);
            for (String phase : List.of("onceonly.claim", "onceonly.ledger", "onceonly.finalise")) {
                OtlpReceiver.ReceivedSpan span = spans.stream().filter(s -> s.name().equals(phase)).findFirst().orElseThrow();
                assertEquals("payments", span.attributes().get("onceonly.consumer"), phase);
                assertEquals(request.spanId(), span.parentSpanId(), phase + " is a child of the request's span: " + spans);
            }
        }
    }

    /**
     * One trace across the broker: the request publishes an order (the demo's outgoing channel), the
     * guarded inventory consumer handles it and sends order.reserved through the outbox, and the
     * guarded reserved consumer handles that. Every span hangs on the previous one: request (SERVER,
     * the caller's child) → publish (PRODUCER) → inventory process (CONSUMER) → onceonly.claim of
     * consumer inventory, and → create (PRODUCER, the outbox send) → reserved process (CONSUMER) →
     * onceonly.claim of consumer reserved. A first attempt the demo fails on purpose
     * (demo.fail-first-attempt-percent) comes back as a retry copy carrying the same headers: each
     * of its consumer spans is a child of the publish span too.
     */
    @Test
    void oneTraceCrossesTheBrokerFromThePublishThroughTheGuardedConsumerToItsOutboxEvent() throws Exception {
        try (OtlpReceiver otlp = new OtlpReceiver(Integer.getInteger("onceonly.test.otlp.port", 4319))) {
            String trace = randomHex(16);
            String callerSpan = randomHex(8);
            String order = "{\"orderId\":\"trace-" + UUID.randomUUID() + "\",\"sku\":\"trace-widget\",\"quantity\":1}";
            assertEquals(200, postTo("/api/orders", order, "traceparent", "00-" + trace + "-" + callerSpan + "-01"));
            // Spans are exported as they end, which is not the order of the chain: wait for its ends and the link between them.
            List<OtlpReceiver.ReceivedSpan> spans = Eventually.await("the trace from the request to the reserved consumer's claim",
                    Duration.ofSeconds(60), () -> otlp.spans().stream().filter(s -> s.traceId().equals(trace)).toList(),
                    found -> found.stream().anyMatch(s -> claimOf(s, "reserved") && hasParent(found, s, "SPAN_KIND_CONSUMER"))
                            && found.stream().anyMatch(s -> s.name().endsWith(" create") && hasParent(found, s, "SPAN_KIND_CONSUMER"))
                            && found.stream().anyMatch(s -> s.parentSpanId().equals(callerSpan)));
            OtlpReceiver.ReceivedSpan request = only(spans, s -> s.kind().equals("SPAN_KIND_SERVER") && s.parentSpanId().equals(callerSpan));
            OtlpReceiver.ReceivedSpan publish = only(spans, s -> s.kind().equals("SPAN_KIND_PRODUCER") && s.name().endsWith(" publish")
                    && s.parentSpanId().equals(request.spanId()));
            assertEquals("rabbitmq", publish.attributes().get("messaging.system"), publish.toString());
            List<OtlpReceiver.ReceivedSpan> attempts = spans.stream().filter(s -> s.kind().equals("SPAN_KIND_CONSUMER")
                    && s.parentSpanId().equals(publish.spanId())).toList();
            assertTrue(!attempts.isEmpty() && attempts.stream().allMatch(s -> s.name().endsWith(" process")
                    && "rabbitmq".equals(s.attributes().get("messaging.system"))), "the inventory consumer's span(s) under the publish: " + spans);
            Set<String> attemptIds = attempts.stream().map(OtlpReceiver.ReceivedSpan::spanId).collect(Collectors.toSet());
            List<OtlpReceiver.ReceivedSpan> inventoryClaims = spans.stream().filter(s -> claimOf(s, "inventory")).toList();
            assertTrue(!inventoryClaims.isEmpty() && inventoryClaims.stream().allMatch(s -> attemptIds.contains(s.parentSpanId())),
                    "onceonly.claim of inventory inside its consumer span: " + spans);
            OtlpReceiver.ReceivedSpan create = only(spans, s -> s.kind().equals("SPAN_KIND_PRODUCER") && s.name().endsWith(" create"));
            assertTrue(attemptIds.contains(create.parentSpanId()), "the outbox send inside the inventory consumer's span: " + spans);
            OtlpReceiver.ReceivedSpan reserved = only(spans, s -> s.kind().equals("SPAN_KIND_CONSUMER")
                    && s.parentSpanId().equals(create.spanId()));
            OtlpReceiver.ReceivedSpan reservedClaim = only(spans, s -> claimOf(s, "reserved"));
            assertEquals(reserved.spanId(), reservedClaim.parentSpanId(), "onceonly.claim of reserved inside its consumer span: " + spans);
        }
    }

    /**
     * Whether {@code span}'s parent, of {@code kind}, has arrived too. A consumer span ends (and is
     * exported) after the claim span inside it, often in a later export batch.
     */
    private static boolean hasParent(List<OtlpReceiver.ReceivedSpan> found, OtlpReceiver.ReceivedSpan span, String kind) {
        return found.stream().anyMatch(p -> p.kind().equals(kind) && p.spanId().equals(span.parentSpanId()));
    }

    private static boolean claimOf(OtlpReceiver.ReceivedSpan span, String consumer) {
        return span.name().equals("onceonly.claim") && consumer.equals(span.attributes().get("onceonly.consumer"));
    }

    private static OtlpReceiver.ReceivedSpan only(List<OtlpReceiver.ReceivedSpan> spans, Predicate<OtlpReceiver.ReceivedSpan> which) {
        List<OtlpReceiver.ReceivedSpan> found = spans.stream().filter(which).toList();
        assertEquals(1, found.size(), "exactly one such span among " + spans);
        return found.get(0);
    }

    private static String randomHex(int bytes) {
        byte[] b = new byte[bytes];
        new SecureRandom().nextBytes(b);
        return HexFormat.of().formatHex(b);
    }

    @Test
    void readinessGoesDownWithRedisAndComesBackWhileLivenessStaysUp() throws Exception {
        String ready = get("/health/ready").body();
        assertTrue(ready.contains("\"status\":\"UP\"") && ready.contains("\"ledger\":\"UP\"") && ready.contains("\"rabbitmq\":\"UP\""), ready);
        assertTrue(ready.contains("\"name\":\"onceonly-readiness\""), ready);
        int port = Integer.getInteger("onceonly.test.redis.port", 6390);
        exec("redis-cli", "-p", Integer.toString(port), "shutdown", "nosave");
        try {
            HttpResponse<String> down = Eventually.await("readiness DOWN", Duration.ofSeconds(60), () -> get("/health/ready"),
                    r -> r.statusCode() == 503);
            // The probe names the deployment and the node that does not answer, host and port only.
            assertTrue(down.body().contains("\"claim-store:redis\":\"DOWN: standalone 127.0.0.1:" + port + " does not answer PING"),
                    down.body());
            HttpResponse<String> live = get("/health/live");
            assertEquals(200, live.statusCode(), live.body());
            assertTrue(live.body().contains("\"name\":\"onceonly-liveness\""), live.body());
        } finally {
            String pidFile = Path.of(System.getProperty("onceonly.test.redis.pidfile", "target/it-redis/redis.pid"))
                    .toAbsolutePath().toString();
            exec("redis-server", "--port", Integer.toString(port), "--bind", "127.0.0.1", "--daemonize", "yes",
                    "--pidfile", pidFile, "--save", "", "--appendonly", "no");
        }
        HttpResponse<String> up = Eventually.await("readiness UP again", Duration.ofSeconds(60), () -> get("/health/ready"),
                r -> r.statusCode() == 200);
        assertTrue(up.body().contains("\"claim-store:redis\":\"UP\""), up.body());
    }

    private static String messages(String outcome, String layer) {
        boolean retryable = !outcome.equals("CONFLICT") && !outcome.equals("REJECTED");
        return "onceonly.messages{consumer=payments, layer=" + layer + ", outcome=" + outcome + ", retryable=" + retryable + "}";
    }

    private static long delta(Map<String, Long> now, Map<String, Long> before, String key) {
        return now.getOrDefault(key, 0L) - before.getOrDefault(key, 0L);
    }

    /** POSTs a payment; {@code headers} are extra name, value pairs. */
    private int post(String body, String... headers) throws Exception {
        return postTo("/api/payments", body, headers);
    }

    /** POSTs JSON to {@code path}; {@code headers} are extra name, value pairs. */
    private int postTo(String path, String body, String... headers) throws Exception {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create(BASE + path)).header("Content-Type", "application/json");
        for (int i = 0; i < headers.length; i += 2) {
            request.header(headers[i], headers[i + 1]);
        }
        return http.send(request.POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString()).statusCode();
    }

    private HttpResponse<String> get(String path) throws Exception {
        return http.send(HttpRequest.newBuilder(URI.create(BASE + path)).build(), HttpResponse.BodyHandlers.ofString());
    }

    private static void exec(String... command) throws Exception {
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        p.getInputStream().readAllBytes();
        if (!p.waitFor(30, TimeUnit.SECONDS)) {
            p.destroyForcibly();
        }
    }
}
