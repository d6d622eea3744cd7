package dev.onceonly.internal.engine;

import dev.onceonly.spi.ClaimState;
import dev.onceonly.spi.HolderResult;
import dev.onceonly.testing.LogCapture;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One held claim's answers ({@link EngineParts}, the lease clock moved by hand): when its lease falls
 * due, what a renewal, the check before a commit and the completion do when the claim is ours, lapsed
 * with nobody holding it, taken over, or the store is down; and that a lost lease is reported once.
 */
class HeldClaimTest {

    private final EngineParts parts = new EngineParts(null);
    private final LogCapture log = new LogCapture();
    private final MessageKey key = parts.key("m");
    private final long third = parts.settings.lease().toNanos() / 3;

    @AfterEach
    void stop() {
        log.close();
        parts.close();
    }

    @Test
    void theLeaseFallsDueAThirdOfItOnFromItsHoldAndFromEachRenewal() {
        parts.nanos.set(1_000);
        HeldClaim held = parts.held(key, "t1");
        assertEquals(1_000 + third, held.renewAtNanos());
        held.renew(5_000);
        assertEquals(5_000 + third, held.renewAtNanos());
        assertEquals(List.of("lease renewed"), parts.told);
        assertEquals("orders", held.consumer());
        assertEquals(key.digest(), held.keyDigest());
    }

    @Test
    void aRenewalThatFindsTheClaimTakenReportsTheLeaseLostOnceAndStopsRenewingIt() {
        HeldClaim held = parts.held(key, "t1");
        parts.takeOver(key, "thief");
        held.renew(0);
        assertTrue(held.lost());
        held.renew(0);
        held.answered("complete", HolderResult.NOT_HOLDER);
        assertEquals(List.of("lease lost"), parts.told);
        assertEquals(1, log.lines("ONCE0201W").size());
        assertFalse(log.contains("ONCE0103W"), "found out once, reported once");
        assertEquals(0, parts.engine.holders.leases().held(), "no longer renewed");
    }

    @Test
    void aRenewalTheStoreFailedIsReportedAndTheLeaseKept() {
        HeldClaim held = parts.held(key, "t1");
        parts.store.down = true;
        held.renew(0);
        assertEquals(List.of("store error extend"), parts.told);
        assertEquals(1, log.lines("ONCE0202W").size());
        assertFalse(held.lost());
        assertEquals(1, parts.engine.holders.leases().held(), "still renewed");
    }

    @Test
    void beforeTheCommitAClaimStillOursOrHeldByNobodyIsOurs() {
        HeldClaim held = parts.held(key, "t1");
        assertNull(held.confirmBeforeCommit());
        parts.memory.release(key.storeKey(), "t1"); // the store lost it
        assertNull(held.confirmBeforeCommit());
        assertEquals(1, log.lines("ONCE0105I").size());
        assertEquals(ClaimState.IN_PROGRESS, parts.state(key), "taken again");
        assertFalse(held.lost());
    }

    @Test
    void beforeTheCommitAClaimTakenOverRefusesItAndReportsTheLeaseLostOnce() {
        HeldClaim held = parts.held(key, "t1");
        parts.takeOver(key, "thief");
        assertEquals("the claim was taken over before commit", held.confirmBeforeCommit());
        assertEquals("the claim was taken over before commit", held.confirmBeforeCommit());
        assertTrue(held.lost());
        assertEquals(List.of("lease lost"), parts.told);
        assertEquals(2, log.lines("ONCE0104W").size(), "each refused commit is logged");
    }

    @Test
    void aRefusedCommitSaysHowLongTheClaimWasHeld() {
        HeldClaim held = parts.held(key, "t1", System.nanoTime() - TimeUnit.SECONDS.toNanos(5));
        parts.takeOver(key, "thief");
        held.confirmBeforeCommit();
        String line = log.lines("ONCE0104W").get(0);
        Matcher ms = Pattern.compile("after (\\d+) ms").matcher(line);
        assertTrue(ms.find(), line);
        long held5s = Long.parseLong(ms.group(1));
        assertTrue(held5s >= 5_000 && held5s < 600_000, line);
    }

    @Test
    void beforeTheCommitAStoreThatCannotConfirmRefusesIt() {
        HeldClaim held = parts.held(key, "t1");
        parts.store.down = true;
        assertEquals("the claim store could not confirm the claim before commit", held.confirmBeforeCommit());
        assertEquals(List.of("store error extend", "lease lost"), parts.told);
    }

    @Test
    void aClaimFoundNotOursIsReportedOnceAndAnAppliedAnswerNever() {
        HeldClaim held = parts.held(key, "t1");
        held.answered("release", HolderResult.APPLIED);
        assertEquals(List.of(), parts.told);
        held.answered("release", HolderResult.NOT_HOLDER);
        held.answered("complete", HolderResult.NOT_HOLDER);
        assertEquals(List.of("lease lost"), parts.told);
        assertEquals(1, log.lines("ONCE0103W").size());
    }

    @Test
    void aCompletionTakesAgainAKeyNobodyHoldsButNotOneTakenOver() {
        HeldClaim held = parts.held(key, "t1");
        parts.clock.advance(parts.settings.lease().plusSeconds(1)); // lapsed, nobody took it
        assertEquals(HolderResult.APPLIED, held.completeOrTakeAgain(false));
        assertEquals(ClaimState.DONE, parts.state(key));

        MessageKey other = parts.key("n");
        HeldClaim late = parts.held(other, "t2");
        parts.takeOver(other, "thief");
        assertEquals(HolderResult.NOT_HOLDER, late.completeOrTakeAgain(true));
        assertEquals(ClaimState.IN_PROGRESS, parts.state(other), "still the thief's");
    }

    @Test
    void aRetriedCompletionTakesTheKeyDoneWithItsFingerprintAsItsOwnMark() {
        MessageKey compared = new MessageKey("oo:orders:c", "dc", "fp-c", null); // a key whose bodies are compared
        HeldClaim held = parts.held(compared, "t1");
        parts.takeOver(compared, "thief");
        parts.memory.complete(compared.storeKey(), "thief", "fp-c", parts.settings.retention());
        assertEquals(HolderResult.NOT_HOLDER, held.completeOrTakeAgain(false), "not retried: a lost lease");
        assertEquals(HolderResult.APPLIED, held.completeOrTakeAgain(true), "retried: most likely its own landed mark");

        MessageKey other = new MessageKey("oo:orders:o", "do", "fp-o", null);
        HeldClaim late = parts.held(other, "t2");
        parts.clock.advance(parts.settings.lease().plusSeconds(1));
        parts.memory.claim(other.storeKey(), "thief", "fp-another-body", parts.settings.lease());
        parts.memory.complete(other.storeKey(), "thief", "fp-another-body", parts.settings.retention());
        assertEquals(HolderResult.NOT_HOLDER, late.completeOrTakeAgain(true), "done with another body is not its mark");
    }

    @Test
    void aReleaseGivesTheKeyBack() {
        HeldClaim held = parts.held(key, "t1");
        assertEquals(HolderResult.APPLIED, held.release());
        assertEquals(ClaimState.ACQUIRED, parts.state(key));
        assertEquals(key.storeKey(), held.completeRequest().key());
    }
}
