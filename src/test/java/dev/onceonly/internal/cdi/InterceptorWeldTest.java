package dev.onceonly.internal.cdi;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.MessageRefusedException;
import dev.onceonly.api.MessageView;
import dev.onceonly.api.Outcome;
import dev.onceonly.internal.observability.GuardTracing;
import dev.onceonly.spi.GuardListener;
import dev.onceonly.spi.Handover;
import dev.onceonly.testing.InMemoryTelemetry;
import dev.onceonly.testing.LogCapture;
import dev.onceonly.testing.RecordingDispatch;
import io.opentelemetry.api.trace.Span;
import io.opentelemetry.api.trace.SpanContext;
import io.opentelemetry.api.trace.StatusCode;
import io.opentelemetry.sdk.trace.data.SpanData;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.enterprise.event.Observes;
import jakarta.enterprise.inject.Produces;
import jakarta.inject.Inject;
import org.eclipse.microprofile.reactive.messaging.Incoming;
import org.jboss.weld.junit5.EnableWeld;
import org.jboss.weld.junit5.WeldInitiator;
import org.jboss.weld.junit5.WeldSetup;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The interceptor guarding a real CDI bean in Weld, configured through MicroProfile Config (SmallRye
 * Config). A delivery's span (OpenTelemetry SDK, in memory) is current around the whole guarded call,
 * on the handler's thread: the guard's phase spans and whatever the handler does are inside it.
 */
@EnableWeld
class InterceptorWeldTest {

    private static final String TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    private static final String SENDER = "00f067aa0ba902b7";
    /** Where the guard's phase spans and the deliveries' spans end up. */
    static final InMemoryTelemetry TELEMETRY = new InMemoryTelemetry();

    @BeforeAll
    static void configure() {
        System.setProperty("onceonly.store", "memory");
    }

    @AfterAll
    static void unconfigure() {
        System.clearProperty("onceonly.store");
        TELEMETRY.close();
    }

    @BeforeEach
    void forgetSpans() {
        TELEMETRY.reset();
    }

    @WeldSetup
    WeldInitiator weld = WeldInitiator.from(WeldInitiator.createWeld()
                    .addBeanClasses(GuardedBean.class, TracedConsumer.class, GuardSpans.class, IdempotentMessageInterceptor.class, OnceOnlyRuntime.class, Outcomes.class,
                            Handover.class, CurrentIdempotencyContext.class, OrderBeans.Lines.class, OrderBeans.Splitter.class, OrderBeans.GuardedSplitter.class,
                            OrderBeans.GuardedConsumer.class)
                    .addExtension(new OnceOnlyExtension()))
            .activate(ApplicationScoped.class)
            .build();

    @Inject
    GuardedBean bean;

    @Inject
    TracedConsumer traced;

    @Inject
    Outcomes outcomes;

    @Inject
    Handover handover;

    @Inject
    OrderBeans.Lines lines;

    @Inject
    OrderBeans.Splitter splitter;

    @Inject
    OrderBeans.GuardedSplitter guardedSplitter;

    @Inject
    OrderBeans.GuardedConsumer guardedConsumer;

    @ApplicationScoped
    static class Outcomes {
        private final List<Outcome> seen = new CopyOnWriteArrayList<>();
        private final List<GuardEvent> events = new CopyOnWriteArrayList<>();

        void on(@Observes GuardEvent e) {
            seen.add(e.outcome());
            events.add(e);
        }

        List<GuardEvent> events() {
            return List.copyOf(events);
        }

        List<Outcome> seen() {
            return List.copyOf(seen);
        }
    }

    private static MessageView message(String body) {
        return MessageView.of("orders", "order.placed", null, Map.of(), body.getBytes(StandardCharsets.UTF_8));
    }

    @Test
    void secondCallWithTheSameMessageIsNotExecuted() {
        MessageView m = message(UUID.randomUUID().toString());
        assertEquals("run-1", bean.onMessage(m));
        assertNull(bean.onMessage(m));
        assertEquals(1, bean.runs());
        assertEquals(List.of(Outcome.PROCESSED, Outcome.DUPLICATE), outcomes.seen());
    }

