package dev.onceonly.itapp;

import dev.onceonly.api.IdempotentMessage;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.json.JsonString;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import java.io.StringReader;

/**
 * Consumers that call a guarded bean method ({@link LineService#reserve}) while a delivery is being
 * dispatched: the inner guard must key on the argument it is given, not on the delivery.
 */
@ApplicationScoped
public class NestedConsumers {

    @Inject
    ItRecorder recorder;

    @Inject
    LineService lines;

    /**
     * Unguarded: an order {@code {"orderId":"…","lines":["…","…","…"]}}, one reservation per line.
     * Every line is a different string, so every line must be reserved.
     */
    @Incoming("it-order-lines")
    public void order(String json) {
        JsonObject order = Json.createReader(new StringReader(json)).readObject();
        recorder.delivered("it-order-lines", order.getString("orderId"));
        for (JsonString line : order.getJsonArray("lines").getValuesAs(JsonString.class)) {
            lines.reserve(line.getString());
        }
    }

    /** Guarded on the delivery's content, and calls the guarded line method with another argument. */
    @Incoming("it-nested")
    @IdempotentMessage(consumer = "it-nested")
    public void nested(String body) {
        recorder.delivered("it-nested", body);
        recorder.effect("it-nested", body);
        lines.reserve(innerLine(body));
    }

    /** The line the nested consumer reserves for a body; the test computes the same. */
    public static String innerLine(String body) {
        return "line-of:" + body;
    }
}
