package dev.onceonly.internal.config;

import dev.onceonly.api.ConflictPolicy;
import dev.onceonly.api.IdempotencyKey;
import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.StoreFailurePolicy;
import dev.onceonly.internal.cdi.GuardedBean;
import dev.onceonly.internal.cdi.IdempotentMessageInterceptor;
import dev.onceonly.internal.cdi.OnceOnlyExtension;
import dev.onceonly.internal.cdi.OnceOnlyRuntime;
import dev.onceonly.internal.engine.ConsumerSettings;
import dev.onceonly.internal.engine.KeyDeriver;
import dev.onceonly.internal.engine.RetryRule;
import dev.onceonly.internal.redis.RedisSettings;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import org.jboss.weld.environment.se.Weld;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Method;
import java.net.URLClassLoader;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Resolution order and startup validation of MicroProfile Config properties. */
class OnceOnlyConfigTest {

    static class Consumers {
        @IdempotentMessage(consumer = "payments", lease = "10s", retention = "2h")
        public void annotated(String body) {
        }

        @IdempotentMessage
        public void plain(String body) {
        }

        @IdempotentMessage(consumer = "keyed")
        public void keyed(String body, @IdempotencyKey String id) {
        }

        @IdempotentMessage(consumer = "classified", noRetryFor = IllegalStateException.class, retryFor = UncheckedIOException.class)
        public void classified(String body) {
        }

        @IdempotentMessage(consumer = "composite", keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/tenant, /orderId",
                conflictFields = "/sku,/quantity")
        public void composite(String body) {
        }

        @IdempotentMessage(consumer = "tolerant", keyStrategy = KeyStrategy.HEADER, keyHeader = "tenant,order-id",
                conflict = ConflictPolicy.IGNORE)
        public void tolerant(String body) {
        }
    }

    private final KeyDeriver keys = new KeyDeriver("oo:");

    private static OnceOnlyConfig config(Map<String, String> props) {
        return new OnceOnlyConfig(new SmallRyeConfigBuilder()
                .withSources(new PropertiesConfigSource(props, "test", 500)).build());
    }

    private static ConsumerConfig consumers(Map<String, String> props) {
        return new ConsumerConfig(new SmallRyeConfigBuilder().withSources(new PropertiesConfigSource(props, "test", 500)).build());
    }

    private ConsumerSettings consumer(Map<String, String> props, String method) throws NoSuchMethodException {
        Method m = java.util.Arrays.stream(Consumers.class.getMethods()).filter(x -> x.getName().equals(method)).findFirst()
                .orElseThrow(NoSuchMethodException::new);
        return consumers(props).consumer(m, m.getAnnotation(IdempotentMessage.class), keys);
    }

    @Test
    void consumerPropertyBeatsGlobalBeatsAnnotationBeatsDefault() throws Exception {
        ConsumerSettings annotated = consumer(Map.of(), "annotated");
        assertEquals(Duration.ofSeconds(10), annotated.lease());
        assertEquals(Duration.ofHours(2), annotated.retention());

        ConsumerSettings global = consumer(Map.of("onceonly.lease", "20s"), "annotated");
        assertEquals(Duration.ofSeconds(20), global.lease());

        ConsumerSettings specific = consumer(Map.of("onceonly.lease", "20s", "onceonly.consumers.payments.lease", "45s"), "annotated");
        assertEquals(Duration.ofSeconds(45), specific.lease());

        ConsumerSettings defaults = consumer(Map.of(), "plain");
        assertEquals("Consumers.plain", defaults.consumer());
        assertEquals(ConsumerSettings.DEFAULT_LEASE, defaults.lease());
        assertEquals(KeyStrategy.CONTENT, defaults.keyStrategy());
        assertEquals(StoreFailurePolicy.REJECT, defaults.storeFailure());
    }

    @Test
    void idempotencyKeyParameterSelectsTheParameterStrategy() throws Exception {
        assertEquals(KeyStrategy.PARAMETER, consumer(Map.of(), "keyed").keyStrategy());
        InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.consumers.payments.key-strategy", "parameter"), "annotated"));
        assertEquals("onceonly.consumers.payments.key-strategy", e.property());
    }

