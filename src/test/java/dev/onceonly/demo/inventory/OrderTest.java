package dev.onceonly.demo.inventory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;


import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OrderTest {

    @Test
    void aValidOrderParses() {
        assertEquals(new Order("o-1", "widget", 3), Order.parse("{\"orderId\":\"o-1\",\"sku\":\"widget\",\"quantity\":3}"));
        assertEquals(1000, Order.parse("{\"quantity\":1000,\"sku\":\"w\",\"orderId\":\"o\"}").quantity());
    }

    @ParameterizedTest
    @ValueSource(strings = {
            "{\"orderId\":\"o\",\"sku\":\"w\",\"quantity\":-3}",
            "{\"orderId\":\"o\",\"sku\":\"w\",\"quantity\":0}",
            "{\"orderId\":\"o\",\"sku\":\"w\",\"quantity\":1001}",
            "{\"orderId\":\"o\",\"sku\":\"w\",\"quantity\":99999999999999999999}",
            "{\"orderId\":\"o\",\"sku\":\"w\",\"quantity\":2.5}",
            "{\"orderId\":\"o\",\"sku\":\"w\",\"quantity\":\"2\"}",
            "{\"orderId\":\"o\",\"sku\":\"w\"}",
            "{\"orderId\":\"o\",\"sku\":\"w\",\"quantity\":null}",
            "{\"orderId\":\"o\",\"sku\":\"w\",\"quantity\":1,\"price\":5}",
            "{\"orderId\":\"o\",\"sku\":\"  \",\"quantity\":1}",
            "{\"orderId\":\"\",\"sku\":\"w\",\"quantity\":1}",
            "{\"orderId\":7,\"sku\":\"w\",\"quantity\":1}",
            "{\"sku\":\"w\",\"quantity\":1}",
            "[1,2,3]",
            "\"order\"",
            "not json",
            "{\"orderId\":\"o\",\"sku\":\"w\",\"quantity\":1",
    })
    void invalidOrdersAreRefused(String json) {
        InvalidOrderException e = assertThrows(InvalidOrderException.class, () -> Order.parse(json));
        assertTrue(e.getMessage().startsWith("invalid order: "), e.getMessage());
    }

    @Test
    void sizesAreBounded() {
        assertThrows(InvalidOrderException.class, () -> Order.parse("{\"orderId\":\"" + "o".repeat(101) + "\",\"sku\":\"w\",\"quantity\":1}"));
        assertThrows(InvalidOrderException.class, () -> Order.parse("{\"orderId\":\"o\",\"sku\":\"" + "w".repeat(65) + "\",\"quantity\":1}"));
        assertThrows(InvalidOrderException.class, () -> Order.parse("{\"orderId\":\"o\",\"sku\":\"w\",\"quantity\":1" + " ".repeat(4100) + "}"));
        assertEquals(64, Order.parse("{\"orderId\":\"o\",\"sku\":\"" + "w".repeat(64) + "\",\"quantity\":1}").sku().length());
    }
}
