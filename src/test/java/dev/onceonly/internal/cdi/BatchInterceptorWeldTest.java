package dev.onceonly.internal.cdi;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.IdempotencyKey;
import dev.onceonly.api.InvalidConfigurationException;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.spi.Handover;
import dev.onceonly.testing.RecordingDispatch;
import io.smallrye.config.PropertiesConfigSource;
import io.smallrye.config.SmallRyeConfigBuilder;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.config.Config;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A guarded batch method in Weld: the interceptor takes the deliveries a connector posted under the
 * list, calls the method again with halves of it after a failure ({@code setParameters}, a second
 * {@code proceed}), and hands each delivery its own decision; a batch channel and its method must
 * agree at deployment.
 */
@EnableWeld
class BatchInterceptorWeldTest {

    @BeforeAll
    static void configure() {
        System.setProperty("onceonly.store", "memory");
        System.setProperty("mp.messaging.incoming.weld-batch.batch", "true");
    }

    @AfterAll
    static void unconfigure() {
        System.clearProperty("onceonly.store");
        System.clearProperty("mp.messaging.incoming.weld-batch.batch");
    }

    @WeldSetup
    WeldInitiator weld = WeldInitiator.from(WeldInitiator.createWeld()
                    .addBeanClasses(BatchBean.class, IdempotentMessageInterceptor.class, OnceOnlyRuntime.class, Handover.class,
                            CurrentIdempotencyContext.class)
                    .addExtension(new OnceOnlyExtension()))
            .activate(ApplicationScoped.class)
            .build();

    @Inject
    BatchBean bean;

    @Inject
    Handover handover;

    @ApplicationScoped
    static class BatchBean {
        private final List<List<String>> calls = new CopyOnWriteArrayList<>();

        /** Through the client proxy: a field read on it would be the proxy's own. */
        List<List<String>> calls() {
            return calls;
        }

        @Incoming("weld-batch")
        @IdempotentMessage(consumer = "weld-batch")
        public void onBatch(List<String> bodies) {
            calls.add(List.copyOf(bodies));
            if (bodies.stream().anyMatch(b -> b.startsWith("poison"))) {
                throw new IllegalStateException("poison in the batch");
            }
            if (bodies.stream().anyMatch(b -> b.startsWith("error"))) {
                throw new AssertionError("an error in the batch");
            }
        }
    }

    @Test
    void eachPostedDeliveryGetsItsOwnDecisionAndAFailureIsSplitDownToItsMessage() {
        String run = UUID.randomUUID().toString();
        List<String> bodies = new ArrayList<>(List.of("a" + run, "poison" + run, "b" + run, "c" + run));
        List<RecordingDispatch> deliveries = bodies.stream().map(b -> new RecordingDispatch(message(b), true)).toList();
        handover.postBatch(bodies, deliveries);

        bean.onBatch(bodies); // the connector settles each delivery from its decision: nothing is thrown

        assertEquals(List.of(bodies, bodies.subList(0, 2), bodies.subList(0, 1), bodies.subList(1, 2), bodies.subList(2, 4)),
                bean.calls(), "the whole batch, then halves, down to the poison message alone");
        assertEquals(List.of(Outcome.PROCESSED), deliveries.get(0).outcomes());
        assertEquals(List.of(Outcome.FAILED), deliveries.get(1).outcomes());
        assertTrue(deliveries.get(1).failures().get(0) instanceof IllegalStateException, "the failure goes with the decision");
        assertEquals(List.of(Outcome.PROCESSED), deliveries.get(2).outcomes());
        assertEquals(List.of(Outcome.PROCESSED), deliveries.get(3).outcomes());
        assertEquals(0, handover.pending(), "the batch was taken");

        bean.calls().clear();
        List<String> again = new ArrayList<>(bodies.subList(2, 4));
        List<RecordingDispatch> redelivered = again.stream().map(b -> new RecordingDispatch(message(b), true)).toList();
        handover.postBatch(again, redelivered);
        bean.onBatch(again);
        assertEquals(List.of(), bean.calls(), "duplicates never reach the method");
        assertEquals(List.of(Outcome.DUPLICATE), redelivered.get(0).outcomes());
        assertEquals(List.of(Outcome.DUPLICATE), redelivered.get(1).outcomes());
    }