    /**
     * Through the interceptor: a call that keeps its result returns its own; a failed one keeps
     * nothing; a duplicate gets the first committed call's, replayed and read back as the generic
     * return type; another body under the key is still a CONFLICT.
     */
    @Test
    void aDuplicateOfACallThatKeepsItsResultGetsTheFirstResultReplayed() {
        String id = UUID.randomUUID().toString();
        String body = "{\"id\":\"" + id + "\",\"amount\":1}";
        bean.failNextCalls(true);
        assertThrows(IllegalStateException.class, () -> bean.charge(body));
        bean.failNextCalls(false);

        dev.onceonly.api.Replayable<List<String>> first = bean.charge(body);
        dev.onceonly.api.Replayable<List<String>> again = bean.charge(body);

        assertEquals(List.of("run-1", body), first.value());
        assertFalse(first.replayed());
        assertEquals(List.of("run-1", body), again.value(), "the first committed call's result");
        assertTrue(again.replayed());
        assertEquals(1, bean.runs());
        MessageRefusedException conflict = assertThrows(MessageRefusedException.class,
                () -> bean.charge("{\"id\":\"" + id + "\",\"amount\":2}"));
        assertEquals(Outcome.CONFLICT, conflict.outcome());
        assertEquals(List.of(Outcome.FAILED, Outcome.PROCESSED, Outcome.DUPLICATE, Outcome.CONFLICT), outcomes.seen());
    }

    @Test
    void throwingCallReleasesTheClaimSoARetryRuns() {
        MessageView m = message(UUID.randomUUID().toString());
        bean.failNextCalls(true);
        assertThrows(IllegalStateException.class, () -> bean.onMessage(m));
        bean.failNextCalls(false);
        assertEquals("run-1", bean.onMessage(m));
        assertEquals(List.of(Outcome.FAILED, Outcome.PROCESSED), outcomes.seen());
    }

    /** The annotation's noRetryFor reaches the engine: the CDI event says the failure is not worth retrying. */
    @Test
    void anExceptionTheAnnotationListsIsReportedAsNotWorthRetrying() {
        assertThrows(GuardedBean.Unprocessable.class, () -> bean.onOrder(message(UUID.randomUUID().toString()), true));
        assertThrows(IllegalStateException.class, () -> bean.onOrder(message(UUID.randomUUID().toString()), false));
        List<GuardEvent> events = outcomes.events();
        assertEquals(List.of(Outcome.FAILED, Outcome.FAILED), events.stream().map(GuardEvent::outcome).toList());
        assertEquals(List.of(false, true), events.stream().map(GuardEvent::retryable).toList());
        assertEquals("not retried: " + GuardedBean.Unprocessable.class.getName() + " is in no-retry-for", events.get(0).reason());
    }

    /** The annotation's composite key and conflict fields, end to end through the interceptor. */
    @Test
    void aCompositeKeyAndItsConflictFieldsFromTheAnnotation() {
        String order = UUID.randomUUID().toString();
        assertEquals("run-1", bean.onTenantOrder(message("{\"tenant\":\"t-1\",\"orderId\":\"" + order + "\",\"sku\":\"w\",\"quantity\":2}")));
        assertNull(bean.onTenantOrder(message("{\"quantity\":2,\"sku\":\"w\",\"orderId\":\"" + order + "\",\"tenant\":\"t-1\",\"at\":1}")));
        assertEquals("run-2", bean.onTenantOrder(message("{\"tenant\":\"t-2\",\"orderId\":\"" + order + "\",\"sku\":\"w\",\"quantity\":2}")));
        MessageRefusedException conflict = assertThrows(MessageRefusedException.class, () -> bean.onTenantOrder(
                message("{\"tenant\":\"t-1\",\"orderId\":\"" + order + "\",\"sku\":\"w\",\"quantity\":5}")));
        assertEquals(Outcome.CONFLICT, conflict.outcome());
        MessageRefusedException rejected = assertThrows(MessageRefusedException.class,
                () -> bean.onTenantOrder(message("{\"orderId\":\"" + order + "\",\"sku\":\"w\",\"quantity\":2}")));
        assertEquals("payload has no value at /tenant", rejected.reason());
        assertEquals(List.of(Outcome.PROCESSED, Outcome.DUPLICATE, Outcome.PROCESSED, Outcome.CONFLICT, Outcome.REJECTED), outcomes.seen());
    }

