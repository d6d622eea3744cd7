package dev.onceonly.demo;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Index;
import jakarta.persistence.Table;

import java.time.Instant;
import java.util.UUID;

/** One charge of a payment: the business effect that must happen once per payment. */
@Entity
@Table(name = "demo_charge", indexes = @Index(name = "demo_charge_payment", columnList = "payment_id"))
public class Charge {

    @Id
    @Column(name = "id", length = 36)
    private String id;

    @Column(name = "payment_id", length = 100, nullable = false)
    private String paymentId;

    @Column(name = "amount", nullable = false)
    private long amount;

    @Column(name = "charged_at", nullable = false)
    private Instant chargedAt;

    protected Charge() {
        // for JPA
    }

    public String id() {
        return id;
    }

    public Instant chargedAt() {
        return chargedAt;
    }

    public Charge(String paymentId, long amount, Instant chargedAt) {
        this.id = UUID.randomUUID().toString();
        this.paymentId = paymentId;
        this.amount = amount;
        this.chargedAt = chargedAt;
    }
}
