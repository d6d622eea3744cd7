package dev.onceonly.demo;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import dev.onceonly.api.Outbox;
import dev.onceonly.api.OutboxMessage;
import dev.onceonly.api.Replayable;
import jakarta.annotation.Resource;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.json.JsonObject;
import jakarta.persistence.EntityManager;
import jakarta.persistence.PersistenceContext;
import jakarta.transaction.TransactionSynchronizationRegistry;
import jakarta.transaction.Transactional;
import org.eclipse.microprofile.config.inject.ConfigProperty;

import java.io.StringReader;
import java.time.Instant;

import static dev.onceonly.demo.DemoJson.JSON;

/**
 * Charges a payment: writes a {@link Charge} row, the kind of effect a customer must never see
 * twice. Guarded by the payment id inside the JSON body; with {@code onceonly.consumers.payments.ledger=true}
 * (the demo's default) the guard's ledger row is written in the same transaction as the charge, and
 * so is the {@link Receipt} it returns: a {@link Replayable} result is kept by the guard, and a
 * duplicate of the payment gets the first call's receipt back, marked as replayed.
 *
 * <p>Two flags show what happens when the transaction does not commit: {@code "fail": true} makes
 * the payment provider fail after the charge was written (the method throws), {@code "veto": true}
 * makes a fraud check veto the transaction without an exception (it is marked rollback-only and
 * fails at commit). Either way the charge is not kept and the message may be delivered again.
 *
 * <p>{@code "notify": n} sends {@code n} notifications of the charge ({@code payment.notified} on the
 * demo's exchange) through the {@link Outbox}, before the provider call: they are published once the
 * charge committed, with the message ids {@code payments:<digest>/1..n}, and never when it did not.
 */
@ApplicationScoped
public class PaymentService {

    @PersistenceContext(unitName = "demo")
    EntityManager em;

    @Resource
    TransactionSynchronizationRegistry transaction;

    @Inject
    Outbox outbox;

    @Inject
    @ConfigProperty(name = "demo.exchange", defaultValue = "orders")
    String exchange;

    /**
     * @return the receipt: this call's, or for a duplicate the first call's ({@link Replayable#replayed()});
     *         {@code null} for a duplicate whose receipt is not kept (any more)
     */
    @IdempotentMessage(consumer = "payments", keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/paymentId")
    @Transactional
    public Replayable<Receipt> charge(String json) {
        JsonObject payment = JSON.createReader(new StringReader(json)).readObject();
        String paymentId = payment.getString("paymentId");
        Charge charge = new Charge(paymentId, payment.getInt("amount", 0), Instant.now());
        em.persist(charge);
        // Written now, so that the database's answer (a lock, a constraint) comes before the provider call.
        em.flush();
        for (int n = 1; n <= payment.getInt("notify", 0); n++) {
            outbox.send(OutboxMessage.text(exchange, "payment.notified",
                    JSON.createObjectBuilder().add("paymentId", paymentId).add("notification", n).build().toString())
                    .withContentType("application/json"));
        }
        if (payment.getBoolean("fail", false)) {
            throw new IllegalStateException("payment provider unavailable");
        }
        int charges = chargesOf(paymentId);
        if (payment.getBoolean("veto", false)) {
            transaction.setRollbackOnly();
        }
        return Replayable.of(new Receipt(paymentId, charge.id(), payment.getInt("amount", 0), charges, charge.chargedAt()));
    }

    public int chargesOf(String paymentId) {
        return em.createQuery("select count(c) from Charge c where c.paymentId = :id", Long.class)
                .setParameter("id", paymentId)
                .getSingleResult()
                .intValue();
    }
}
