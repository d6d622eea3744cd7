package dev.onceonly.internal.observability;

import jakarta.json.Json;
import jakarta.json.JsonArray;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import jakarta.json.JsonValue;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Grafana dashboard and the Prometheus alert rules in {@code ops/} query only what OnceOnly
 * records: every {@code onceonly_*} name in an expression is a {@link MetricCatalogue} metric (a
 * timer's {@code _count}, {@code _sum}, {@code _max}, {@code _bucket} series included), and every
 * label it selects or groups by is one of that metric's tags or one the exposition adds.
 */
class MetricFilesTest {

    private static final Path DASHBOARD = Path.of("ops", "grafana", "onceonly-dashboard.json");
    private static final Path ALERTS = Path.of("ops", "prometheus", "onceonly-alerts.yml");

    private static final Pattern METRIC = Pattern.compile("\\b(onceonly_[a-z0-9_]+)(\\{([^}]*)})?");
    private static final Pattern MATCHER = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)\\s*(=~|!=|!~|=)");
    private static final Pattern GROUPING = Pattern.compile("\\b(?:by|without)\\s*\\(([^)]*)\\)");
    /** Labels the exposition adds: MicroProfile Metrics' scope and application, a timer's quantile and bucket bound. */
    private static final Set<String> ADDED = Set.of("mp_scope", "mp_app", "quantile", "le");
    private static final List<String> TIMER_SERIES = List.of("_count", "_sum", "_max", "_bucket");

    /** {@return what is wrong with {@code expr}: unknown metrics or labels; empty when nothing} */
    static List<String> problems(String expr) {
        List<String> problems = new ArrayList<>();
        Set<String> tags = new HashSet<>(ADDED);
        Matcher m = METRIC.matcher(expr);
        boolean any = false;
        while (m.find()) {
            any = true;
            MetricCatalogue metric = metric(m.group(1));
            if (metric == null) {
                problems.add(m.group(1) + " is not in MetricCatalogue: " + expr);
                continue;
            }
            Set<String> own = new HashSet<>(ADDED);
            metric.tags().forEach(t -> own.add(t.key()));
            tags.addAll(own);
            if (m.group(3) != null) {
                Matcher l = MATCHER.matcher(m.group(3));
                while (l.find()) {
                    if (!own.contains(l.group(1))) {
                        problems.add(m.group(1) + " has no tag " + l.group(1) + ": " + expr);
                    }
                }
            }
        }
        if (!any) {
            problems.add("names no onceonly_ metric: " + expr);
        }
        Matcher g = GROUPING.matcher(expr);
        while (g.find()) {
            for (String label : g.group(1).split(",")) {
                if (!label.isBlank() && !tags.contains(label.strip())) {
                    problems.add("groups by " + label.strip() + ", a tag of none of its metrics: " + expr);
                }
            }
        }
        return problems;
    }

    private static MetricCatalogue metric(String name) {
        for (MetricCatalogue metric : MetricCatalogue.values()) {
            if (name.equals(metric.prometheusName())) {
                return metric;
            }
            if (metric.type() == MetricCatalogue.Type.TIMER && name.startsWith(metric.prometheusName())
                    && TIMER_SERIES.contains(name.substring(metric.prometheusName().length()))) {
                return metric;
            }
        }
        return null;
    }

    @Test
    void theCheckerCatchesAnUnknownMetricOrTag() {
        assertEquals(List.of(), problems("sum by (consumer) (rate(onceonly_messages_total{outcome=\"BUSY\"}[5m]))"));
        assertEquals(List.of(), problems("onceonly_guard_duration_seconds{quantile=\"0.99\"} + onceonly_guard_duration_seconds_count"));
        assertFalse(problems("rate(onceonly_messages_dropped_total[5m])").isEmpty());
        assertFalse(problems("onceonly_outbox_pending_total").isEmpty(), "a gauge has no _total");
        assertFalse(problems("onceonly_messages_total{queue=\"orders\"}").isEmpty());
        assertFalse(problems("sum by (queue) (onceonly_messages_total)").isEmpty());
        assertFalse(problems("up").isEmpty());
    }

    @Test
    void theDashboardQueriesOnlyCataloguedMetrics() throws IOException {
        JsonObject dashboard;
        try (Reader r = Files.newBufferedReader(DASHBOARD)) {
            dashboard = Json.createReader(r).readObject();
        }
        List<String> exprs = new ArrayList<>();
        collect(dashboard, exprs);
        assertTrue(exprs.size() >= 15, "the dashboard's queries: " + exprs);
        List<String> problems = exprs.stream().flatMap(e -> problems(e).stream()).toList();
        assertEquals(List.of(), problems);
    }

    /** Every {@code expr}, and the template variables' {@code query}, anywhere in the document. */
    private static void collect(JsonValue value, List<String> exprs) {
        if (value instanceof JsonObject o) {
            o.forEach((k, v) -> {
                if ((k.equals("expr") || k.equals("query")) && v instanceof JsonString s && s.getString().contains("onceonly_")) {
                    exprs.add(s.getString());
                } else {
                    collect(v, exprs);
                }
            });
        } else if (value instanceof JsonArray a) {
            a.forEach(v -> collect(v, exprs));
        }
    }

    @Test
    @SuppressWarnings("unchecked")
    void theAlertRulesQueryOnlyCataloguedMetrics() throws IOException {
        Map<String, Object> file;
        try (Reader r = Files.newBufferedReader(ALERTS)) {
            file = new Yaml().load(r);
        }
        List<String> problems = new ArrayList<>();
        Set<String> names = new HashSet<>();
        int rules = 0;
        for (Map<String, Object> group : (List<Map<String, Object>>) file.get("groups")) {
            for (Map<String, Object> rule : (List<Map<String, Object>>) group.get("rules")) {
                rules++;
                assertTrue(names.add((String) rule.get("alert")), "one alert per name: " + rule.get("alert"));
                assertTrue(rule.get("labels") instanceof Map<?, ?> l && l.get("severity") != null, rule.get("alert") + " has a severity");
                problems.addAll(problems((String) rule.get("expr")));
            }
        }
        assertTrue(rules >= 10, "the rules: " + rules);
        assertEquals(List.of(), problems);
    }
}
