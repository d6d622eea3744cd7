package dev.onceonly.cdi;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.api.Outbox;
import dev.onceonly.config.OnceOnlyConfig;
import dev.onceonly.engine.ConsumerSettings;
import dev.onceonly.engine.KeyDeriver;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.spi.AfterBeanDiscovery;
import jakarta.enterprise.inject.spi.AfterDeploymentValidation;
import jakarta.enterprise.inject.spi.AnnotatedMethod;
import jakarta.enterprise.inject.spi.AnnotatedType;
import jakarta.enterprise.inject.spi.Extension;
import jakarta.enterprise.inject.spi.ProcessAnnotatedType;
import jakarta.enterprise.inject.spi.ProcessInjectionPoint;
import jakarta.enterprise.inject.spi.WithAnnotations;
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
    /** The one reader of OnceOnly's properties, also for methods resolved after deployment. */
    private volatile OnceOnlyConfig config;
    private volatile OnceOnlyConfig.Global global;
    private volatile OnceOnlyConfig.LedgerSettings ledgerSettings;
    private volatile KeyDeriver keyDeriver;
    private volatile OnceOnlyConfig.OutboxSettings outboxSettings;
    private volatile OnceOnlyConfig.DatabaseStoreSettings databaseStoreSettings;
    private volatile OnceOnlyConfig.JmsSettings jmsSettings;
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
            "dev.onceonly.observability.TelemetryListeners", "io.opentelemetry.api.metrics.Meter");

    /** MicroProfile Health checks, when its API is deployed ({@link HealthChecks} is loaded only then). */
    void healthChecks(@Observes AfterBeanDiscovery abd) {
        if (present("org.eclipse.microprofile.health.HealthCheck")) {
            HealthChecks.register(abd);
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
        config = new OnceOnlyConfig(ConfigProvider.getConfig(getClass().getClassLoader()));
        try {
            global = config.global();
            ledgerSettings = config.ledger();
            outboxSettings = config.outbox();
            databaseStoreSettings = global.store().equals("database") ? config.databaseStore() : null;
            jmsSettings = config.jms();
        } catch (InvalidConfigurationException e) {
            adv.addDeploymentProblem(e);
            return;
        }
        keyDeriver = new KeyDeriver(global.keyPrefix());
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
        ConsumerSettings settings = config.consumer(method, a, keyDeriver);
        return new GuardedMethod(method, settings);
    }

    /** The property a consumer's setting was read from, for error messages. */
    String propertyOf(String consumer, String name) {
        return config.propertyOf(consumer, name);
    }

    /** {@return the global settings, validated at deployment} */
    public OnceOnlyConfig.Global global() {
        return global;
    }

    /** Ledger settings, validated at deployment (used only when a consumer has the ledger on). */
    OnceOnlyConfig.LedgerSettings ledgerSettings() {
        return ledgerSettings;
    }

    /** Outbox settings, validated at deployment (used only when the application injects the outbox). */
    OnceOnlyConfig.OutboxSettings outboxSettings() {
        return outboxSettings;
    }

    /** Settings of the database store, validated at deployment; {@code null} unless {@code onceonly.store=database}. */
    OnceOnlyConfig.JmsSettings jmsSettings() {
        return jmsSettings;
    }

    OnceOnlyConfig.DatabaseStoreSettings databaseStoreSettings() {
        return databaseStoreSettings;
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
                    throw new InvalidConfigurationException(config.propertyOf(late.settings().consumer(), "ledger"), "true",
                            "false for " + m + ", which was first seen at its first call: the ledger starts only when a "
                                    + "consumer found at deployment uses it");
                }
                return late;
            });
        }
        return gm;
    }
}
