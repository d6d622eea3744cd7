package dev.onceonly.engine;

import java.util.HexFormat;

/**
 * The key of one message for one consumer.
 *
 * @param storeKey    the key used in the claim store and as the ledger's {@code msg_id}:
 *                    {@code <prefix><consumer>:<digest>}
 * @param digest      22-character base64url digest of the strategy key; non-reversible, safe to log
 * @param fingerprint short body fingerprint stored with the claim to detect CONFLICT; empty for the
 *                    content strategy, whose key already is the body hash
 * @param bodySha256  SHA-256 of the body (do not modify)
 */
public record MessageKey(String storeKey, String digest, String fingerprint, byte[] bodySha256) {

    /** {@return the body hash as 64 lower-case hex characters (the ledger's {@code body_sha256})} */
    public String bodyHashHex() {
        return HexFormat.of().formatHex(bodySha256);
    }
}
