package com.example.payments;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.json.Json;
import jakarta.json.JsonObject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.Transactional;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import java.io.StringReader;

/**
 * Records each payment once, however often RabbitMQ delivers it: {@code {"paymentId":"…","amountCents":n}}.
 * The key is the payment's id; the claim is taken in Redis before the transaction, and the ledger
 * row commits in the same transaction as the payment.
 */
@ApplicationScoped
public class PaymentConsumer {

    @PersistenceContext(unitName = "payments")
    EntityManager em;

    @Incoming("payments")
    @IdempotentMessage(consumer = "payments", keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/paymentId")
    @Transactional
    public void onPayment(String json) {
        JsonObject payment = Json.createReader(new StringReader(json)).readObject();
        em.persist(new Payment(payment.getString("paymentId"), payment.getJsonNumber("amountCents").longValueExact()));
    }
}
