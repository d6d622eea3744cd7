package dev.onceonly.internal.config;

import dev.onceonly.api.ConflictPolicy;
import dev.onceonly.api.IdempotencyKey;
import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.KeyDeriver;
import dev.onceonly.internal.engine.RetryRule;
import dev.onceonly.internal.support.Durations;
import org.eclipse.microprofile.config.Config;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.function.Function;

import static dev.onceonly.internal.config.ConsumerProperties.*;

/**
 * Resolves and validates the settings of each guarded method ({@link ConsumerProperties}), at
 * startup or, for a method first seen then, at its first call. Every error is an
 * {@link InvalidConfigurationException} naming the property (or the annotation) the value came from.
 *
 * <p>A setting is looked up in this order: {@code onceonly.consumers.<consumer>.<key>}, then
 * {@code onceonly.<key>}, then the {@link IdempotentMessage} annotation, then the built-in default.
 */
public final class ConsumerConfig {

    private final Config config;

    /**
     * A reader of consumers' properties.
     *
     * @param config the application's configuration
     */
    public ConsumerConfig(Config config) {
        this.config = config;
    }

    /**
     * Resolves the settings of one guarded method.
     *
     * @param method the guarded method
     * @param a its annotation (or its class's)
     * @param keyDeriver validates JSON Pointers with the provider used at runtime
     * @return the consumer's settings, validated
     * @throws InvalidConfigurationException naming the first invalid property
     */
    public ConsumerSettings consumer(Method method, IdempotentMessage a, KeyDeriver keyDeriver) {
        String consumer = a.consumer().isEmpty()
                ? method.getDeclaringClass().getSimpleName() + "." + method.getName()
                : a.consumer();
        if (!KeyDeriver.CONSUMER_NAME.matcher(consumer).matches()) {
            throw new InvalidConfigurationException("@IdempotentMessage(consumer) on " + method, consumer,
                    "1 to 100 characters of A-Z a-z 0-9 . _ -");
        }
        boolean hasKeyParameter = Arrays.stream(method.getParameters()).anyMatch(p -> p.isAnnotationPresent(IdempotencyKey.class));

        KeyStrategy annotated = a.keyStrategy();
        KeyStrategy strategy = consumerValue(consumer, KEY_STRATEGY, annotated == KeyStrategy.DEFAULT ? null : annotated.configName(),
                v -> Arrays.stream(KeyStrategy.values()).filter(k -> k != KeyStrategy.DEFAULT && k.configName().equalsIgnoreCase(v)).findFirst().orElse(null),
                "one of " + String.join(", ", KEY_STRATEGY.choices()))
                .orElse(hasKeyParameter ? KeyStrategy.PARAMETER : KeyStrategy.CONTENT);
        if (strategy == KeyStrategy.PARAMETER && !hasKeyParameter) {
            throw new InvalidConfigurationException(propertyOf(consumer, KEY_STRATEGY), "parameter",
                    "a method with an @IdempotencyKey parameter (" + method + " has none)");
        }
        List<String> keyParts = switch (strategy) {
            case HEADER -> list(consumer, KEY_HEADER, a.keyHeader(), null)
                    .orElseThrow(() -> new InvalidConfigurationException(propertyOf(consumer, KEY_HEADER), "",
                            "a header name, or several comma-separated (required with key-strategy=header)"));
            case JSON_POINTER -> list(consumer, KEY_POINTER, a.keyPointer(), keyDeriver)
                    .orElseThrow(() -> new InvalidConfigurationException(propertyOf(consumer, KEY_POINTER), "",
                            "a JSON Pointer such as /orderId, or several comma-separated (required with key-strategy=json-pointer)"));
            default -> List.of();
        };
        boolean fallback = consumerValue(consumer, MISSING_KEY, null,
                v -> v.equalsIgnoreCase("content") ? Boolean.TRUE : v.equalsIgnoreCase("reject") ? Boolean.FALSE : null,
                String.join(" or ", MISSING_KEY.choices())).orElse(false);
        Duration lease = consumerDuration(consumer, LEASE, a.lease(), ConsumerSettings.DEFAULT_LEASE);
        if (lease.compareTo(ConsumerSettings.MIN_LEASE) < 0) {
            throw new InvalidConfigurationException(propertyOf(consumer, LEASE), Durations.format(lease),
                    "at least " + Durations.format(ConsumerSettings.MIN_LEASE));
        }
        Duration retention = consumerDuration(consumer, RETENTION, a.retention(), ConsumerSettings.DEFAULT_RETENTION);
        if (retention.compareTo(lease) < 0) {
            throw new InvalidConfigurationException(propertyOf(consumer, RETENTION), Durations.format(retention),
                    "a duration not shorter than the lease (" + Durations.format(lease) + ")");
        }
        boolean ledger = consumerValue(consumer, LEDGER, null, ConfigReader::parseBoolean, "true or false").orElse(false);
        StoreFailurePolicy policy = consumerValue(consumer, STORE_FAILURE, null,
                v -> v.equalsIgnoreCase("reject") ? StoreFailurePolicy.REJECT : v.equalsIgnoreCase("ledger-only") ? StoreFailurePolicy.LEDGER_ONLY : null,
                String.join(" or ", STORE_FAILURE.choices())).orElse(StoreFailurePolicy.REJECT);
        if (policy == StoreFailurePolicy.LEDGER_ONLY && !ledger) {
            throw new InvalidConfigurationException(propertyOf(consumer, STORE_FAILURE), "ledger-only",
                    "reject, because the ledger is off for this consumer (ledger-only needs ledger=true)");
        }
        // The application's classes, and the JSON APIs it has, are visible from the guarded method's own loader.
        ClassLoader loader = method.getDeclaringClass().getClassLoader();
        RetryRule retryRule = new RetryRule(consumerClasses(consumer, RETRY_FOR, a.retryFor(), loader),
                consumerClasses(consumer, NO_RETRY_FOR, a.noRetryFor(), loader), RetryRule.defaultsVisibleTo(loader));
        ConflictPolicy conflict = consumerValue(consumer, CONFLICT,
                a.conflict() == ConflictPolicy.DEFAULT ? null : a.conflict().configName(),
                v -> Arrays.stream(ConflictPolicy.values()).filter(c -> c != ConflictPolicy.DEFAULT && c.configName().equalsIgnoreCase(v))
                        .findFirst().orElse(null),
                String.join(" or ", CONFLICT.choices())).orElse(ConflictPolicy.STRICT);
        List<String> conflictFields = conflictFields(consumer, strategy, conflict, a.conflictFields(), keyDeriver);
        return new ConsumerSettings(consumer, strategy, keyParts, fallback, conflict, conflictFields, lease, retention, policy, ledger,
                retryRule);
    }

