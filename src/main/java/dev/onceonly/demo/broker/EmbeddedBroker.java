package dev.onceonly.demo.broker;

import org.apache.qpid.server.SystemLauncher;
import org.apache.qpid.server.SystemLauncherListener;
import org.apache.qpid.server.model.Port;
import org.apache.qpid.server.model.State;
import org.apache.qpid.server.model.SystemConfig;

import java.net.URL;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * An in-memory AMQP 0-9-1 broker (Apache Qpid Broker-J) for the demo's embedded default, so the
 * demo runs on a machine without RabbitMQ. Demo only: the library never depends on it.
 *
 * <p>Qpid's {@code startup()} does not throw when a port cannot be bound; {@link #start} checks
 * the broker's own report and every port's state and fails loudly instead.
 */
public final class EmbeddedBroker implements AutoCloseable {

    private final SystemLauncher launcher;

    private EmbeddedBroker(SystemLauncher launcher) {
        this.launcher = launcher;
    }

    /** Starts a broker listening on 127.0.0.1:{@code port}, accepting {@code user}/{@code password} (PLAIN). */
    public static EmbeddedBroker start(int port, String user, String password) {
        URL config = resource("qpid-initial-config.json");
        Failure failure = new Failure();
        SystemLauncher launcher = new SystemLauncher(failure);
        Map<String, Object> attributes = new HashMap<>();
        attributes.put(SystemConfig.TYPE, "Memory");
        attributes.put(SystemConfig.INITIAL_CONFIGURATION_LOCATION, config.toExternalForm());
        // Qpid's default is a "classpath:" URL, whose handler it can only register in a plain JVM,
        // not inside an application server; and its defaults would become JVM-wide system properties.
        attributes.put(SystemConfig.INITIAL_SYSTEM_PROPERTIES_LOCATION, resource("qpid-system.properties").toExternalForm());
        attributes.put(SystemConfig.STARTUP_LOGGED_TO_SYSTEM_OUT, false);
        attributes.put(SystemConfig.CONTEXT, Map.of(
                "demo.broker.port", Integer.toString(port),
                "demo.broker.user", user,
                "demo.broker.password", password));
        try {
            launcher.startup(attributes);
        } catch (Exception e) {
            launcher.shutdown();
            throw new IllegalStateException("embedded AMQP broker failed to start on port " + port, e);
        }
        EmbeddedBroker broker = new EmbeddedBroker(launcher);
        String problem = failure.problem != null ? failure.problem : failure.inactivePorts();
        if (problem != null) {
            broker.close();
            throw new IllegalStateException("embedded AMQP broker failed to start on port " + port + ": " + problem);
        }
        return broker;
    }

    private static URL resource(String name) {
        return Objects.requireNonNull(EmbeddedBroker.class.getResource(name), name + " missing");
    }

    @Override
    public void close() {
        launcher.shutdown();
    }

    /** Collects what went wrong during startup, since {@code SystemLauncher.startup} hides it. */
    private static final class Failure implements SystemLauncherListener {
        volatile String problem;
        volatile SystemConfig<?> system;

        /** Ports that did not reach ACTIVE (e.g. the address is in use), or null when all did. */
        String inactivePorts() {
            if (system == null) {
                return "broker did not come up";
            }
            StringBuilder bad = new StringBuilder();
            org.apache.qpid.server.model.Broker<?> broker = system.getContainer(org.apache.qpid.server.model.Broker.class);
            for (Port<?> p : broker.getPorts()) {
                if (p.getState() != State.ACTIVE) {
                    bad.append(p.getName()).append(':').append(p.getPort()).append(" is ").append(p.getState()).append(' ');
                }
            }
            return bad.length() == 0 ? null : bad.toString().trim();
        }

        @Override
        public void beforeStartup() {
        }

        @Override
        public void errorOnStartup(RuntimeException e) {
            problem = String.valueOf(e);
        }

        @Override
        public void afterStartup() {
        }

        @Override
        public void onContainerResolve(SystemConfig<?> systemConfig) {
            system = systemConfig;
        }

        @Override
        public void onContainerClose(SystemConfig<?> systemConfig) {
        }

        @Override
        public void onShutdown(int exitCode) {
        }

        @Override
        public void exceptionOnShutdown(Exception e) {
        }
    }
}
