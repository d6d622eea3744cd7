package com.example.payments;

import jakarta.persistence.Entity;
import jakarta.persistence.GeneratedValue;
import jakarta.persistence.GenerationType;
import jakarta.persistence.Id;

import java.time.Instant;

/**
 * A payment received. {@code paymentId} is deliberately not unique in the table: keeping
 * duplicates out is OnceOnly's job here, not a constraint's.
 */
@Entity
public class Payment {

    @Id
    @GeneratedValue(strategy = GenerationType.IDENTITY)
    private Long id;

    private String paymentId;

    private long amountCents;

    private Instant receivedAt;

    protected Payment() {
    }

    public Payment(String paymentId, long amountCents) {
        this.paymentId = paymentId;
        this.amountCents = amountCents;
        this.receivedAt = Instant.now();
    }

    public String getPaymentId() {
        return paymentId;
    }

    public long getAmountCents() {
        return amountCents;
    }
}