    /**
     * The consumer's {@code conflict-fields}: none for the content key, whose key already covers the
     * body. Set for the consumer itself (property or annotation) on a content key, they stop the
     * start; the global {@code onceonly.conflict-fields} applies to explicit keys only, so that it
     * can be a default for an application that also has content-key consumers.
     */
    private List<String> conflictFields(String consumer, KeyStrategy strategy, ConflictPolicy conflict, String annotated,
                                        KeyDeriver keyDeriver) {
        Optional<ConfigReader.Entry> entry = consumerEntry(consumer, CONFLICT_FIELDS, annotated);
        if (entry.isEmpty()) {
            return List.of();
        }
        String property = entry.get().property();
        if (strategy == KeyStrategy.CONTENT) {
            if (property.equals(OnceOnlyConfig.PREFIX + CONFLICT_FIELDS.key())) {
                return List.of();
            }
            throw new InvalidConfigurationException(property, entry.get().value(),
                    "no conflict fields with key-strategy=content: the key is the body's hash, so a copy under it never differs");
        }
        if (conflict == ConflictPolicy.IGNORE) {
            throw new InvalidConfigurationException(property, entry.get().value(), "no conflict fields, because "
                    + propertyOf(consumer, CONFLICT) + "=ignore compares no bodies at all (set it to strict to compare these fields)");
        }
        return parts(entry.get(), keyDeriver);
    }

    /**
     * A comma-separated list (key parts, conflict fields), from configuration or the annotation.
     *
     * @param pointers validates JSON Pointers; {@code null} for header names
     * @return the parts in the order written, empty when not set
     */
    private Optional<List<String>> list(String consumer, Property p, String annotated, KeyDeriver pointers) {
        return consumerEntry(consumer, p, annotated).map(e -> parts(e, pointers));
    }

    /**
     * Splits and checks a list: every part non-empty (trimmed) and written once; JSON Pointers
     * starting with {@code /} and valid RFC 6901. A comma always separates: a header or member name
     * holding a comma cannot be listed.
     */
    private static List<String> parts(ConfigReader.Entry entry, KeyDeriver pointers) {
        String what = pointers == null ? "header names" : "JSON Pointers such as /tenant,/orderId";
        List<String> parts = new ArrayList<>();
        for (String raw : entry.value().split(",", -1)) {
            String part = raw.trim();
            if (part.isEmpty()) {
                throw new InvalidConfigurationException(entry.property(), entry.value(), "comma-separated " + what + " without an empty one");
            }
            if (parts.contains(part)) {
                throw new InvalidConfigurationException(entry.property(), entry.value(),
                        "comma-separated " + what + ", each once ('" + part + "' is listed twice)");
            }
            if (pointers != null) {
                try {
                    if (!part.startsWith("/")) {
                        throw new IllegalArgumentException("not a member pointer");
                    }
                    pointers.validatePointer(part);
                } catch (IllegalArgumentException e) {
                    throw new InvalidConfigurationException(entry.property(), entry.value(),
                            "comma-separated RFC 6901 JSON Pointers, each starting with / ('" + part + "' is not one)");
                }
            }
            parts.add(part);
        }
        return List.copyOf(parts);
    }

