package dev.onceonly.demo.inventory;

import jakarta.json.Json;
import jakarta.json.JsonObject;

import java.io.StringReader;

/** An order as it travels on the {@code orders} exchange: {@code {"orderId":"…","sku":"…","quantity":n}}. */
public record Order(String orderId, String sku, int quantity) {

    public static Order parse(String json) {
        JsonObject o = Json.createReader(new StringReader(json)).readObject();
        return new Order(o.getString("orderId"), o.getString("sku"), o.getInt("quantity"));
    }

    public String toJson() {
        return Json.createObjectBuilder().add("orderId", orderId).add("sku", sku).add("quantity", quantity).build().toString();
    }
}
