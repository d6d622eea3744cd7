package dev.onceonly.internal.rabbitmq;

import java.time.Duration;

/**
 * How the connector names its delay queues: apart, so that the connections'
 * topology recovery can tell them without depending on what declares them.
 */
final class DelayQueueNames {

    /** Between the work queue's name and the delay in milliseconds. */
    static final String INFIX = ".onceonly.delay.";

    private DelayQueueNames() {
    }

    /** The delay queue of {@code queue} for {@code delay}. */
    static String name(String queue, Duration delay) {
        return queue + INFIX + delay.toMillis();
    }

    /** Whether {@code queue} is named as a delay queue of this connector. */
    static boolean isDelayQueue(String queue) {
        int infix = queue.lastIndexOf(INFIX);
        String millis = infix < 0 ? "" : queue.substring(infix + INFIX.length());
        return !millis.isEmpty() && millis.chars().allMatch(Character::isDigit);
    }
}