    /**
     * A per-consumer list of exception classes: the property's comma-separated class names, resolved
     * with {@code loader} (not initialised), else the annotation's classes. A name that does not load
     * or is not a {@link Throwable} names the property it was written under.
     */
    private List<Class<? extends Throwable>> consumerClasses(String consumer, Property p, Class<? extends Throwable>[] annotated,
                                                           ClassLoader loader) {
        Optional<ConfigReader.Entry> raw = consumerProperty(consumer, p);
        if (raw.isEmpty()) {
            return List.of(annotated);
        }
        List<Class<? extends Throwable>> classes = new ArrayList<>();
        for (String className : raw.get().value().split(",")) {
            String trimmed = className.trim();
            if (trimmed.isEmpty()) {
                continue;
            }
            Class<?> c;
            try {
                c = Class.forName(trimmed, false, loader);
            } catch (ClassNotFoundException | LinkageError e) {
                throw new InvalidConfigurationException(raw.get().property(), trimmed,
                        "comma-separated names of exception classes the application can load, e.g. java.lang.IllegalArgumentException");
            }
            if (!Throwable.class.isAssignableFrom(c)) {
                throw new InvalidConfigurationException(raw.get().property(), trimmed,
                        "comma-separated names of exception classes (subclasses of java.lang.Throwable)");
            }
            classes.add(c.asSubclass(Throwable.class));
        }
        return classes;
    }

    /**
     * The property a consumer's ledger setting was read from, for error messages.
     *
     * @param consumer the consumer name
     * @return {@code onceonly.consumers.<consumer>.ledger}, or {@code onceonly.ledger} when only that one is set
     */
    public String ledgerProperty(String consumer) {
        return propertyOf(consumer, LEDGER);
    }

    /** The property a per-consumer value was read from: the consumer's own unless only the global one is set. */
    private String propertyOf(String consumer, Property p) {
        return reader(consumer).property(p);
    }

    private <T> Optional<T> consumerValue(String consumer, Property p, String annotationValue,
                                          Function<String, T> parse, String expected) {
        Optional<ConfigReader.Entry> raw = consumerEntry(consumer, p, annotationValue);
        if (raw.isEmpty()) {
            return Optional.empty();
        }
        T value = parse.apply(raw.get().value().trim());
        if (value == null) {
            throw new InvalidConfigurationException(raw.get().property(), raw.get().value(), expected);
        }
        return Optional.of(value);
    }

    /** A per-consumer setting from configuration, else the annotation's value (empty: not set there). */
    private Optional<ConfigReader.Entry> consumerEntry(String consumer, Property p, String annotationValue) {
        Optional<ConfigReader.Entry> raw = consumerProperty(consumer, p);
        if (raw.isEmpty() && annotationValue != null && !annotationValue.isEmpty()) {
            return Optional.of(new ConfigReader.Entry("@IdempotentMessage(" + p.key() + ") of consumer " + consumer, annotationValue));
        }
        return raw;
    }

    /** A per-consumer setting from configuration: the consumer's own property, else the global one; trimmed. */
    private Optional<ConfigReader.Entry> consumerProperty(String consumer, Property p) {
        return reader(consumer).entry(p).map(e -> new ConfigReader.Entry(e.property(), e.value().trim()));
    }

    /** The reader of one consumer's properties: {@code onceonly.consumers.<consumer>.<key>}, then {@code onceonly.<key>}. */
    ConfigReader reader(String consumer) {
        String own = ConsumerProperties.CONSUMERS + consumer + ".";
        return new ConfigReader(p -> value(own + p.key()).or(() -> value(OnceOnlyConfig.PREFIX + p.key())), p -> own + p.key());
    }

    private Optional<ConfigReader.Entry> value(String name) {
        return config.getOptionalValue(name, String.class).filter(v -> !v.isBlank()).map(v -> new ConfigReader.Entry(name, v));
    }

    private Duration consumerDuration(String consumer, Property p, String annotationValue, Duration fallback) {
        return consumerValue(consumer, p, annotationValue, Durations::parse, Durations.ACCEPTED).orElse(fallback);
    }
}
