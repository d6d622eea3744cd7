package dev.onceonly.internal.cdi;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.api.Outbox;
import dev.onceonly.internal.config.ConfigReader;
import dev.onceonly.internal.config.ConsumerConfig;
import dev.onceonly.internal.config.OnceOnlyConfig;
import dev.onceonly.internal.config.ResultConfig;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.KeyDeriver;
import dev.onceonly.internal.observability.MpMetricsBeans;
import dev.onceonly.internal.redis.RedisConfig;
import dev.onceonly.internal.redis.RedisSettings;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.AfterBeanDiscovery;
import jakarta.enterprise.inject.spi.AfterDeploymentValidation;
import jakarta.enterprise.inject.spi.AnnotatedMethod;
import jakarta.enterprise.inject.spi.AnnotatedType;
import jakarta.enterprise.inject.spi.Extension;
import jakarta.enterprise.inject.spi.ProcessAnnotatedType;
import jakarta.enterprise.inject.spi.ProcessInjectionPoint;
import jakarta.enterprise.inject.spi.WithAnnotations;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.config.ConfigProvider;

import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;

/**
 * Finds every {@link IdempotentMessage} method during deployment and resolves and validates its
 * configuration before the application starts: a misconfigured consumer is a deployment problem
 * (the application does not start) with a message naming the property.
 */
public class OnceOnlyExtension implements Extension {

    private final List<AnnotatedMethod<?>> found = new ArrayList<>();
    private final Map<Method, GuardedMethod> methods = new ConcurrentHashMap<>();
    /** The reader of consumers' properties, also for methods resolved after deployment. */
    private volatile ConsumerConfig consumers;
    /** The application's configuration, read at deployment: a method resolved later reads its channel's there too. */
    private volatile Config config;
    /** The reader of consumers' {@code result.*} properties. */
    private volatile ResultConfig results;
    /** The guard-wide settings, read and validated once at deployment. */
    private volatile OnceOnlyConfig.Settings settings;
    /** Redis's settings, validated at deployment; {@code null} unless {@code onceonly.store=redis}. */
    private volatile RedisSettings redisSettings;
    private volatile KeyDeriver keyDeriver;
    /** Whether the application injects the {@link Outbox} (so the relay starts). */
    private volatile boolean outboxInjected;
    /** Whether a consumer found at deployment uses the ledger (so the runtime starts it). */
    private volatile boolean ledgerAtDeployment;

    void collect(@Observes @WithAnnotations(IdempotentMessage.class) ProcessAnnotatedType<?> pat) {
        AnnotatedType<?> type = pat.getAnnotatedType();
        if (type.isAnnotationPresent(jakarta.interceptor.Interceptor.class)) {
            return; // the guard's own interceptor carries the binding, it is not a consumer
        }
        boolean typeLevel = type.isAnnotationPresent(IdempotentMessage.class);
        for (AnnotatedMethod<?> m : type.getMethods()) {
            boolean business = !Modifier.isStatic(m.getJavaMember().getModifiers())
                    && !Modifier.isPrivate(m.getJavaMember().getModifiers())
                    && m.getJavaMember().getDeclaringClass() != Object.class;
            if (m.isAnnotationPresent(IdempotentMessage.class) || typeLevel && business) {
                found.add(m);
            }
        }
    }

    /** An injection point of the outbox turns it on: the table and the relay are used only then. */
    void outboxUsed(@Observes ProcessInjectionPoint<?, Outbox> pip) {
        outboxInjected = true;
    }

    /** Optional integrations, and the API each needs: MicroProfile Telemetry. */
    private static final Map<String, String> OPTIONAL = Map.of(
            "dev.onceonly.internal.observability.TelemetryListeners", "io.opentelemetry.api.metrics.Meter");

    /** MicroProfile Health checks, when its API is deployed ({@link HealthChecks} is loaded only then). */
    void healthChecks(@Observes AfterBeanDiscovery abd) {
        if (present("org.eclipse.microprofile.health.HealthCheck")) {
            HealthChecks.register(abd);
        }
    }

    /**
     * MicroProfile Metrics' listeners, when its API is deployed ({@link MpMetricsBeans} is loaded
     * only then): beside the OpenTelemetry ones, which follow MicroProfile Telemetry.
     */
    void microProfileMetrics(@Observes AfterBeanDiscovery abd) {
        if (present("org.eclipse.microprofile.metrics.MetricRegistry")) {
            MpMetricsBeans.register(abd);
        }
    }

    /** Keeps optional integrations out when the server feature they build on is not enabled. */
    void vetoUnavailable(@Observes ProcessAnnotatedType<?> pat) {
        String needs = OPTIONAL.get(pat.getAnnotatedType().getJavaClass().getName());
        if (needs != null && !present(needs)) {
            pat.veto();
        }
    }

