package dev.onceonly.testing;

import java.util.concurrent.ThreadFactory;

/** Threads for engines built in tests, where no managed thread factory exists. */
public final class TestThreads {

    private TestThreads() {
    }

    /** {@return a factory of daemon threads named {@code name}: a test that forgets to stop them does not hold the JVM} */
    public static ThreadFactory daemon(String name) {
        return r -> {
            Thread t = new Thread(r, name);
            t.setDaemon(true);
            return t;
        };
    }
}
