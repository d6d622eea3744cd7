package dev.onceonly.spi;

import java.util.Map;

/**
 * The trace context of messages across the broker. The connector asks it for a span around each
 * publish, whose context it writes into the message's headers, and for the span a delivery's
 * guarded handling runs in, whose parent is the context the delivery's headers carry; the outbox
 * asks it when a message is sent, so the message carries the sender's context however late the
 * relay publishes it. The observability layer implements it on OpenTelemetry (W3C
 * {@code traceparent} / {@code tracestate} by default); {@link #NONE} when telemetry is absent or
 * off.
 *
 * <p>Implementations never see a body and never record a key; a header a publisher set is used as
 * a parent link and nothing else, and one that does not parse is ignored, never an error.
 */
public interface MessageTracing {

    /** Adds nothing and opens nothing: no telemetry. */
    MessageTracing NONE = new MessageTracing() {
        @Override
        public Produced produce(Operation operation, String exchange, Map<String, Object> headers) {
            return new Produced(Span.NONE, headers);
        }

        @Override
        public Span process(String queue, Map<String, Object> headers) {
            return Span.NONE;
        }
    };

    /** What a PRODUCER span stands for. */
    enum Operation {
        /** The message goes to the broker now (an outgoing channel); the span lasts until the broker's confirm. */
        PUBLISH("publish"),
        /** The message is written now and published later (the outbox); the span marks the send. */
        CREATE("create");

        private final String label;

        Operation(String label) {
            this.label = label;
        }

        /** {@return the operation's name in span names and attributes: {@code publish} or {@code create}} */
        public String label() {
            return label;
        }
    }

    /**
     * Opens a PRODUCER span for one message to {@code exchange}, a child of the current context,
     * and gives the headers to publish the message with: {@code headers} plus the span's trace
     * context. A trace header the message already holds is kept (an application that set its own
     * {@code traceparent} keeps its trace context).
     *
     * @param operation whether the message is published now or later
     * @param exchange  the exchange; empty for the default exchange
     * @param headers   the message's headers (read only, never changed)
     * @return the span, to end once, and the headers to publish with ({@code headers} itself when nothing was added)
     */
    Produced produce(Operation operation, String exchange, Map<String, Object> headers);

    /**
     * Opens the CONSUMER span one delivery's handling runs in, named after {@code queue}, whose
     * parent is the trace context {@code headers} carry (a new trace when they carry none, or one
     * that does not parse), and makes it current on the calling thread until it ends.
     *
     * @param queue   the queue the delivery came from
     * @param headers the delivery's headers
     * @return the span, to end once on the calling thread
     */
    Span process(String queue, Map<String, Object> headers);

    /**
     * A PRODUCER span and the headers that carry its context.
     *
     * @param span    the span
     * @param headers the headers to publish with
     */
    record Produced(Span span, Map<String, Object> headers) {
    }

    /** An open span. */
    interface Span {

        /** A span that records nothing. */
        Span NONE = new Span() {
            @Override
            public void failed(Throwable failure) {
            }

            @Override
            public void end() {
            }
        };

        /**
         * Marks the span failed, naming the exception's class only (its message may hold data).
         *
         * @param failure what failed
         */
        void failed(Throwable failure);

        /** Ends the span; a span {@link #process} made current stops being current (call it on that thread). */
        void end();
    }
}
