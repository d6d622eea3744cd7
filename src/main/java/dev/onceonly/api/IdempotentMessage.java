package dev.onceonly.api;

import jakarta.enterprise.util.Nonbinding;
import jakarta.interceptor.InterceptorBinding;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes the business effect of a message consumer method happen once, however often the broker
 * delivers the message.
 *
 * <p>Before the method runs, a claim on the message key is taken in the claim store (Redis in
 * production). A message that was processed before is not handed to the method again
 * ({@link Outcome#DUPLICATE}); a message another holder is working on is refused with
 * {@link Outcome#BUSY}; a method that throws releases the claim, so a redelivery runs again.
 *
 * <p>Every member is a default only: MicroProfile Config overrides it per consumer
 * ({@code onceonly.consumers.<consumer>.<property>}), then globally ({@code onceonly.<property>}).
 * An empty string means "not set here".
 *
 * <p>Side effects outside the transactional database (HTTP calls, e-mails) are protected by the
 * claim only: if the claim store loses the key (flushed, evicted), such an effect can repeat.
 */
@InterceptorBinding
@Inherited
@Documented
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface IdempotentMessage {

    /**
     * Consumer name: scopes the keys (two consumers of one fan-out message each process it once)
     * and names the configuration. Default: {@code <simple class name>.<method name>}.
     *
     * @return the consumer name, or empty for the default
     */
    @Nonbinding String consumer() default "";

    /** {@return how the message key is derived} Default: {@link KeyStrategy#CONTENT}. */
    @Nonbinding KeyStrategy keyStrategy() default KeyStrategy.DEFAULT;

    /** {@return the header name for {@link KeyStrategy#HEADER}, e.g. {@code x-idempotency-key}} */
    @Nonbinding String keyHeader() default "";

    /** {@return the RFC 6901 JSON Pointer into the payload for {@link KeyStrategy#JSON_POINTER}, e.g. {@code /orderId}} */
    @Nonbinding String keyPointer() default "";

    /**
     * Lease while in progress, e.g. {@code 10s}, {@code 500ms}, {@code PT1M}. Default {@code 10s}.
     * Renewed while the handler runs, so it need not cover a long handler; it bounds how long the
     * messages of an instance that died stay BUSY.
     *
     * @return the lease, or empty for the default
     */
    @Nonbinding String lease() default "";

    /** {@return how long a processed key is remembered, e.g. {@code 24h}} Default {@code 24h}. */
    @Nonbinding String retention() default "";
}