    @Test
    void aCallNoConnectorPostedIsGuardedOnItsPayloadsAndThrowsWhatFailed() {
        String run = UUID.randomUUID().toString();
        bean.onBatch(new ArrayList<>(List.of("x" + run, "y" + run)));
        assertEquals(1, bean.calls().size());
        bean.onBatch(new ArrayList<>(List.of("x" + run, "y" + run)));
        assertEquals(1, bean.calls().size(), "both duplicates: the method is not called");
        assertThrows(IllegalStateException.class, () -> bean.onBatch(new ArrayList<>(List.of("z" + run, "poison" + run))));
    }

    /**
     * An {@code Error} of the method is split down to its message like any failure: each delivery
     * gets its own decision (the error's with it) and nothing is thrown to the messaging runtime; a
     * call no connector posted throws the error itself.
     */
    @Test
    void anErrorOfTheMethodIsDecidedForItsMessageAndThrownOnlyToACallerWithoutDeliveries() {
        String run = UUID.randomUUID().toString();
        List<String> bodies = new ArrayList<>(List.of("a" + run, "error" + run));
        List<RecordingDispatch> deliveries = bodies.stream().map(b -> new RecordingDispatch(message(b), true)).toList();
        handover.postBatch(bodies, deliveries);

        bean.onBatch(bodies);

        assertEquals(List.of(bodies, bodies.subList(0, 1), bodies.subList(1, 2)), bean.calls());
        assertEquals(List.of(Outcome.PROCESSED), deliveries.get(0).outcomes());
        assertEquals(List.of(Outcome.FAILED), deliveries.get(1).outcomes());
        assertTrue(deliveries.get(1).failures().get(0) instanceof AssertionError, "the error goes with the decision");

        assertThrows(AssertionError.class, () -> bean.onBatch(new ArrayList<>(List.of("z" + run, "error-again" + run))));
        bean.calls().clear();
        bean.onBatch(new ArrayList<>(List.of("z" + run)));
        assertEquals(List.of(), bean.calls(), "the message beside the error committed once");
    }

    // ---- the channel's batch attribute and the method must agree ----

    static class Shapes {
        @Incoming("listed")
        public void listed(List<String> bodies) {
        }

        @Incoming("single")
        public void single(String body) {
        }

        @Incoming("keyed")
        public void keyed(List<String> bodies, @IdempotencyKey String key) {
        }

        public void notIncoming(List<String> bodies) {
        }
    }

    @Test
    void aBatchChannelAndItsMethodMustAgree() throws Exception {
        Config config = config(Map.of("mp.messaging.incoming.listed.batch", "true", "mp.messaging.incoming.keyed.batch", "true"));
        assertTrue(BatchChannels.of(shape("listed"), config));
        assertFalse(BatchChannels.of(shape("single"), config));
        assertFalse(BatchChannels.of(shape("notIncoming"), config), "a List outside @Incoming is a payload like any");

        var noBatch = assertThrows(InvalidConfigurationException.class, () -> BatchChannels.of(shape("listed"), config(Map.of())));
        assertEquals("mp.messaging.incoming.listed.batch", noBatch.property());
        var oneEach = assertThrows(InvalidConfigurationException.class,
                () -> BatchChannels.of(shape("single"), config(Map.of("mp.messaging.incoming.single.batch", "true"))));
        assertEquals("mp.messaging.incoming.single.batch", oneEach.property());
        assertTrue(oneEach.getMessage().contains("single"), oneEach.getMessage());
        assertThrows(InvalidConfigurationException.class, () -> BatchChannels.of(shape("keyed"), config));
        var notABoolean = assertThrows(InvalidConfigurationException.class,
                () -> BatchChannels.of(shape("listed"), config(Map.of("mp.messaging.incoming.listed.batch", "yes"))));
        assertEquals("mp.messaging.incoming.listed.batch", notABoolean.property());
    }

    private static Method shape(String name) {
        for (Method m : Shapes.class.getDeclaredMethods()) {
            if (m.getName().equals(name)) {
                return m;
            }
        }
        throw new IllegalArgumentException(name);
    }

    private static Config config(Map<String, String> values) {
        return new SmallRyeConfigBuilder().withSources(new PropertiesConfigSource(values, "test", 100)).build();
    }

    private static MessageView message(String body) {
        return MessageView.of("orders", "order.placed", null, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }
}
