package dev.onceonly.internal.engine;

import java.util.HexFormat;

/**
 * The key of one message for one consumer, and what a copy under the same key must match to be a
 * duplicate rather than a conflict.
 *
 * @param storeKey       the key used in the claim store and as the ledger's {@code msg_id}:
 *                       {@code <prefix><consumer>:<digest>}
 * @param digest         22-character base64url digest of the strategy key; non-reversible, safe to log
 * @param fingerprint    short form of {@code comparedSha256} stored with the claim to detect CONFLICT;
 *                       empty when bodies are not compared: for the content strategy, whose key
 *                       already is the body hash, and for {@code conflict=ignore}
 * @param comparedSha256 SHA-256 of what is compared (the body, or the consumer's conflict fields),
 *                       or {@code null} when nothing is (do not modify)
 */
public record MessageKey(String storeKey, String digest, String fingerprint, byte[] comparedSha256) {

    /**
     * {@return what is compared as 64 lower-case hex characters, the ledger's {@code body_sha256};
     * empty when nothing is compared}
     */
    public String comparedHashHex() {
        return comparedSha256 == null ? "" : HexFormat.of().formatHex(comparedSha256);
    }

    /**
     * Whether a copy stored with {@code storedFingerprint} is the same message. An empty fingerprint
     * on either side compares nothing: this key's bodies are not compared, or the stored one was
     * written without comparison ({@code conflict=ignore}, or a content key).
     *
     * @param storedFingerprint the fingerprint the claim store has for this key
     * @return {@code false} when the two differ: a CONFLICT
     */
    public boolean matches(String storedFingerprint) {
        return fingerprint.isEmpty() || storedFingerprint.isEmpty() || fingerprint.equals(storedFingerprint);
    }
}