    private static boolean present(String className) {
        try {
            // Loaded, not looked up as a resource: server features expose their API packages to the
            // application's class loader without always exposing the class files as resources.
            Class.forName(className, false, OnceOnlyExtension.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException | LinkageError e) {
            return false;
        }
    }

    void validate(@Observes AfterDeploymentValidation adv) {
        Config config = ConfigProvider.getConfig(getClass().getClassLoader());
        this.config = config;
        consumers = new ConsumerConfig(config);
        results = new ResultConfig(consumers);
        try {
            settings = new OnceOnlyConfig(config).read();
            redisSettings = settings.global().store().equals("redis") ? RedisConfig.read(ConfigReader.of(config)) : null;
        } catch (InvalidConfigurationException e) {
            adv.addDeploymentProblem(e);
            return;
        }
        keyDeriver = new KeyDeriver(settings.global().keyPrefix());
        Map<String, Method> byConsumer = new HashMap<>();
        for (AnnotatedMethod<?> am : found) {
            Method method = am.getJavaMember();
            try {
                GuardedMethod gm = resolve(method, annotation(am));
                Method other = byConsumer.putIfAbsent(gm.settings().consumer(), method);
                if (other != null && !other.equals(method)) {
                    throw new InvalidConfigurationException("@IdempotentMessage(consumer) on " + method,
                            gm.settings().consumer(), "a consumer name not used by another method (also on " + other + ")");
                }
                methods.put(method, gm);
                ledgerAtDeployment |= gm.settings().ledger();
            } catch (InvalidConfigurationException e) {
                adv.addDeploymentProblem(e);
            }
        }
    }

    private static IdempotentMessage annotation(AnnotatedMethod<?> am) {
        IdempotentMessage a = am.getAnnotation(IdempotentMessage.class);
        return a != null ? a : am.getDeclaringType().getAnnotation(IdempotentMessage.class);
    }

    private GuardedMethod resolve(Method method, IdempotentMessage a) {
        Class<?> returns = method.getReturnType();
        if (CompletionStage.class.isAssignableFrom(returns) || Future.class.isAssignableFrom(returns)
                || returns.getName().startsWith("io.smallrye.mutiny.")
                || returns.getName().startsWith("org.reactivestreams.")) {
            // The claim is finalised when the method returns; an asynchronous result would finish later.
            throw new InvalidConfigurationException("@IdempotentMessage on " + method, returns.getName(),
                    "a synchronous method (void or a plain value); asynchronous results are not supported");
        }
        ConsumerSettings resolved = consumers.consumer(method, a, keyDeriver);
        return new GuardedMethod(method, resolved, BatchChannels.of(method, config), results.results(method, resolved));
    }

    /** The property a consumer's result keeping was read from, for error messages. */
    String resultProperty(String consumer) {
        return results.keepProperty(consumer);
    }

    /** The property a consumer's ledger setting was read from, for error messages. */
    String ledgerProperty(String consumer) {
        return consumers.ledgerProperty(consumer);
    }

    /** {@return the global settings, validated at deployment} */
    public OnceOnlyConfig.Global global() {
        return settings.global();
    }

    /** Ledger settings, validated at deployment (used only when a consumer has the ledger on). */
    OnceOnlyConfig.LedgerSettings ledgerSettings() {
        return settings.ledger();
    }

    /** Outbox settings, validated at deployment (used only when the application injects the outbox). */
    OnceOnlyConfig.OutboxSettings outboxSettings() {
        return settings.outbox();
    }

    /** Settings of guarded JMS listeners, validated at deployment. */
    OnceOnlyConfig.JmsSettings jmsSettings() {
        return settings.jms();
    }

    /** Settings of the database store, validated at deployment; {@code null} unless {@code onceonly.store=database}. */
    OnceOnlyConfig.DatabaseStoreSettings databaseStoreSettings() {
        return settings.databaseStore();
    }

    /** Redis's settings, validated at deployment; {@code null} unless {@code onceonly.store=redis}. */
    RedisSettings redisSettings() {
        return redisSettings;
    }

    /** {@return whether the application injects the {@link Outbox}} */
    boolean outboxInjected() {
        return outboxInjected;
    }

    KeyDeriver keyDeriver() {
        return keyDeriver;
    }

    /** {@return the names of the consumers found at deployment, sorted} */
    public java.util.List<String> consumerNames() {
        return methods.values().stream().map(m -> m.settings().consumer()).sorted().toList();
    }

    /** Every guarded method found at deployment. */
    Map<Method, GuardedMethod> methods() {
        return methods;
    }

    /**
     * The guarded method behind an interception. Methods not seen during deployment (e.g. an
     * inherited method intercepted through a subclass) are resolved on first use.
     */
    GuardedMethod method(Method method) {
        GuardedMethod gm = methods.get(method);
        if (gm == null) {
            // Only here, on first use, is the binding read by reflection; every later call is the lookup above.
            gm = methods.computeIfAbsent(method, m -> {
                IdempotentMessage a = m.getAnnotation(IdempotentMessage.class);
                GuardedMethod late = resolve(m, a != null ? a : m.getDeclaringClass().getAnnotation(IdempotentMessage.class));
                if (late.settings().ledger() && !ledgerAtDeployment) {
                    // The ledger is checked and started at startup, for the consumers found then; this
                    // one would meet no ledger at all (a NullPointerException per message before).
                    throw new InvalidConfigurationException(consumers.ledgerProperty(late.settings().consumer()), "true",
                            "false for " + m + ", which was first seen at its first call: the ledger starts only when a "
                                    + "consumer found at deployment uses it");
                }
                return late;
            });
        }
        return gm;
    }
}
