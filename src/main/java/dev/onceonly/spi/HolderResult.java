package dev.onceonly.spi;

/** Answer of the owner-checked primitives {@code complete}, {@code release} and {@code extend}. */
public enum HolderResult {
    /** The caller's token held the key; the change was applied. */
    APPLIED,
    /** The caller no longer holds the key (lease expired, released, or someone else holds it); nothing changed. */
    NOT_HOLDER
}
