package dev.onceonly.testing;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/** Samples of Prometheus's text exposition format, as a server's {@code /metrics} answers. */
public final class PrometheusText {

    /** One sample: a series' name, its labels and its value. */
    public record Sample(String name, Map<String, String> labels, double value) {
    }

    private static final Pattern LINE = Pattern.compile("([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\\{(.*)})?\\s+(\\S+)(?:\\s+\\d+)?");
    private static final Pattern LABEL = Pattern.compile("([a-zA-Z_][a-zA-Z0-9_]*)=\"((?:[^\"\\\\]|\\\\.)*)\",?");

    private PrometheusText() {
    }

    /**
     * {@return the samples of {@code text}, comments left out}
     *
     * @param text a scrape's body
     */
    public static List<Sample> parse(String text) {
        List<Sample> samples = new ArrayList<>();
        for (String line : text.split("\n")) {
            if (line.isBlank() || line.startsWith("#")) {
                continue;
            }
            Matcher m = LINE.matcher(line.trim());
            if (!m.matches()) {
                throw new IllegalArgumentException("not a sample line: " + line);
            }
            Map<String, String> labels = new TreeMap<>();
            if (m.group(2) != null) {
                Matcher l = LABEL.matcher(m.group(2));
                while (l.find()) {
                    labels.put(l.group(1), l.group(2));
                }
            }
            samples.add(new Sample(m.group(1), labels, Double.parseDouble(m.group(3))));
        }
        return samples;
    }

    /**
     * {@return the sum of the samples named {@code name} that carry every label of {@code labels}
     * (name, value pairs), whatever other labels they have; {@code NaN} when there is none}
     *
     * @param samples a scrape's samples
     * @param name    the series' name
     * @param labels  label names and values, in pairs
     */
    public static double sum(List<Sample> samples, String name, String... labels) {
        double sum = 0;
        boolean found = false;
        for (Sample s : samples) {
            if (s.name().equals(name) && has(s, labels)) {
                sum += s.value();
                found = true;
            }
        }
        return found ? sum : Double.NaN;
    }

    private static boolean has(Sample s, String... labels) {
        for (int i = 0; i < labels.length; i += 2) {
            if (!labels[i + 1].equals(s.labels().get(labels[i]))) {
                return false;
            }
        }
        return true;
    }
}
