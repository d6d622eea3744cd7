package dev.onceonly.testing;

import com.sun.net.httpserver.HttpServer;
import io.opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest;
import io.opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest;
import io.opentelemetry.proto.common.v1.KeyValue;
import io.opentelemetry.proto.metrics.v1.Metric;
import io.opentelemetry.proto.metrics.v1.NumberDataPoint;
import io.opentelemetry.proto.metrics.v1.HistogramDataPoint;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A minimal OpenTelemetry collector for tests: receives OTLP/HTTP protobuf exports, keeps the
 * latest cumulative value of every sum and histogram count by metric name and attributes, and every
 * span.
 */
public final class OtlpReceiver implements AutoCloseable {

    /** One span as exported: ids in hex, attributes as strings. */
    public record ReceivedSpan(String name, String traceId, String spanId, String parentSpanId, String kind,
                               Map<String, String> attributes) {
    }

    private final HttpServer server;
    private final Map<String, Long> latest = new ConcurrentHashMap<>();
    private final List<ReceivedSpan> spans = new CopyOnWriteArrayList<>();

    public OtlpReceiver(int port) throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 0);
        server.createContext("/v1/metrics", exchange -> {
            try (InputStream in = exchange.getRequestBody()) {
                record(ExportMetricsServiceRequest.parseFrom(in.readAllBytes()));
            }
            exchange.sendResponseHeaders(200, 0); // an empty ExportMetricsServiceResponse
            exchange.close();
        });
        server.createContext("/v1/traces", exchange -> {
            try (InputStream in = exchange.getRequestBody()) {
                ExportTraceServiceRequest.parseFrom(in.readAllBytes()).getResourceSpansList().forEach(rs ->
                        rs.getScopeSpansList().forEach(ss -> ss.getSpansList().forEach(sp -> {
                            Map<String, String> attrs = new TreeMap<>();
                            sp.getAttributesList().forEach(kv -> attrs.put(kv.getKey(), kv.getValue().getStringValue()));
                            spans.add(new ReceivedSpan(sp.getName(), HexFormat.of().formatHex(sp.getTraceId().toByteArray()),
                                    HexFormat.of().formatHex(sp.getSpanId().toByteArray()),
                                    HexFormat.of().formatHex(sp.getParentSpanId().toByteArray()), sp.getKind().name(), attrs));
                        })));
            }
            exchange.sendResponseHeaders(200, 0);
            exchange.close();
        });
        server.createContext("/", exchange -> {
            exchange.sendResponseHeaders(200, 0);
            exchange.close();
        });
        server.start();
    }

    private void record(ExportMetricsServiceRequest request) {
        request.getResourceMetricsList().forEach(rm -> rm.getScopeMetricsList().forEach(sm -> {
            for (Metric m : sm.getMetricsList()) {
                if (m.hasSum()) {
                    for (NumberDataPoint p : m.getSum().getDataPointsList()) {
                        latest.put(key(m.getName(), p.getAttributesList()), p.getAsInt());
                    }
                } else if (m.hasHistogram()) {
                    for (HistogramDataPoint p : m.getHistogram().getDataPointsList()) {
                        latest.put(key(m.getName() + ".count", p.getAttributesList()), p.getCount());
                    }
                }
            }
        }));
    }

    /** {@code name{k1=v1,k2=v2}} with attributes sorted by key. */
    public static String key(String name, Iterable<KeyValue> attributes) {
        Map<String, String> sorted = new TreeMap<>();
        attributes.forEach(kv -> sorted.put(kv.getKey(), kv.getValue().getStringValue()));
        return name + sorted;
    }

    /** The latest cumulative value, 0 when never exported. Key as built by {@link #key}: e.g. {@code onceonly.messages{consumer=payments, ...}}. */
    public long value(String name, Map<String, String> attributes) {
        return latest.getOrDefault(name + new TreeMap<>(attributes), 0L);
    }

    public List<ReceivedSpan> spans() {
        return List.copyOf(spans);
    }

    public Map<String, Long> snapshot() {
        return Map.copyOf(latest);
    }

    @Override
    public void close() {
        server.stop(0);
    }
}
