package dev.onceonly.internal.config;

import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.result.ResultKeeper;
import dev.onceonly.internal.result.ResultSettings;

import java.lang.reflect.Method;

import static dev.onceonly.internal.config.ConsumerProperties.RESULT_KEEP;
import static dev.onceonly.internal.config.ConsumerProperties.RESULT_MAX_SIZE;
import static dev.onceonly.internal.config.ConsumerProperties.RESULT_RETENTION;

/**
 * Resolves how each guarded method keeps its results: the {@code result.*} properties of
 * {@link ConsumerProperties}, looked up like every per-consumer property. Errors name the property.
 */
public final class ResultConfig {

    private final ConsumerConfig consumers;

    /**
     * @param consumers the reader of consumers' properties
     */
    public ResultConfig(ConsumerConfig consumers) {
        this.consumers = consumers;
    }

    /**
     * Resolves how one guarded method keeps its results.
     *
     * @param method   the guarded method
     * @param consumer its resolved settings
     * @return the settings, or {@code null} when it keeps none
     * @throws InvalidConfigurationException naming the first invalid property, or the consumer's own
     *         {@code result.keep} on a method that returns nothing (the global one passes such methods by)
     */
    public ResultSettings results(Method method, ConsumerSettings consumer) {
        ConfigReader reader = consumers.reader(consumer.consumer());
        if (!reader.bool(RESULT_KEEP, ResultKeeper.isReplayable(method.getGenericReturnType()))) {
            return null;
        }
        if (method.getReturnType() == void.class || method.getReturnType() == Void.class) {
            // The global onceonly.result.keep is a default for the methods that return something.
            String property = reader.property(RESULT_KEEP);
            if (property.equals(OnceOnlyConfig.PREFIX + RESULT_KEEP.key())) {
                return null;
            }
            throw new InvalidConfigurationException(property, "true", "false, because " + method + " returns nothing to keep");
        }
        return new ResultSettings(reader.intValue(RESULT_MAX_SIZE), reader.duration(RESULT_RETENTION, consumer.retention()));
    }

    /**
     * The property a consumer's result keeping was read from, for error messages.
     *
     * @param consumer the consumer name
     * @return {@code onceonly.consumers.<consumer>.result.keep}, or the global one when only that one is set
     */
    public String keepProperty(String consumer) {
        return consumers.reader(consumer).property(RESULT_KEEP);
    }
}
