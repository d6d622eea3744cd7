package dev.onceonly.internal.engine;

import org.junit.jupiter.api.Test;

import java.lang.ref.WeakReference;
import java.lang.reflect.Method;
import java.net.URL;
import java.net.URLClassLoader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A redeployment: the application's class loader goes away, the server's pooled threads stay.
 * Deriving a key on such a thread must not leave anything behind that keeps the old class loader
 * (and every class it loaded) alive. Before, the per-thread scratch was an instance of one of
 * OnceOnly's classes, held by the thread for its whole life.
 */
class KeyDeriverClassLoaderTest {

    @Test
    void aPooledThreadDoesNotKeepAnUndeployedApplicationsClassLoader() throws Exception {
        WeakReference<ClassLoader> loader = deriveOnceInADisposableClassLoader();
        for (int i = 0; i < 50 && loader.get() != null; i++) {
            System.gc();
            Thread.sleep(100);
        }
        assertNull(loader.get(), "the application's class loader is still reachable from this thread");
    }

    /** Loads the engine in a class loader of its own, derives one key on this thread, and lets go of everything. */
    private static WeakReference<ClassLoader> deriveOnceInADisposableClassLoader() throws Exception {
        URL classes = Path.of("target/classes").toUri().toURL();
        URLClassLoader app = new URLClassLoader(new URL[] {classes}, ClassLoader.getPlatformClassLoader());
        Class<?> deriver = app.loadClass("dev.onceonly.internal.engine.KeyDeriver");
        Class<?> settings = app.loadClass("dev.onceonly.internal.engine.ConsumerSettings");
        Class<?> view = app.loadClass("dev.onceonly.api.MessageView");
        Class<?> strategy = app.loadClass("dev.onceonly.api.KeyStrategy");
        Class<?> policy = app.loadClass("dev.onceonly.api.StoreFailurePolicy");
        Class<?> rule = app.loadClass("dev.onceonly.internal.engine.RetryRule");
        Object content = enumValue(strategy, "CONTENT");
        Object reject = enumValue(policy, "REJECT");
        Object noRetryLists = rule.getConstructors()[0].newInstance(List.of(), List.of(), List.of());
        Object strict = enumValue(app.loadClass("dev.onceonly.api.ConflictPolicy"), "STRICT");
        Object consumer = settings.getConstructors()[0].newInstance("orders", content, List.of(), false, strict, List.of(),
                Duration.ofSeconds(30), Duration.ofHours(1), reject, false, noRetryLists);
        Object message = view.getMethod("of", String.class, String.class, String.class, Map.class, byte[].class)
                .invoke(null, "orders", "order.placed", null, Map.of(), "{}".getBytes(StandardCharsets.UTF_8));
        Object keys = deriver.getConstructor(String.class).newInstance("oo:");
        Method derive = deriver.getMethod("derive", settings, view, Object.class);
        derive.invoke(keys, consumer, message, null);
        app.close();
        return new WeakReference<>(app);
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static Object enumValue(Class<?> type, String name) {
        return Enum.valueOf((Class) type, name);
    }
}
