package dev.onceonly.api;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the parameter of an {@link IdempotentMessage} method that holds the business key of the
 * message (an order id, a payment id). Its {@code toString()} is the key; {@code null} or blank
 * means the message is {@link Outcome#REJECTED}. Using it selects {@link KeyStrategy#PARAMETER}
 * unless a strategy is configured explicitly.
 */
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target(ElementType.PARAMETER)
public @interface IdempotencyKey {
}