    /**
     * Issue 46, hole 10: a hostile body nested deeper than the JSON parser reads, sent to a consumer
     * keyed by JSON Pointers. The parser's plain RuntimeException went through the guard undecided,
     * and the connector retried it as a handler failure to its last attempt, logging its trace each
     * time. It can never succeed: REJECTED at once, with the reason, the method never run.
     */
    @Test
    void aBodyNestedTooDeeplyToReadIsRejectedAtOnce() {
        String deep = "{\"tenant\":".repeat(5_000) + "1" + "}".repeat(5_000);
        MessageRefusedException rejected = assertThrows(MessageRefusedException.class, () -> bean.onTenantOrder(message(deep)));
        assertEquals(Outcome.REJECTED, rejected.outcome());
        assertEquals("payload is not valid JSON, or nested too deeply to read (java.lang.RuntimeException)", rejected.reason());
        assertEquals(0, bean.runs());
        assertEquals(List.of(Outcome.REJECTED), outcomes.seen());
    }

    @Test
    void payloadOnlyMethodIsGuardedByItsIdempotencyKeyParameter() {
        String id = UUID.randomUUID().toString();
        assertEquals(1, bean.onPayload("{\"qty\":1}", id));
        assertEquals(0, bean.onPayload("{\"qty\":1}", id), "a skipped call of an int method returns 0");
        assertEquals(2, bean.onPayload("{\"qty\":1}", id + "-other"));
    }

    /**
     * An unguarded consumer (as an {@code @Incoming} method the connector dispatched a delivery to)
     * calls a guarded bean once per order line: each call keys on its own line. Before the handover,
     * every guarded call on the dispatching thread keyed on the delivery, so two of three lines were
     * skipped as duplicates and their effects lost.
     */
    @Test
    void guardedCallsInsideAnUnguardedConsumerKeyOnTheirOwnArguments() {
        String order = "a-" + UUID.randomUUID() + ";b-" + UUID.randomUUID() + ";c-" + UUID.randomUUID();
        RecordingDispatch delivery = new RecordingDispatch(message(order));
        handover.post(order, delivery);
        splitter.onOrder(order);
        assertEquals(List.of(order.split(";")), lines.reserved(), "three lines, three effects");
        assertEquals(List.of(), delivery.decisions(), "the delivery was for the unguarded method: no guard decided it");
        handover.withdraw(order);
        assertEquals(0, handover.pending());
    }

    /**
     * A guarded consumer takes its delivery (keys on the delivery's exchange and routing key, and
     * reports to it); the guarded bean it calls keys on its own argument and reports nowhere.
     */
    @Test
    void aGuardedConsumerAndTheGuardedBeanItCallsEachKeyOnTheirOwnInput() {
        String line = "only-" + UUID.randomUUID();
        String order = new String(line.toCharArray()); // equal to the line, but another object
        RecordingDispatch delivery = new RecordingDispatch(MessageView.of("orders", "order.placed", null, Map.of(),
                order.getBytes(StandardCharsets.UTF_8)));
        handover.post(order, delivery);
        guardedSplitter.onOrder(order);
        assertEquals(List.of(order), guardedSplitter.orders());
        assertEquals(List.of(line), lines.reserved(), "the inner call ran: it is not the delivery's duplicate");
        assertEquals(List.of(Outcome.PROCESSED), delivery.outcomes());
        assertEquals("cdi-orders", delivery.decisions().get(0).consumer());
        assertEquals(0, handover.pending(), "taken once, by the call made for the delivery");

        // The delivery comes again (a redelivery, a new payload object): a duplicate of the consumer.
        String again = new String(order.toCharArray());
        RecordingDispatch redelivery = new RecordingDispatch(delivery.message());
        handover.post(again, redelivery);
        guardedSplitter.onOrder(again);
        assertEquals(List.of(Outcome.DUPLICATE), redelivery.outcomes());
        assertEquals(1, guardedSplitter.orders().size());
    }