    @Test
    void invalidValuesNameThePropertyAndWhatIsAccepted() {
        InvalidConfigurationException lease = assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.consumers.payments.lease", "soon"), "annotated"));
        assertEquals("onceonly.consumers.payments.lease", lease.property());
        assertTrue(lease.getMessage().contains("'soon'") && lease.getMessage().contains("30s"), lease.getMessage());

        InvalidConfigurationException strategy = assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.key-strategy", "hash"), "plain"));
        assertEquals("onceonly.key-strategy", strategy.property());
        assertTrue(strategy.getMessage().contains("message-id"), strategy.getMessage());

        InvalidConfigurationException header = assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.key-strategy", "header"), "plain"));
        assertEquals("onceonly.consumers.Consumers.plain.key-header", header.property());

        InvalidConfigurationException pointer = assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.key-strategy", "json-pointer", "onceonly.key-pointer", "orderId"), "plain"));
        assertEquals("onceonly.key-pointer", pointer.property());

        InvalidConfigurationException ledgerOnly = assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.store-failure", "ledger-only"), "plain"));
        assertEquals("onceonly.store-failure", ledgerOnly.property());

        InvalidConfigurationException retention = assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.retention", "5s"), "annotated"));
        assertTrue(retention.getMessage().contains("not shorter than the lease"), retention.getMessage());

        InvalidConfigurationException store = assertThrows(InvalidConfigurationException.class,
                () -> config(Map.of("onceonly.store", "mongo")).global());
        assertEquals("onceonly.store", store.property());
        assertTrue(store.getMessage().contains("redis, memory"), store.getMessage());
    }

    /** Composite keys and the conflict policy: comma-separated in the annotation and in properties alike, with the usual precedence. */
    @Test
    void compositeKeysAndConflictSettingsFollowTheUsualPrecedence() throws Exception {
        ConsumerSettings composite = consumer(Map.of(), "composite");
        assertEquals(List.of("/tenant", "/orderId"), composite.keyParts());
        assertEquals(ConflictPolicy.STRICT, composite.conflict());
        assertEquals(List.of("/sku", "/quantity"), composite.conflictFields());
        assertEquals("json-pointer(/tenant,/orderId), conflict-fields=/sku,/quantity", composite.describeKey());

        ConsumerSettings tolerant = consumer(Map.of(), "tolerant");
        assertEquals(List.of("tenant", "order-id"), tolerant.keyParts());
        assertEquals(ConflictPolicy.IGNORE, tolerant.conflict());
        assertEquals(List.of(), tolerant.conflictFields());
        assertEquals("header(tenant,order-id), conflict=ignore", tolerant.describeKey());

        ConsumerSettings overridden = consumer(Map.of("onceonly.consumers.tolerant.key-header", "order-id",
                "onceonly.conflict", "strict", "onceonly.consumers.tolerant.conflict-fields", "/amount"), "tolerant");
        assertEquals(List.of("order-id"), overridden.keyParts());
        assertEquals(ConflictPolicy.STRICT, overridden.conflict());
        assertEquals(List.of("/amount"), overridden.conflictFields());

        assertEquals(ConflictPolicy.STRICT, consumer(Map.of(), "plain").conflict(), "the default");
        assertEquals(ConflictPolicy.IGNORE, consumer(Map.of("onceonly.conflict", "IGNORE"), "plain").conflict());
    }

