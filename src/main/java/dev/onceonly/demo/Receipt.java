package dev.onceonly.demo;

import java.time.Instant;

/**
 * What a charge answers: kept by the guard with the payment's key (JSON-B), so that a retried
 * request gets this very receipt again, its charge id and time included, instead of a second charge.
 *
 * @param paymentId the payment
 * @param chargeId  the charge written for it
 * @param amount    the amount charged
 * @param charges   how many charges the payment has (1, unless something let a duplicate through)
 * @param chargedAt when it was charged
 */
public record Receipt(String paymentId, String chargeId, long amount, int charges, Instant chargedAt) {
}
