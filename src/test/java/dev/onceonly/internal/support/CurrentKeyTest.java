package dev.onceonly.internal.support;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

class CurrentKeyTest {

    @Test
    void aRunCountsItsSendsANestedRunCountsItsOwnAndTheOuterGoesOnAfterIt() {
        try (CurrentKey.Scope outer = CurrentKey.enter("orders:a", 0)) {
            assertEquals(1, CurrentKey.nextSendNumber());
            try (CurrentKey.Scope nested = CurrentKey.enter("audit:b", 0)) {
                assertEquals("audit:b", CurrentKey.get());
                assertEquals(1, CurrentKey.nextSendNumber());
                assertEquals(2, CurrentKey.nextSendNumber());
            }
            assertEquals("orders:a", CurrentKey.get());
            assertEquals(2, CurrentKey.nextSendNumber());
        }
        assertNull(CurrentKey.get());
    }

    @Test
    void aNewRunOfTheSameKeyCountsFromOneAgain() {
        try (CurrentKey.Scope first = CurrentKey.enter("orders:c", 0)) {
            CurrentKey.nextSendNumber();
            CurrentKey.nextSendNumber();
        }
        try (CurrentKey.Scope again = CurrentKey.enter("orders:c", 0)) {
            assertEquals(1, CurrentKey.nextSendNumber());
        }
    }

    @Test
    void outsideAHandlerThereIsNoNumber() {
        assertThrows(IllegalStateException.class, CurrentKey::nextSendNumber);
    }
}