    /** A list with an empty part, a repeated part or a pointer not starting with '/' stops the start, naming its property. */
    @Test
    void invalidKeyPartsAndConflictFieldsNameTheirProperty() {
        Map<String, String> invalid = Map.of(
                "onceonly.consumers.composite.key-pointer", "/tenant,,/orderId",
                "onceonly.key-pointer", "/tenant,/orderId,",
                "onceonly.consumers.composite.conflict-fields", "/sku,sku",
                "onceonly.conflict-fields", "/sku , /sku");
        invalid.forEach((property, value) -> {
            InvalidConfigurationException e = assertThrows(InvalidConfigurationException.class,
                    () -> consumer(Map.of(property, value), "composite"), property);
            assertEquals(property, e.property());
            assertTrue(e.getMessage().contains("'" + value + "'"), e.getMessage());
        });
        InvalidConfigurationException twice = assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.consumers.tolerant.key-header", "tenant,order-id,tenant"), "tolerant"));
        assertEquals("onceonly.consumers.tolerant.key-header", twice.property());
        assertTrue(twice.getMessage().contains("'tenant' is listed twice"), twice.getMessage());
        InvalidConfigurationException relative = assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.consumers.composite.key-pointer", "/tenant,orderId"), "composite"));
        assertTrue(relative.getMessage().contains("'orderId' is not one"), relative.getMessage());
        assertEquals("onceonly.consumers.tolerant.conflict", assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.consumers.tolerant.conflict", "lenient"), "tolerant")).property());
    }

    /** conflict=ignore compares nothing, so fields to compare contradict it: the error names both properties. */
    @Test
    void conflictIgnoreWithConflictFieldsNamesBoth() {
        InvalidConfigurationException both = assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.conflict-fields", "/sku"), "tolerant"));
        assertEquals("onceonly.conflict-fields", both.property());
        assertTrue(both.getMessage().contains("onceonly.consumers.tolerant.conflict=ignore"), both.getMessage());

        InvalidConfigurationException global = assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.conflict", "ignore"), "composite"));
        assertEquals("@IdempotentMessage(conflict-fields) of consumer composite", global.property());
        assertTrue(global.getMessage().contains("onceonly.conflict=ignore"), global.getMessage());
    }

    /**
     * A content key is the body's hash: fields to compare make no sense for it. Set for the consumer
     * they stop the start; the global default applies to explicit keys only.
     */
    @Test
    void conflictFieldsDoNotApplyToTheContentKey() throws Exception {
        InvalidConfigurationException own = assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.consumers.Consumers.plain.conflict-fields", "/sku"), "plain"));
        assertEquals("onceonly.consumers.Consumers.plain.conflict-fields", own.property());
        assertTrue(own.getMessage().contains("key-strategy=content"), own.getMessage());

        assertEquals(List.of(), consumer(Map.of("onceonly.conflict-fields", "/sku"), "plain").conflictFields());
        assertEquals(List.of("/sku"), consumer(Map.of("onceonly.conflict-fields", "/sku", "onceonly.key-strategy", "message-id"), "plain")
                .conflictFields());
    }

    /** no-retry-for and retry-for: consumer property, then global, then annotation; each list on its own. */
    @Test
    void retryListsFollowTheSamePrecedenceAsEverySetting() throws Exception {
        List<Class<? extends Throwable>> defaults = RetryRule.defaultsVisibleTo(Consumers.class.getClassLoader());
        RetryRule annotated = consumer(Map.of(), "classified").retryRule();
        assertEquals(new RetryRule(List.of(UncheckedIOException.class), List.of(IllegalStateException.class), defaults), annotated);

        RetryRule global = consumer(Map.of("onceonly.no-retry-for", " java.io.IOException , java.lang.ArithmeticException,"),
                "classified").retryRule();
        assertEquals(List.of(IOException.class, ArithmeticException.class), global.noRetryFor());
        assertEquals(List.of(UncheckedIOException.class), global.retryFor(), "retry-for still from the annotation");

        RetryRule specific = consumer(Map.of("onceonly.no-retry-for", "java.io.IOException",
                "onceonly.consumers.classified.no-retry-for", "java.util.NoSuchElementException",
                "onceonly.consumers.classified.retry-for", "java.lang.Exception"), "classified").retryRule();
        assertEquals(List.of(NoSuchElementException.class), specific.noRetryFor());
        assertEquals(List.of(Exception.class), specific.retryFor());

        RetryRule plain = consumer(Map.of(), "plain").retryRule();
        assertEquals(new RetryRule(List.of(), List.of(), defaults), plain, "the defaults only");
        assertEquals(List.of(IllegalArgumentException.class, jakarta.json.JsonException.class, jakarta.json.bind.JsonbException.class),
                plain.defaults());
    }

    /** Class names are resolved once, at startup: one that does not load, or is no exception, names its property. */
    @Test
    void anUnknownOrNonThrowableClassNamesItsProperty() {
        InvalidConfigurationException unknown = assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.consumers.classified.no-retry-for", "java.lang.IllegalStateException, com.example.Typo"),
                        "classified"));
        assertEquals("onceonly.consumers.classified.no-retry-for", unknown.property());
        assertTrue(unknown.getMessage().contains("'com.example.Typo'") && unknown.getMessage().contains("can load"), unknown.getMessage());

