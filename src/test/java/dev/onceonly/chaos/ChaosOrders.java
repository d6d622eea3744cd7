package dev.onceonly.chaos;

import jakarta.json.Json;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;

/**
 * What a chaos run publishes: {@code count} valid orders, each on a stock row of its own (SKU =
 * order id) with 1 to 5 units, so that each order's effect can be read on its own; re-published
 * byte-identical copies of {@code copyPercent} % of them (chosen at random, so some orders get more
 * than one copy), two thirds shuffled into the stream and one third held back to the end of the run
 * (after Redis lost its keys, so the ledger has to catch them); and a few invalid orders of every
 * kind the demo refuses. Seeded: the same seed gives the same stream.
 */
public final class ChaosOrders {

    /** An invalid order, what the demo makes of it, and whether it has a stock row to watch. */
    public enum Invalid {
        NEGATIVE_QUANTITY("FAILED", true),
        ZERO_QUANTITY("FAILED", true),
        QUANTITY_TOO_LARGE("FAILED", true),
        FRACTIONAL_QUANTITY("FAILED", true),
        QUANTITY_AS_TEXT("FAILED", true),
        UNKNOWN_FIELD("FAILED", true),
        BLANK_SKU("FAILED", false),
        SKU_TOO_LONG("FAILED", false),
        BODY_TOO_LARGE("FAILED", true),
        MISSING_ORDER_ID("REJECTED", true),
        NOT_JSON("REJECTED", false);

        /** The dead letter's {@code x-onceonly-outcome}. */
        public final String outcome;
        final boolean watchesStock;

        Invalid(String outcome, boolean watchesStock) {
            this.outcome = outcome;
            this.watchesStock = watchesStock;
        }
    }

    /** One message to publish; {@code order} is the valid order's index, or -1 for an invalid one. */
    public record Message(String body, int order, Invalid invalid, boolean delayed) {
    }

    public final String prefix;
    public final String invalidPrefix;
    public final int count;
    private final int[] quantity;
    public final List<Message> stream = new ArrayList<>();
    public final List<Message> delayed = new ArrayList<>();
    public final List<Message> invalid = new ArrayList<>();
    public final int copies;

    public ChaosOrders(String runId, int count, int copyPercent, int invalidCount, long seed) {
        this.prefix = "c" + runId + "-";
        this.invalidPrefix = "x" + runId + "-";
        this.count = count;
        this.quantity = new int[count];
        Random random = new Random(seed);
        List<Message> main = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            quantity[i] = 1 + random.nextInt(5);
            main.add(new Message(json(orderId(i), orderId(i), quantity[i]), i, null, false));
        }
        copies = (int) Math.ceil(count * copyPercent / 100.0);
        for (int c = 0; c < copies; c++) {
            int i = random.nextInt(count);
            Message copy = new Message(main.get(i).body(), i, null, c % 3 == 0);
            (copy.delayed() ? delayed : main).add(copy);
        }
        Collections.shuffle(main, random);
        Collections.shuffle(delayed, random);
        Invalid[] kinds = Invalid.values();
        for (int k = 0; k < invalidCount; k++) {
            Invalid kind = kinds[k % kinds.length];
            invalid.add(new Message(invalidBody(kind, invalidPrefix + k), -1, kind, false));
        }
        // Half of the invalid orders early in the run, half in the middle.
        for (int k = 0; k < invalid.size(); k++) {
            int at = (k % 2 == 0 ? main.size() / 20 : main.size() / 2) + k;
            main.add(Math.min(at, main.size()), invalid.get(k));
        }
        stream.addAll(main);
    }

    public String orderId(int i) {
        return prefix + i;
    }

    public int quantity(int i) {
        return quantity[i];
    }

    /**
     * Whether the demo slows this order's handler down with {@code demo.slow-handler-percent} at
     * {@code percent}: the same choice as the demo's {@code FaultInjector}, mirrored here so the
     * run can freeze Redis while such a handler runs.
     */
    public static boolean slow(String orderId, double percent) {
        return percent > 0 && Math.floorMod(orderId.hashCode() * 31 + 17, 10_000) < percent * 100;
    }

    public int messages() {
        return stream.size() + delayed.size();
    }

    /** Stock rows to create: every valid order's, and those of the invalid orders that name a usable SKU. */
    public List<String> skus() {
        List<String> skus = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            skus.add(orderId(i));
        }
        for (int k = 0; k < invalid.size(); k++) {
            if (invalid.get(k).invalid().watchesStock) {
                skus.add(invalidPrefix + k);
            }
        }
        return skus;
    }

    static String json(String orderId, String sku, int quantity) {
        return Json.createObjectBuilder().add("orderId", orderId).add("sku", sku).add("quantity", quantity).build().toString();
    }

    /** The body of an invalid order of this kind, with {@code id} as its order id and SKU where it has them. */
    public static String invalidBody(Invalid kind, String id) {
        return switch (kind) {
            case NEGATIVE_QUANTITY -> json(id, id, -3);
            case ZERO_QUANTITY -> json(id, id, 0);
            case QUANTITY_TOO_LARGE -> json(id, id, 1_000_000);
            case FRACTIONAL_QUANTITY -> "{\"orderId\":\"" + id + "\",\"sku\":\"" + id + "\",\"quantity\":2.5}";
            case QUANTITY_AS_TEXT -> "{\"orderId\":\"" + id + "\",\"sku\":\"" + id + "\",\"quantity\":\"2\"}";
            case UNKNOWN_FIELD -> "{\"orderId\":\"" + id + "\",\"sku\":\"" + id + "\",\"quantity\":1,\"price\":-100}";
            case BLANK_SKU -> json(id, "  ", 1);
            case SKU_TOO_LONG -> json(id, id + "-" + "s".repeat(80), 1);
            case BODY_TOO_LARGE -> "{\"orderId\":\"" + id + "\",\"sku\":\"" + id + "\",\"quantity\":1" + " ".repeat(5000) + "}";
            case MISSING_ORDER_ID -> "{\"sku\":\"" + id + "\",\"quantity\":1,\"note\":\"" + id + "\"}";
            case NOT_JSON -> "orderId=" + id + "&sku=" + id + "&quantity=1";
        };
    }
}
