package dev.onceonly.internal.rabbitmq;

import dev.onceonly.api.InvalidConfigurationException;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The signer a channel's settings give ({@link CopySignature#of}), across a change of its key: retry
 * copies signed before a rolling restart that changed {@code copy-signing-key} (retries in flight,
 * copies in delay queues, quorum BUSY copies) are the connector's own and must still verify when the
 * old key is listed in {@code copy-signing-previous-keys}; new copies are signed with the current key.
 */
class CopySignatureTest {

    private static final byte[] BODY = "{\"order\":1}".getBytes(StandardCharsets.UTF_8);
    // Keys of the minimum strength, 32 bytes, as openssl rand -base64 32 gives longer ones.
    private static final String OLD = "old-signing-key-0123456789abcdef";
    private static final String NEW = "new-signing-key-0123456789abcdef";
    private static final String OLDER = "older-signing-key-0123456789abcd";
    private static final String OTHER = "other-signing-key-0123456789abcd";

    /** The signer of channel {@code orders} on queue {@code q}, with these channel properties. */
    private static CopySignature signer(String... keyValues) {
        Map<String, String> props = new HashMap<>(Map.of("channel-name", "orders", "queue.name", "q"));
        for (int i = 0; i < keyValues.length; i += 2) {
            props.put(keyValues[i], keyValues[i + 1]);
        }
        return CopySignature.of(TestChannelConfig.withoutSigningKey(props).incoming());
    }

    private static String sign(CopySignature s) {
        return s.sign("q", 2, "orders", "order.placed", BODY);
    }

    private static boolean verifies(CopySignature s, String signature) {
        return s.verify(signature, "q", 2, "orders", "order.placed", BODY);
    }

    @Test
    void aCopySignedWithAPreviousKeyVerifiesWhenThatKeyIsListed() {
        String beforeRotation = sign(signer("copy-signing-key", OLD));
        CopySignature rotated = signer("copy-signing-key", NEW, "copy-signing-previous-keys", OLDER + ", " + OLD);
        assertTrue(verifies(rotated, beforeRotation), "signed with a listed previous key");
        assertTrue(verifies(rotated, sign(signer("copy-signing-key", OLDER))), "any listed key, not only the first");
        assertFalse(rotated.verify(beforeRotation, "q", 3, "orders", "order.placed", BODY),
                "a previous key still covers every field: a changed attempt count does not verify");
    }

    @Test
    void aCopySignedWithAnUnlistedKeyIsStillRefused() {
        String beforeRotation = sign(signer("copy-signing-key", OLD));
        assertFalse(verifies(signer("copy-signing-key", NEW), beforeRotation), "no previous keys");
        assertFalse(verifies(signer("copy-signing-key", NEW, "copy-signing-previous-keys", OTHER), beforeRotation),
                "the old key is not among them");
        assertFalse(verifies(signer("copy-signing-key", NEW, "copy-signing-previous-keys", OLD), null), "no signature");
    }

    @Test
    void newCopiesAreSignedWithTheCurrentKey() {
        CopySignature rotated = signer("copy-signing-key", NEW, "copy-signing-previous-keys", OLD);
        assertEquals(sign(signer("copy-signing-key", NEW)), sign(rotated));
        assertNotEquals(sign(signer("copy-signing-key", OLD)), sign(rotated));
        assertFalse(verifies(signer("copy-signing-key", OLD), sign(rotated)),
                "an instance that does not list the new key refuses its copies: why a rotation adds it everywhere first");
    }

    /**
     * Issue 46, hole 7: the key is the configured one, never one derived from the broker credentials
     * (an unsalted hash of the password, testable offline from any signed copy). A channel without a
     * key has no signer, and a password change leaves every copy's signature as it was.
     */
    @Test
    void noKeyIsDerivedFromTheBrokerPassword() {
        var e = assertThrows(InvalidConfigurationException.class, () -> signer("copy-signing-previous-keys", OLD));
        assertEquals("mp.messaging.incoming.orders.copy-signing-key", e.property());
        assertEquals(sign(signer("copy-signing-key", NEW, "password", "before-the-change")),
                sign(signer("copy-signing-key", NEW, "password", "after-the-change")),
                "a changed password leaves the copies in flight valid");
    }

    /** The step of a rolling rotation: instances still signing with the old key accept the new one before any signs with it. */
    @Test
    void anInstanceThatListsTheNextKeyAcceptsCopiesSignedWithIt() {
        CopySignature beforeSwitch = signer("copy-signing-key", OLD, "copy-signing-previous-keys", NEW);
        assertTrue(verifies(beforeSwitch, sign(signer("copy-signing-key", NEW, "copy-signing-previous-keys", OLD))));
        assertEquals(sign(signer("copy-signing-key", OLD)), sign(beforeSwitch));
    }
}