        InvalidConfigurationException notThrowable = assertThrows(InvalidConfigurationException.class,
                () -> consumer(Map.of("onceonly.retry-for", "java.lang.String"), "plain"));
        assertEquals("onceonly.retry-for", notThrowable.property());
        assertTrue(notThrowable.getMessage().contains("'java.lang.String'") && notThrowable.getMessage().contains("Throwable"),
                notThrowable.getMessage());
    }

    /** An exception class that only the application's own class loader has. */
    public static class AppOnlyException extends RuntimeException {
    }

    /** A consumer of that application. */
    public static class AppConsumer {
        @IdempotentMessage(consumer = "app")
        public void on(String body) {
        }
    }

    /**
     * Class names are resolved with the class loader of the guarded method's class, the
     * application's: not the library's (which in a shared library sees none of the application's
     * classes) nor whatever the thread's context loader happens to be.
     */
    @Test
    void classNamesAreResolvedWithTheApplicationsClassLoader() throws Exception {
        try (AppLoader app = new AppLoader(getClass().getClassLoader(), AppConsumer.class.getName(), AppOnlyException.class.getName())) {
            Method on = app.loadClass(AppConsumer.class.getName()).getMethod("on", String.class);
            RetryRule rule = consumers(Map.of("onceonly.consumers.app.no-retry-for", AppOnlyException.class.getName()))
                    .consumer(on, on.getAnnotation(IdempotentMessage.class), keys).retryRule();
            assertSame(app, rule.noRetryFor().get(0).getClassLoader(), "the application's own copy of the class");
        }
    }

    /** Defines the named classes itself (child first) and leaves every other one to its parent. */
    private static final class AppLoader extends URLClassLoader {
        private final java.util.Set<String> own;

        AppLoader(ClassLoader parent, String... own) {
            super(new java.net.URL[0], parent);
            this.own = java.util.Set.of(own);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            if (!own.contains(name)) {
                return super.loadClass(name, resolve);
            }
            synchronized (getClassLoadingLock(name)) {
                Class<?> c = findLoadedClass(name);
                if (c == null) {
                    try (java.io.InputStream in = getParent().getResourceAsStream(name.replace('.', '/') + ".class")) {
                        byte[] bytes = in.readAllBytes();
                        c = defineClass(name, bytes, 0, bytes.length);
                    } catch (IOException e) {
                        throw new ClassNotFoundException(name, e);
                    }
                }
                return c;
            }
        }
    }

    /** The ledger writes through the application's datasource when one is named, else jdbc/onceonly. */
    @Test
    void ledgerDatasourceDefaultsToJdbcOnceonlyAndIsConfigurable() {
        assertEquals("jdbc/onceonly", config(Map.of()).ledger().dataSource());
        assertEquals("jdbc/payments", config(Map.of("onceonly.ledger.datasource", " jdbc/payments ")).ledger().dataSource());
    }

    @Test
    void theDatabaseStoreIsAChoiceWithItsOwnDatasourceAndPurge() {
        assertEquals("database", config(Map.of("onceonly.store", "database")).global().store());
        assertEquals(new OnceOnlyConfig.DatabaseStoreSettings("jdbc/onceonly-claims", Duration.ofMinutes(1), "onceonly_claim"),
                config(Map.of()).databaseStore());
        assertEquals("jdbc/claims", config(Map.of("onceonly.database-store.datasource", "jdbc/claims")).databaseStore().dataSource());
        assertEquals("onceonly.database-store.purge-interval", assertThrows(InvalidConfigurationException.class,
                () -> config(Map.of("onceonly.database-store.purge-interval", "never")).databaseStore()).property());
        InvalidConfigurationException store = assertThrows(InvalidConfigurationException.class,
                () -> config(Map.of("onceonly.store", "postgres")).global());
        assertTrue(store.getMessage().contains("database"), store.getMessage());
    }

    @Test
    void outboxSettingsHaveDefaultsAndABadValueNamesItsProperty() {
        OnceOnlyConfig.OutboxSettings defaults = config(Map.of()).outbox();
        assertEquals(new OnceOnlyConfig.OutboxSettings(Duration.ofSeconds(10), Duration.ofSeconds(30), 100, 5, Duration.ofDays(1),
                Duration.ofSeconds(10), "onceonly_outbox", Duration.ofMillis(10)), defaults);
        assertEquals(7, config(Map.of("onceonly.outbox.max-attempts", "7")).outbox().maxAttempts());

        InvalidConfigurationException tooSoon = assertThrows(InvalidConfigurationException.class,
                () -> config(Map.of("onceonly.outbox.sweep-after", "5s")).outbox());
        assertEquals("onceonly.outbox.sweep-after", tooSoon.property());
        assertTrue(tooSoon.getMessage().contains("confirm-timeout"), tooSoon.getMessage());
        assertEquals("onceonly.outbox.batch-size", assertThrows(InvalidConfigurationException.class,
                () -> config(Map.of("onceonly.outbox.batch-size", "0")).outbox()).property());
        assertEquals("onceonly.outbox.sweep-interval", assertThrows(InvalidConfigurationException.class,
                () -> config(Map.of("onceonly.outbox.sweep-interval", "0s")).outbox()).property());
    }

    @Test
    void theOutboxGatherIsZeroOrADurationOfAtMostASecond() {
        assertEquals(Duration.ZERO, config(Map.of("onceonly.outbox.gather", "0")).outbox().gather());
        assertEquals(Duration.ofMillis(20), config(Map.of("onceonly.outbox.gather", "20ms")).outbox().gather());
        assertEquals(Duration.ofSeconds(1), config(Map.of("onceonly.outbox.gather", "1s")).outbox().gather());
        InvalidConfigurationException tooLong = assertThrows(InvalidConfigurationException.class,
                () -> config(Map.of("onceonly.outbox.gather", "2s")).outbox());
        assertEquals("onceonly.outbox.gather", tooLong.property());
        assertTrue(tooLong.getMessage().contains("at most 1s"), tooLong.getMessage());
        assertEquals("onceonly.outbox.gather", assertThrows(InvalidConfigurationException.class,
                () -> config(Map.of("onceonly.outbox.gather", "soon")).outbox()).property());
        assertEquals("onceonly.outbox.gather", assertThrows(InvalidConfigurationException.class,
                () -> config(Map.of("onceonly.outbox.gather", "-5ms")).outbox()).property());
    }

    @Test
    void jmsSettingsHaveDefaultsAndABadValueNamesItsProperty() {
        assertEquals(new OnceOnlyConfig.JmsSettings("", "java:comp/DefaultJMSConnectionFactory", Duration.ofSeconds(1)),
                config(Map.of()).jms());
        assertEquals(new OnceOnlyConfig.JmsSettings("jms/dlq", "jms/cf", Duration.ofMillis(200)),
                config(Map.of("onceonly.jms.dead-letter-queue", "jms/dlq", "onceonly.jms.connection-factory", "jms/cf",
                        "onceonly.jms.retry-delay", "200ms")).jms());
        assertEquals("onceonly.jms.retry-delay", assertThrows(InvalidConfigurationException.class,
                () -> config(Map.of("onceonly.jms.retry-delay", "2m")).jms()).property());
        assertEquals("onceonly.jms.retry-delay", assertThrows(InvalidConfigurationException.class,
                () -> config(Map.of("onceonly.jms.retry-delay", "soon")).jms()).property());
    }

    @Test
    void redisUrlCarriesTlsCredentialsAndDatabaseButErrorsNeverShowThePassword() {
        RedisSettings r = RedisWaitConfigTest.redis(Map.of("onceonly.redis.url", "rediss://app:s3cr%40t@cache.example:6380/2"));
        assertTrue(r.tls());
        assertEquals("app", r.user());
        assertEquals("s3cr@t", r.password());
        assertEquals(2, r.database());
        assertEquals(java.util.List.of("cache.example:6380"), r.nodes());
        assertFalse(r.toString().contains("s3cr"), r.toString());

        InvalidConfigurationException bad = assertThrows(InvalidConfigurationException.class,
                () -> RedisWaitConfigTest.redis(Map.of("onceonly.redis.url", "http://app:hunter2@cache:6379")));
        assertEquals("onceonly.redis.url", bad.property());
        assertFalse(bad.getMessage().contains("hunter2"), bad.getMessage());

        InvalidConfigurationException clusterDb = assertThrows(InvalidConfigurationException.class,
                () -> RedisWaitConfigTest.redis(Map.of("onceonly.redis.mode", "cluster", "onceonly.redis.url", "redis://:pw@cache:6379/2")));
        assertEquals("onceonly.redis.url", clusterDb.property());
        assertTrue(clusterDb.getMessage().contains("cluster"), clusterDb.getMessage());

        InvalidConfigurationException sentinel = assertThrows(InvalidConfigurationException.class,
                () -> RedisWaitConfigTest.redis(Map.of("onceonly.redis.mode", "sentinel")));
        assertEquals("onceonly.redis.sentinel-master", sentinel.property());
    }

    /**
     * Any password works in the URL and never shows in an error: '/', '@', ':' and '+' unencoded,
     * percent escapes decoded, '+' kept (form decoding turned it into a space, and a '/' or '@'
     * defeated the redaction so the password reached the startup error).
     */
    @Test
    void anyPasswordWorksInTheRedisUrlAndNeverShowsInAnError() {
        for (String password : new String[] {"pa/ss", "p@ss@word", "a+b", "c:o:l:o:n", "%2Fslash", "sp ace"}) {
            String written = password.replace(" ", "%20");
            String expected = password.replace("%2F", "/");
            RedisSettings r = RedisWaitConfigTest.redis(Map.of("onceonly.redis.url", "redis://app:" + written + "@cache.example:6380/3"));
            assertEquals(expected, r.password(), written);
            assertEquals("app", r.user());
            assertEquals(java.util.List.of("cache.example:6380"), r.nodes());
            assertEquals(3, r.database());

            InvalidConfigurationException bad = assertThrows(InvalidConfigurationException.class,
                    () -> RedisWaitConfigTest.redis(Map.of("onceonly.redis.url", "http://app:" + written + "@cache:6379/x")));
            assertFalse(bad.getMessage().contains(written), bad.getMessage());
            InvalidConfigurationException badDb = assertThrows(InvalidConfigurationException.class,
                    () -> RedisWaitConfigTest.redis(Map.of("onceonly.redis.url", "redis://app:" + written + "@cache:6379/x")));
            assertFalse(badDb.getMessage().contains(written), badDb.getMessage());
        }
        assertEquals("s3cret", RedisWaitConfigTest.redis(Map.of("onceonly.redis.url", "redis://:s3cret@cache:6379")).password());
        assertNull(RedisWaitConfigTest.redis(Map.of("onceonly.redis.url", "redis://:s3cret@cache:6379")).user());
    }

    /** A misconfiguration stops the CDI container from starting, with the property in the message. */
    @Test
    void misconfigurationFailsDeployment() {
        System.setProperty("onceonly.store", "mongo");
        try {
            Weld weld = new Weld().disableDiscovery()
                    .addBeanClasses(GuardedBean.class, IdempotentMessageInterceptor.class, OnceOnlyRuntime.class, dev.onceonly.spi.Handover.class,
                            dev.onceonly.internal.cdi.CurrentIdempotencyContext.class)
                    .addExtension(new OnceOnlyExtension());
            RuntimeException e = assertThrows(RuntimeException.class, () -> weld.initialize().close());
            String all = describe(e);
            assertTrue(all.contains("onceonly.store") && all.contains("mongo"), all);
        } finally {
            System.clearProperty("onceonly.store");
        }
    }

    private static String describe(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            sb.append(c).append('\n');
        }
        return sb.toString();
    }
}
