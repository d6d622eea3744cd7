package dev.onceonly.internal.cdi;

import dev.onceonly.api.IdempotentMessage;
import dev.onceonly.api.KeyStrategy;
import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import org.eclipse.microprofile.reactive.messaging.Incoming;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * Consumers that call other guarded beans: an unguarded order consumer that reserves each line
 * through a guarded bean, and a guarded one that does the same.
 */
public final class OrderBeans {

    private OrderBeans() {
    }

    /** Guarded per line, keyed on the line's own content. */
    @ApplicationScoped
    public static class Lines {
        private final List<String> reserved = new CopyOnWriteArrayList<>();

        @IdempotentMessage(consumer = "cdi-lines")
        public void reserve(String line) {
            reserved.add(line);
        }

        public List<String> reserved() {
            return List.copyOf(reserved);
        }
    }

    /** Not guarded itself: as an {@code @Incoming} method that splits an order into lines. */
    @ApplicationScoped
    public static class Splitter {
        @Inject
        Lines lines;

        public void onOrder(String order) {
            for (String line : order.split(";")) {
                lines.reserve(line);
            }
        }
    }

    /** Guarded on the whole order, and reserving its lines through the guarded bean. */
    @ApplicationScoped
    public static class GuardedSplitter {
        @Inject
        Lines lines;

        private final List<String> orders = new CopyOnWriteArrayList<>();

        @IdempotentMessage(consumer = "cdi-orders")
        public void onOrder(String order) {
            orders.add(order);
            for (String line : order.split(";")) {
                lines.reserve(line);
            }
        }

        public List<String> orders() {
            return List.copyOf(orders);
        }
    }

    /** A guarded {@code @Incoming} method keyed on the order's id; an order without one is refused (REJECTED). */
    @ApplicationScoped
    public static class GuardedConsumer {
        private final List<String> orders = new CopyOnWriteArrayList<>();

        @Incoming("cdi-incoming")
        @IdempotentMessage(consumer = "cdi-incoming", keyStrategy = KeyStrategy.JSON_POINTER, keyPointer = "/id")
        public void onOrder(String order) {
            if (order.contains("\"fail\"")) {
                throw new IllegalStateException("the handler failed");
            }
            orders.add(order);
        }

        public List<String> orders() {
            return List.copyOf(orders);
        }
    }
}
