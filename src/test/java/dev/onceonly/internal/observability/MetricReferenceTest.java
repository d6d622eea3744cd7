package dev.onceonly.internal.observability;

import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashSet;
import java.util.Set;
import java.util.stream.Collectors;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The metric reference in docs/observability.md is what {@link MetricCatalogue} renders, between its
 * two markers; the rest of the document is written by hand. With {@code -Dmetrics.write=true} the
 * part between the markers is rewritten instead.
 */
class MetricReferenceTest {

    private static final Path DOC = Path.of("docs", "observability.md");
    static final String BEGIN = "<!-- metric reference: rendered from MetricCatalogue by MetricReferenceTest; "
            + "regenerate with mvn -o -q test -Dtest=MetricReferenceTest -Dmetrics.write=true -->";
    static final String END = "<!-- end of metric reference -->";

    static String render() {
        StringBuilder md = new StringBuilder();
        md.append("| metric (OpenTelemetry) | Prometheus (`/metrics`) | type | tags | meaning |\n");
        md.append("|---|---|---|---|---|\n");
        for (MetricCatalogue m : MetricCatalogue.values()) {
            String tags = m.tags().isEmpty() ? "none"
                    : m.tags().stream().map(t -> "`" + t.key() + "`").collect(Collectors.joining(", "));
            md.append("| `").append(m.otelName()).append("` | `").append(m.prometheusName()).append("` | ")
                    .append(type(m)).append(" | ").append(tags).append(" | ").append(m.description()).append(" |\n");
        }
        md.append("\n| tag | values |\n|---|---|\n");
        for (MetricCatalogue.Tag t : MetricCatalogue.Tag.values()) {
            md.append("| `").append(t.key()).append("` | ").append(t.meaning()).append(" |\n");
        }
        return md.toString();
    }

    private static String type(MetricCatalogue m) {
        return switch (m.type()) {
            case COUNTER -> "counter";
            case TIMER -> "timer, seconds (`_count`, `_sum`, `_max`, `quantile`; `_bucket` through an OpenTelemetry collector)";
            case GAUGE -> "gauge";
        };
    }

    @Test
    void theDocumentsReferenceIsWhatTheCatalogueRenders() throws IOException {
        String doc = Files.readString(DOC, StandardCharsets.UTF_8);
        int begin = doc.indexOf(BEGIN);
        int end = doc.indexOf(END);
        assertTrue(begin >= 0 && end > begin, DOC + " has no metric reference between " + BEGIN + " and " + END);
        String rendered = BEGIN + "\n\n" + render() + "\n" + END;
        String committed = doc.substring(begin, end + END.length());
        if (Boolean.getBoolean("metrics.write")) {
            Files.writeString(DOC, doc.substring(0, begin) + rendered + doc.substring(end + END.length()), StandardCharsets.UTF_8);
            return;
        }
        if (!committed.equals(rendered)) {
            fail(DOC + "'s metric reference is out of date with MetricCatalogue (or was edited by hand). Regenerate it with:\n"
                    + "    mvn -o -q test -Dtest=MetricReferenceTest -Dmetrics.write=true");
        }
    }

    /** Prometheus names must not collide once dots become underscores and suffixes are added. */
    @Test
    void everyNameIsListedOnceInEitherForm() {
        Set<String> names = new HashSet<>();
        for (MetricCatalogue m : MetricCatalogue.values()) {
            assertTrue(names.add(m.otelName()), m.otelName());
            assertTrue(names.add(m.prometheusName()), m.prometheusName());
            assertTrue(m.otelName().matches("onceonly(\\.[a-z]+)+"), m.otelName());
        }
    }
}
