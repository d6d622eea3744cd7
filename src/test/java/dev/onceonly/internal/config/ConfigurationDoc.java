package dev.onceonly.internal.config;

import dev.onceonly.internal.rabbitmq.ChannelProperties;
import dev.onceonly.internal.redis.RedisProperties;

import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * Renders {@code docs/configuration.md} from the property catalogue: every {@link PropertySet} of
 * every part, in the order a reader meets them. {@link ConfigurationDocTest} checks the committed
 * document against it.
 */
final class ConfigurationDoc {

    /** Every part's properties; a new catalogue's sets go here (the test finds any left out). */
    static final List<PropertySet> SETS = List.of(OnceOnlyProperties.GLOBAL, ConsumerProperties.CONSUMER,
            RedisProperties.REDIS, OnceOnlyProperties.DATABASE_STORE, OnceOnlyProperties.LEDGER, OnceOnlyProperties.OUTBOX,
            OnceOnlyProperties.JMS, ChannelProperties.CONNECTION, ChannelProperties.COMMON, ChannelProperties.INCOMING,
            ChannelProperties.OUTGOING);

    /** How to rewrite the document after a change to the catalogue. */
    static final String REGENERATE = "mvn -o -q test -Dtest=ConfigurationDocTest -Dconfiguration.write=true";

    private ConfigurationDoc() {
    }

    /** {@return the document} */
    static String render() {
        StringBuilder out = new StringBuilder();
        out.append("# Configuration\n\n")
                .append("<!-- Generated from the property catalogue (dev.onceonly.*.…Properties) by ConfigurationDoc; do not edit.\n")
                .append("     Regenerate: ").append(REGENERATE).append(" -->\n\n")
                .append("Every property OnceOnly reads, from the catalogue its startup validation reads through: a property\n")
                .append("not listed here cannot be read. Everything is validated at startup; an invalid value stops the\n")
                .append("application with a message naming the property (never showing a secret). Blank values count as\n")
                .append("unset. Durations: `500ms`, `30s`, `5m`, `24h`, `7d` or ISO-8601 (`PT30S`).\n");
        for (PropertySet set : SETS) {
            out.append("\n## ").append(set.title()).append("\n\n")
                    .append("Read by `").append(set.readBy()).append("`.");
            if (!set.intro().isEmpty()) {
                out.append(' ').append(set.intro());
            }
            out.append("\n\n| property | type | default | description |\n|---|---|---|---|\n");
            for (Property p : set.properties()) {
                out.append("| ").append(cell(names(set, p))).append(" | ").append(cell(type(p))).append(" | ")
                        .append(cell(fallback(p))).append(" | ").append(cell(p.description())).append(" |\n");
            }
        }
        return out.toString();
    }

    /** The property's names: its own, then the connector-wide ones of a connection setting, then SmallRye's. */
    private static String names(PropertySet set, Property p) {
        List<String> names = new ArrayList<>(List.of(p.name()));
        List<String> smallRye = new ArrayList<>();
        if (p.alias() != null) {
            smallRye.add(p.alias());
        }
        if (set == ChannelProperties.CONNECTION) {
            names.add(ChannelProperties.CONNECTOR_PREFIX + p.key());
            names.add(ChannelProperties.WIDE_PREFIX + p.key());
            String wide = ChannelProperties.SMALLRYE_WIDE_NAMES.get(p.key());
            if (wide != null) {
                smallRye.add(wide);
            }
        }
        String all = names.stream().map(n -> "`" + n + "`").collect(Collectors.joining(", "));
        return smallRye.isEmpty() ? all
                : all + " (SmallRye: " + smallRye.stream().map(n -> "`" + n + "`").collect(Collectors.joining(", ")) + ")";
    }

    private static String type(Property p) {
        return switch (p.type()) {
            case CHOICE -> {
                List<String> c = p.choices().stream().map(v -> "`" + v + "`").toList();
                yield String.join(", ", c.subList(0, c.size() - 1)) + " or " + c.get(c.size() - 1);
            }
            case INTEGER -> p.max() == Long.MAX_VALUE ? p.type().label() + ", at least " + p.min()
                    : p.type().label() + ", " + p.min() + " to " + p.max();
            default -> p.type().label();
        };
    }

    private static String fallback(Property p) {
        if (p.shown() != null) {
            return p.shown();
        }
        return p.fallback() == null ? "none" : "`" + p.fallback() + "`";
    }

    /** A table cell: a pipe, even in code, would end it. */
    private static String cell(String text) {
        return text.replace("|", "\\|");
    }
}
