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
 * {@link Outcome#BUSY}; a method that throws releases the claim, so a redelivery runs again
 * (unless the exception is not worth retrying: {@link #noRetryFor()}).
 *
 * <p>Every member is a default only: MicroProfile Config overrides it per consumer
 * ({@code onceonly.consumers.<consumer>.<property>}), then globally ({@code onceonly.<property>}).
 * An empty string (or an empty array) means "not set here".
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

    /**
     * The header name for {@link KeyStrategy#HEADER}, e.g. {@code x-idempotency-key}; several
     * comma-separated names ({@code tenant,order-id}) make a composite key of their values, in that
     * order. The same form as the property {@code key-header}, which overrides it.
     *
     * @return the header name(s), or empty when not set here
     */
    @Nonbinding String keyHeader() default "";

    /**
     * The RFC 6901 JSON Pointer into the payload for {@link KeyStrategy#JSON_POINTER}, e.g.
     * {@code /orderId}; several comma-separated pointers ({@code /tenant,/orderId}) make a composite
     * key of their values, in that order. The same form as the property {@code key-pointer}, which
     * overrides it.
     *
     * @return the JSON Pointer(s), or empty when not set here
     */
    @Nonbinding String keyPointer() default "";

    /**
     * Whether a body that differs from the first one under the same key is a {@link Outcome#CONFLICT}
     * ({@link ConflictPolicy#STRICT}, the default) or a {@link Outcome#DUPLICATE}
     * ({@link ConflictPolicy#IGNORE}). Overridden by the property {@code conflict}.
     *
     * @return the policy, or {@link ConflictPolicy#DEFAULT} when not set here
     */
    @Nonbinding ConflictPolicy conflict() default ConflictPolicy.DEFAULT;

    /**
     * Compare only the values at these comma-separated JSON Pointers ({@code /sku,/quantity}) to
     * tell a {@link Outcome#DUPLICATE} from a {@link Outcome#CONFLICT}, instead of the whole body:
     * for producers that send a message again with a new timestamp or another field order. Needs a
     * JSON body (any other is {@link Outcome#REJECTED}); not with {@link ConflictPolicy#IGNORE}, nor
     * with the content key. Overridden by the property {@code conflict-fields}.
     *
     * @return the JSON Pointers, or empty when not set here (the whole body is compared)
     */
    @Nonbinding String conflictFields() default "";

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

    /**
     * Exceptions not worth retrying: a message whose handler fails with one (or with an exception
     * caused by one) can never succeed as it is, so it is not delivered again. The claim is
     * released and the transaction rolled back as for any failure; the outcome stays
     * {@link Outcome#FAILED}, reported with {@link GuardEvent#retryable()} {@code false}, and the
     * {@code onceonly-rabbitmq} connector dead-letters the message at once, naming the exception
     * class in the reason. Subclasses match. Added to the built-in defaults
     * ({@code IllegalArgumentException} and the JSON-P and JSON-B exceptions), which count only
     * when nothing listed here or in {@link #retryFor()} matches. The rule that decides between the
     * lists is in docs/consumers.md, "Which failures are retried".
     *
     * <p>Overridden by {@code onceonly.consumers.<consumer>.no-retry-for}, then
     * {@code onceonly.no-retry-for} (comma-separated class names). Empty: not set here.
     *
     * @return the exception classes not to retry
     */
    @Nonbinding Class<? extends Throwable>[] noRetryFor() default {};

    /**
     * Exceptions worth retrying even though a more general class is in {@link #noRetryFor()} or the
     * defaults: a more specific class beats a more general one, and a class in both lists is retried.
     * {@code retryFor = Exception.class} turns the built-in defaults off (they count only when
     * nothing listed matches). Failures that match nothing are retried anyway, up to the
     * connector's {@code max-attempts}.
     *
     * <p>Overridden by {@code onceonly.consumers.<consumer>.retry-for}, then
     * {@code onceonly.retry-for} (comma-separated class names). Empty: not set here.
     *
     * @return the exception classes to retry
     */
    @Nonbinding Class<? extends Throwable>[] retryFor() default {};
}
