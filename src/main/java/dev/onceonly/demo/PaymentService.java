package dev.onceonly.demo;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.json.Json;
import jakarta.json.JsonObject;

import java.io.StringReader;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Charges a payment: the kind of effect a customer must never see twice. Guarded by the payment id
 * inside the JSON body; a body with {@code "fail": true} makes the charge fail (to show that a
 * failed attempt is not remembered as done).
 */
@ApplicationScoped
public class PaymentService {

    private final Map<String, AtomicInteger> charges = new ConcurrentHashMap<>();

    /** @return the number of times this payment was charged, or {@code null} when skipped as a duplicate */
    @IdempotentMessage(consumer = "payments", keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/paymentId")
    public Integer charge(String json) {
        JsonObject payment = Json.createReader(new StringReader(json)).readObject();
        if (payment.getBoolean("fail", false)) {
            throw new IllegalStateException("payment provider unavailable");
        }
        return charges.computeIfAbsent(payment.getString("paymentId"), id -> new AtomicInteger()).incrementAndGet();
    }

    public int chargesOf(String paymentId) {
        AtomicInteger n = charges.get(paymentId);
        return n == null ? 0 : n.get();
    }
}
