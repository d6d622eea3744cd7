package dev.onceonly.demo.broker;

import jakarta.annotation.PreDestroy;
import jakarta.annotation.Priority;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Startup;
import jakarta.enterprise.event.Observes;
import jakarta.inject.Inject;
import jakarta.interceptor.Interceptor;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.util.logging.Logger;

/**
 * Runs the embedded broker while the demo runs, unless {@code demo.embedded-broker=false} (then the
 * demo talks to the RabbitMQ its connector configuration names). Started before anything else in
 * the application, stopped with it.
 */
@ApplicationScoped
public class DemoBroker {

    private static final Logger LOG = Logger.getLogger(DemoBroker.class.getName());

    @Inject
    @ConfigProperty(name = "demo.embedded-broker", defaultValue = "true")
    boolean enabled;

    @Inject
    @ConfigProperty(name = "demo.embedded-broker.port", defaultValue = "5673")
    int port;

    @Inject
    @ConfigProperty(name = "demo.embedded-broker.user", defaultValue = "guest")
    String user;

    @Inject
    @ConfigProperty(name = "demo.embedded-broker.password", defaultValue = "guest")
    String password;

    private EmbeddedBroker broker;

    void start(@Observes @Priority(Interceptor.Priority.PLATFORM_BEFORE) Startup startup) {
        if (enabled && broker == null) {
            if (DemoBroker.class.getClassLoader().getResource("org/apache/qpid/server/SystemLauncher.class") == null) {
                // The broker is an optional dependency: a WAR built for deployment does not carry it.
                throw new IllegalStateException("demo.embedded-broker=true, but Apache Qpid Broker-J is not packaged "
                        + "with this application; run the demo with `mvn liberty:run`, or set demo.embedded-broker=false "
                        + "and point the connector at RabbitMQ");
            }
            broker = EmbeddedBroker.start(port, user, password);
            LOG.info("Embedded AMQP 0-9-1 broker (demo only) listening on 127.0.0.1:" + port);
        }
    }

    @PreDestroy
    void stop() {
        if (broker != null) {
            broker.close();
            broker = null;
        }
    }
}
