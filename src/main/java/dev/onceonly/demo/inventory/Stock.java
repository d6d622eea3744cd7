package dev.onceonly.demo.inventory;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

/** Units of one SKU in the warehouse. Decremented once per order, in the transaction of the guard's ledger row. */
@Entity
@Table(name = "demo_stock")
public class Stock {

    @Id
    @Column(length = 64)
    private String sku;

    @Column(nullable = false)
    private long quantity;

    protected Stock() {
    }

    public Stock(String sku, long quantity) {
        this.sku = sku;
        this.quantity = quantity;
    }

    public String sku() {
        return sku;
    }

    public long quantity() {
        return quantity;
    }

    void take(long units) {
        quantity -= units;
    }

    void set(long units) {
        quantity = units;
    }
}
