package dev.onceonly.demo.inventory;

import dev.onceonly.api.GuardEvent;
import dev.onceonly.api.Layer;
import dev.onceonly.api.Outcome;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;

class RecentDecisionsTest {

    private static GuardEvent event(Outcome outcome) {
        return new GuardEvent("inventory", outcome, Layer.NONE, "digest", "", 1_000);
    }

    private static List<Long> seqs(List<RecentDecisions.Decision> decisions) {
        return decisions.stream().map(RecentDecisions.Decision::seq).toList();
    }

    @Test
    void decisionsAreNumberedAndReadAfterANumber() {
        RecentDecisions recent = new RecentDecisions(10);
        for (int i = 0; i < 4; i++) {
            recent.add(i, event(Outcome.PROCESSED), 1);
        }
        assertEquals(List.of(1L, 2L, 3L, 4L), seqs(recent.after(0)));
        assertEquals(List.of(3L, 4L), seqs(recent.after(2)));
        assertEquals(List.of(), recent.after(4));
    }

    @Test
    void onlyTheLastCapacityAreKept() {
        RecentDecisions recent = new RecentDecisions(3);
        for (int i = 0; i < 8; i++) {
            recent.add(i, event(Outcome.DUPLICATE), 1);
        }
        assertEquals(List.of(6L, 7L, 8L), seqs(recent.after(0)), "overwritten, oldest first");
        assertEquals(List.of(6L, 7L, 8L), seqs(recent.after(2)), "a reader that fell behind gets what is left");
        assertEquals(List.of(8L), seqs(recent.after(7)));
    }

    @Test
    void aDecisionCarriesTheEventAndItsAttempt() {
        RecentDecisions recent = new RecentDecisions(2);
        RecentDecisions.Decision d = recent.add(42, new GuardEvent("inventory", Outcome.FAILED, Layer.NONE, "abc",
                "handler failed or transaction rolled back", 5), 3);
        assertEquals(new RecentDecisions.Decision(1, 42, "inventory", Outcome.FAILED, Layer.NONE, "abc",
                "handler failed or transaction rolled back", 3), d);
        assertEquals(3, d.toJson().getInt("attempt"));
        assertEquals("FAILED", d.toJson().getString("outcome"));
    }

    @Test
    void anUnknownAttemptIsLeftOut() {
        RecentDecisions.Decision d = new RecentDecisions(1).add(1, event(Outcome.REJECTED), 0);
        assertFalse(d.toJson().containsKey("attempt"));
    }

    @Test
    void capacityMustBePositive() {
        assertThrows(IllegalArgumentException.class, () -> new RecentDecisions(0));
    }
}