    /**
     * A refusal or a handler failure of the delivery a connector dispatched to an {@code @Incoming}
     * method, when that connector settles from the decision: the method returns quietly (Reactive
     * Messaging would log an exception as an error with its stack trace, on every attempt) and the
     * delivery holds the decision, and for a failure what the handler threw. Every other case still
     * throws: a dispatch that does not settle from the decision, and a call no connector dispatched.
     */
    @Test
    void aRefusedOrFailedDeliveryReturnsQuietlyOnlyWhereItsConnectorSettlesFromTheDecision() {
        String keyless = "{\"no-id\":\"" + UUID.randomUUID() + "\"}";
        RecordingDispatch settling = new RecordingDispatch(message(keyless), true);
        handover.post(keyless, settling);
        guardedConsumer.onOrder(keyless);
        assertEquals(List.of(Outcome.REJECTED), settling.outcomes(), "the connector holds the refusal");

        String other = "{\"no-id\":\"" + UUID.randomUUID() + "\"}";
        RecordingDispatch plain = new RecordingDispatch(message(other));
        handover.post(other, plain);
        assertEquals(Outcome.REJECTED, assertThrows(MessageRefusedException.class, () -> guardedConsumer.onOrder(other)).outcome());
        assertEquals(List.of(Outcome.REJECTED), plain.outcomes());

        assertThrows(MessageRefusedException.class, () -> guardedConsumer.onOrder("{\"no-id\":1}"), "nothing dispatched");

        String failing = "{\"id\":\"" + UUID.randomUUID() + "\",\"fail\":true}";
        RecordingDispatch failed = new RecordingDispatch(message(failing), true);
        handover.post(failing, failed);
        try (LogCapture log = new LogCapture()) {
            guardedConsumer.onOrder(failing);
            assertEquals(List.of(), log.lines(), "the connector logs the failed attempt, once");
        }
        assertEquals(List.of(Outcome.FAILED), failed.outcomes());
        assertEquals("the handler failed", failed.failures().get(0).getMessage(), "the connector has what the handler threw");

        String failingPlain = "{\"id\":\"" + UUID.randomUUID() + "\",\"fail\":true}";
        RecordingDispatch thrown = new RecordingDispatch(message(failingPlain));
        handover.post(failingPlain, thrown);
        try (LogCapture log = new LogCapture()) {
            assertThrows(IllegalStateException.class, () -> guardedConsumer.onOrder(failingPlain), "its connector needs the exception");
            assertEquals(1, log.lines().stream().filter(l -> l.startsWith("ONCE0303I")).count(), log.lines().toString());
        }
        assertEquals(List.of(Outcome.FAILED), thrown.outcomes());
        assertEquals(List.of(), guardedConsumer.orders());
        assertEquals(0, handover.pending());
    }

    /**
     * A guarded {@code @Incoming} call that finds no delivery posted for its payload (copied or
     * converted on the way, or another connector) is still guarded on what its parameters carry, and
     * says so once: before, the key silently changed to one without exchange and routing key.
     */
    @Test
    void aGuardedIncomingCallWithNoPostedDeliveryIsWarnedOnceAndGuardedOnItsPayload() {
        String order = "{\"id\":\"" + UUID.randomUUID() + "\"}";
        try (LogCapture log = new LogCapture()) {
            guardedConsumer.onOrder(order);
            guardedConsumer.onOrder(new String(order.toCharArray()));
            assertEquals(1, log.lines().stream().filter(l -> l.startsWith("ONCE0305W")).count(), log.lines().toString());
            assertTrue(log.lines().stream().anyMatch(l -> l.contains("GuardedConsumer.onOrder") && l.contains("payload alone")));

            String posted = "{\"id\":\"" + UUID.randomUUID() + "\"}";
            handover.post(posted, new RecordingDispatch(message(posted), true));
            guardedConsumer.onOrder(posted);
            assertEquals(1, log.lines().stream().filter(l -> l.startsWith("ONCE0305W")).count(), "a posted delivery is no warning");
        }
        assertEquals(List.of(Outcome.PROCESSED, Outcome.DUPLICATE, Outcome.PROCESSED), outcomes.seen());
        assertEquals(2, guardedConsumer.orders().size());
    }

    /**
     * A handler can pass its message's key to the services it calls: the same for every delivery of
     * the message (a redelivery after a crash sends the same key), with the application's key prefix
     * ({@code oo:} by default), absent outside a guarded handler.
     */
    @Test
    void aHandlerSeesItsMessagesKeyAndSendsItAsIdempotencyKey() {
        String body = "ship-" + UUID.randomUUID();
        String digest = new dev.onceonly.internal.engine.KeyDeriver("oo:").derive(
                dev.onceonly.testing.Settings.defaults("cdi-key", dev.onceonly.api.KeyStrategy.CONTENT),
                MessageView.of("", "", null, Map.of(), body.getBytes(StandardCharsets.UTF_8)), null).digest();
        String[] sent = bean.keyAndHeader(body).split("\\|");
        assertEquals(List.of("oo:cdi-key:" + digest, "oo:cdi-key:" + digest), List.of(sent[0], sent[1]));
        assertTrue(Long.parseLong(sent[2]) > 0, "the claim's fence: " + sent[2]);
        assertEquals(sent[2], sent[3], "sent as Idempotency-Fence");
        assertEquals("none|none", bean.keyOutsideAGuard());
    }

