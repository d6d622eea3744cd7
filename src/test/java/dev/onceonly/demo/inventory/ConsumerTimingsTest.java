package dev.onceonly.demo.inventory;

import jakarta.json.JsonObject;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ConsumerTimingsTest {

    @Test
    void aBatchCallCountsEachOfItsMessagesAndIsTimedOnce() {
        ConsumerTimings timings = new ConsumerTimings();
        timings.call(0, 1_000_000, true, 32);
        timings.call(1_000_000, 2_000_000, true, 1);
        timings.call(2_000_000, 3_000_000, false, 4);

        JsonObject json = timings.toJson();
        assertEquals(33, json.getInt("returned"), "messages of the calls that returned");
        assertEquals(4, json.getInt("threw"));
        assertEquals(3, json.getJsonObject("callMicros").getInt("count"), "one latency sample per call");
        assertEquals(16_500, json.getInt("perSecond"), "33 messages over the 2 ms from the first start to the last return");
    }

    @Test
    void theStatsCountTheInventoryConsumerAndThoseNamedAfterIt() {
        assertTrue(InventoryConsumer.countsAsInventory("inventory"));
        assertTrue(InventoryConsumer.countsAsInventory("inventory-batch"));
        assertFalse(InventoryConsumer.countsAsInventory("inventory-other"));
        assertFalse(InventoryConsumer.countsAsInventory("inventory.reserved"));
        assertFalse(InventoryConsumer.countsAsInventory("payments"));
    }
}
