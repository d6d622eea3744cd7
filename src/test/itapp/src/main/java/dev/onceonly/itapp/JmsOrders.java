package dev.onceonly.itapp;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import jakarta.ejb.ActivationConfigProperty;
import jakarta.ejb.MessageDriven;
import jakarta.inject.Inject;
import jakarta.jms.JMSException;
import jakarta.jms.Message;
import jakarta.jms.MessageListener;
import jakarta.json.Json;
import jakarta.json.JsonObject;

import java.io.StringReader;

/**
 * A message-driven bean on Liberty's own messaging engine (queue jms/orders), guarded like any
 * consumer: the key is the body's {@code /id}, the ledger row commits in the bean's
 * container-managed transaction. A body with {@code "fail": true} fails on every delivery, so the
 * engine's redelivery limit moves it to the queue's exception destination; one with
 * {@code "failRuns": n} fails the first n times the handler runs for it; one without an id is
 * REJECTED and moved to the dead-letter queue at once.
 */
@MessageDriven(name = "JmsOrders", activationConfig = {
        @ActivationConfigProperty(propertyName = "destinationType", propertyValue = "jakarta.jms.Queue"),
        @ActivationConfigProperty(propertyName = "destinationLookup", propertyValue = "jms/orders")})
public class JmsOrders implements MessageListener {

    @Inject
    ItRecorder recorder;

    @Override
    @IdempotentMessage(consumer = "it-jms", keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/id")
    public void onMessage(Message message) {
        JsonObject order;
        try {
            order = Json.createReader(new StringReader(message.getBody(String.class))).readObject();
        } catch (JMSException e) {
            throw new IllegalStateException(e);
        }
        String id = order.getString("id");
        int runs = recorder.delivered("it-jms", id);
        if (order.getBoolean("fail", false) || runs <= order.getInt("failRuns", 0)) {
            throw new IllegalStateException("jms: failing on purpose");
        }
        recorder.effect("it-jms", id);
    }
}
