package dev.onceonly.internal.rabbitmq;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The signer a channel's settings give ({@link CopySignature#of}), across a change of its key: retry
 * copies signed before a rolling restart that changed {@code copy-signing-key} (retries in flight,
 * copies in delay queues, quorum BUSY copies) are the connector's own and must still verify when the
 * old key is listed in {@code copy-signing-previous-keys}; new copies are signed with the current key.
 */
class CopySignatureTest {

    private static final byte[] BODY = "{\"order\":1}".getBytes(StandardCharsets.UTF_8);

    /** The signer of channel {@code orders} on queue {@code q}, with these channel properties. */
    private static CopySignature signer(String... keyValues) {
        Map<String, String> props = new HashMap<>(Map.of("channel-name", "orders", "queue.name", "q"));
        for (int i = 0; i < keyValues.length; i += 2) {
            props.put(keyValues[i], keyValues[i + 1]);
        }
        return CopySignature.of(TestChannelConfig.of(props, ChannelConfig.Direction.INCOMING).incoming());
    }

    private static String sign(CopySignature s) {
        return s.sign("q", 2, "orders", "order.placed", BODY);
    }

    private static boolean verifies(CopySignature s, String signature) {
        return s.verify(signature, "q", 2, "orders", "order.placed", BODY);
    }

    @Test
    void aCopySignedWithAPreviousKeyVerifiesWhenThatKeyIsListed() {
        String beforeRotation = sign(signer("copy-signing-key", "old-key"));
        CopySignature rotated = signer("copy-signing-key", "new-key", "copy-signing-previous-keys", "older-key, old-key");
        assertTrue(verifies(rotated, beforeRotation), "signed with a listed previous key");
        assertTrue(verifies(rotated, sign(signer("copy-signing-key", "older-key"))), "any listed key, not only the first");
        assertFalse(rotated.verify(beforeRotation, "q", 3, "orders", "order.placed", BODY),
                "a previous key still covers every field: a changed attempt count does not verify");
    }

    @Test
    void aCopySignedWithAnUnlistedKeyIsStillRefused() {
        String beforeRotation = sign(signer("copy-signing-key", "old-key"));
        assertFalse(verifies(signer("copy-signing-key", "new-key"), beforeRotation), "no previous keys");
        assertFalse(verifies(signer("copy-signing-key", "new-key", "copy-signing-previous-keys", "other-key"), beforeRotation),
                "the old key is not among them");
        assertFalse(verifies(signer("copy-signing-key", "new-key", "copy-signing-previous-keys", "old-key"), null), "no signature");
    }

    @Test
    void newCopiesAreSignedWithTheCurrentKey() {
        CopySignature rotated = signer("copy-signing-key", "new-key", "copy-signing-previous-keys", "old-key");
        assertEquals(sign(signer("copy-signing-key", "new-key")), sign(rotated));
        assertNotEquals(sign(signer("copy-signing-key", "old-key")), sign(rotated));
        assertFalse(verifies(signer("copy-signing-key", "old-key"), sign(rotated)),
                "an instance that does not list the new key refuses its copies: why a rotation adds it everywhere first");
    }

    /**
     * Without {@code copy-signing-key} the current key is the derived one; previous keys are explicit
     * keys (going back from an explicit key to the derived one). A derived key cannot be listed.
     */
    @Test
    void theDerivedKeySignsAndPreviousExplicitKeysVerify() {
        CopySignature derived = signer("copy-signing-previous-keys", "old-key");
        assertTrue(verifies(derived, sign(signer("copy-signing-key", "old-key"))));
        assertEquals(sign(signer()), sign(derived), "new copies: the key derived from the credentials");
        assertFalse(verifies(signer("copy-signing-key", "new-key"), sign(signer())), "a derived key is not accepted by an explicit one");
    }

    /** The step of a rolling rotation: instances still signing with the old key accept the new one before any signs with it. */
    @Test
    void anInstanceThatListsTheNextKeyAcceptsCopiesSignedWithIt() {
        CopySignature beforeSwitch = signer("copy-signing-key", "old-key", "copy-signing-previous-keys", "new-key");
        assertTrue(verifies(beforeSwitch, sign(signer("copy-signing-key", "new-key", "copy-signing-previous-keys", "old-key"))));
        assertEquals(sign(signer("copy-signing-key", "old-key")), sign(beforeSwitch));
    }
}
