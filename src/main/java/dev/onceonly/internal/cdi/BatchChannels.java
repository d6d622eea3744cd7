package dev.onceonly.internal.cdi;

import dev.onceonly.api.IdempotencyKey;
import dev.onceonly.api.InvalidConfigurationException;
import org.eclipse.microprofile.config.Config;

import java.lang.annotation.Annotation;
import java.lang.reflect.Method;
import java.lang.reflect.Parameter;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * Whether a guarded method takes batches: an {@code @Incoming} method whose channel has
 * {@code batch=true} and whose payload parameter is a {@code java.util.List} of payloads. The two
 * must agree, else the deployment fails naming the channel's attribute and the method: a batch
 * handed to a method expecting one payload, or one payload to a method expecting a list, would
 * fail every message.
 */
final class BatchChannels {

    private static final String INCOMING = "org.eclipse.microprofile.reactive.messaging.Incoming";

    private BatchChannels() {
    }

    /**
     * Whether {@code method} takes batches.
     *
     * @return whether it does
     * @throws InvalidConfigurationException when its channel's {@code batch} and its parameters disagree
     */
    static boolean of(Method method, Config config) {
        String channel = incomingChannel(method);
        if (channel == null) {
            return false; // not invoked per channel message: a List parameter is a payload like any other
        }
        boolean listed = method.getParameterCount() > 0 && method.getParameterTypes()[0] == List.class;
        String property = "mp.messaging.incoming." + channel + ".batch";
        Optional<String> raw = config.getOptionalValue(property, String.class).map(v -> v.trim().toLowerCase(Locale.ROOT));
        if (raw.isPresent() && !raw.get().equals("true") && !raw.get().equals("false")) {
            throw new InvalidConfigurationException(property, raw.get(), "true or false");
        }
        boolean batch = raw.map(Boolean::parseBoolean).orElse(false);
        if (batch && !listed) {
            throw new InvalidConfigurationException(property, "true",
                    "false, or a guarded method whose first parameter is a java.util.List of payloads (" + method + ")");
        }
        if (!batch && listed) {
            throw new InvalidConfigurationException(property, raw.orElse("not set"),
                    "true for " + method + ", whose first parameter is a java.util.List: a batch of payloads");
        }
        if (batch) {
            for (Parameter p : method.getParameters()) {
                if (p.isAnnotationPresent(IdempotencyKey.class)) {
                    throw new InvalidConfigurationException("@IdempotencyKey on " + method, p.getName(),
                            "no @IdempotencyKey parameter on a batch method: each message is keyed on its own delivery");
                }
            }
        }
        return batch;
    }

    /** The channel of the method's {@code @Incoming}, or {@code null}: read by name, so that applications without Reactive Messaging never load it. */
    private static String incomingChannel(Method method) {
        for (Annotation a : method.getAnnotations()) {
            if (a.annotationType().getName().equals(INCOMING)) {
                try {
                    return (String) a.annotationType().getMethod("value").invoke(a);
                } catch (ReflectiveOperationException e) {
                    throw new IllegalStateException("@Incoming without a readable value on " + method, e);
                }
            }
        }
        return null;
    }
}