    /** A guarded method the container did not show at deployment, found only at its first call. */
    public static class NotSeenAtDeployment {
        @dev.onceonly.api.IdempotentMessage(consumer = "late-ledger")
        public void on(String body) {
        }
    }

    @Inject
    OnceOnlyExtension extension;

    /**
     * Such a method with the ledger on would meet no ledger (it is started at startup, for the
     * consumers found then): before, every message failed with a NullPointerException. Now its first
     * call fails naming the property.
     */
    @Test
    void aMethodFirstSeenAtItsFirstCallCannotTurnTheLedgerOn() throws Exception {
        System.setProperty("onceonly.consumers.late-ledger.ledger", "true");
        try {
            dev.onceonly.api.InvalidConfigurationException e = assertThrows(dev.onceonly.api.InvalidConfigurationException.class,
                    () -> extension.method(NotSeenAtDeployment.class.getMethod("on", String.class)));
            assertEquals("onceonly.consumers.late-ledger.ledger", e.property());
        } finally {
            System.clearProperty("onceonly.consumers.late-ledger.ledger");
        }
    }

    // ---------------------------------------------------------------- the delivery's span

    /** The guard's phase spans, as MicroProfile Telemetry's {@code TelemetryListeners} contributes them. */
    @ApplicationScoped
    static class GuardSpans {
        @Produces
        GuardListener tracing() {
            return new GuardTracing(TELEMETRY.tracer());
        }
    }

    @ApplicationScoped
    public static class TracedConsumer {
        private volatile SpanContext current;

        @Incoming("cdi-traced")
        @IdempotentMessage(consumer = "traced", keyStrategy = KeyStrategy.CONTENT)
        public void onOrder(String order) {
            current = Span.current().getSpanContext();
            if (order.startsWith("fail")) {
                throw new IllegalStateException("the handler failed on " + order);
            }
        }

        SpanContext current() {
            return current;
        }
    }

    /** Posts {@code order} as a delivery whose headers carry the publisher's trace context, then invokes the consumer with it. */
    private void deliver(String order) {
        MessageView message = MessageView.of("orders", "order.placed", null, Map.of("traceparent", "00-" + TRACE + "-" + SENDER + "-01"),
                order.getBytes(StandardCharsets.UTF_8));
        handover.post(order, new RecordingDispatch(message, true, TELEMETRY.messageTracing()));
        traced.onOrder(order);
    }

    @Test
    void aDeliveryIsHandledInsideAConsumerSpanUnderThePublishersContextWithTheGuardsPhasesBeneath() {
        deliver("order-" + UUID.randomUUID());
        SpanData process = TELEMETRY.span("queue process");
        assertEquals(TRACE, process.getTraceId());
        assertEquals(SENDER, process.getParentSpanId());
        assertEquals(process.getSpanId(), traced.current().getSpanId(), "current in the handler");
        for (String phase : List.of("onceonly.claim", "onceonly.finalise")) {
            SpanData span = TELEMETRY.span(phase);
            assertEquals(process.getSpanId(), span.getParentSpanId(), phase);
            assertEquals(TRACE, span.getTraceId(), phase);
        }
        assertFalse(Span.current().getSpanContext().isValid(), "nothing left current after the call");
    }

    /** Failed, though the call returns to the messaging runtime: its connector settles the failure. */
    @Test
    void aHandlerThatThrowsMarksTheConsumerSpanFailed() {
        deliver("fail-" + UUID.randomUUID());
        SpanData process = TELEMETRY.span("queue process");
        assertEquals(StatusCode.ERROR, process.getStatus().getStatusCode());
        assertEquals(IllegalStateException.class.getName(), process.getStatus().getDescription());
        assertFalse(Span.current().getSpanContext().isValid());
    }

    /** A guarded call no connector dispatched (a REST resource, a bean a consumer calls) opens no consumer span. */
    @Test
    void aCallNoConnectorDispatchedOpensNoConsumerSpan() {
        traced.onOrder("direct-" + UUID.randomUUID());
        assertTrue(TELEMETRY.spans().stream().noneMatch(s -> s.getName().endsWith(" process")), TELEMETRY.spans().toString());
        assertFalse(TELEMETRY.span("onceonly.claim").getParentSpanContext().isValid());
    }
}
