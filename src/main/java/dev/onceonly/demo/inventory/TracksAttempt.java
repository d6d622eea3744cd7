package dev.onceonly.demo.inventory;

import jakarta.interceptor.InterceptorBinding;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Makes the delivery's attempt number known to the {@code GuardEvent} observers while a consumer
 * method is called ({@link AttemptTracker}); the method needs an {@code IncomingRabbitMetadata}
 * parameter.
 */
@InterceptorBinding
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.METHOD, ElementType.TYPE})
public @interface TracksAttempt {
}
