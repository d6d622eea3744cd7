package dev.onceonly.internal.engine;

import java.nio.charset.StandardCharsets;
import java.security.DigestException;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * Per-thread digest and buffers for {@link KeyDeriver}: deriving a key allocates only what it
 * returns (body hash, digest text, store key), which matters at one derivation per message. The
 * value holds JDK types only (an {@code Object[]}): the server's pooled threads outlive a
 * redeployment, and a value of one of the application's classes would keep its class loader, and
 * every class it loaded, alive on each of them.
 */
final class DigestScratch {

    /** Bytes of SHA-256 kept in the store key: 128 bits, collision-safe for any realistic volume. */
    private static final int DIGEST_BYTES = 16;
    private static final int DIGEST = 0;
    private static final int HEX_BUF = 1;
    private static final int SHA_BUF = 2;
    private static final int HEAD_BUF = 3;
    private static final int BASE64_BUF = 4;
    private static final byte[] HEX = "0123456789abcdef".getBytes(StandardCharsets.US_ASCII);
    private static final Base64.Encoder B64 = Base64.getUrlEncoder().withoutPadding();
    private static final ThreadLocal<Object[]> SCRATCH = ThreadLocal.withInitial(DigestScratch::create);

    private DigestScratch() {
    }

    /** {@return this thread's scratch} */
    static Object[] get() {
        return SCRATCH.get();
    }

    /** {@return the scratch's SHA-256 digest, to be reset before use} */
    static MessageDigest digest(Object[] scratch) {
        return (MessageDigest) scratch[DIGEST];
    }

    private static Object[] create() {
        return new Object[] {newSha256(), new byte[64], new byte[32], new byte[DIGEST_BYTES], new byte[22]};
    }

    /** {@code sha256} as 64 lower-case hex digits, in a buffer reused by the next call. */
    static byte[] hex(Object[] scratch, byte[] sha256) {
        byte[] hex = (byte[]) scratch[HEX_BUF];
        for (int i = 0; i < 32; i++) {
            hex[2 * i] = HEX[(sha256[i] >> 4) & 0xf];
            hex[2 * i + 1] = HEX[sha256[i] & 0xf];
        }
        return hex;
    }

    /** Completes {@code md} and returns its first 16 bytes in base64url: 22 characters. */
    static String base64Digest(Object[] scratch, MessageDigest md) {
        byte[] sha = (byte[]) scratch[SHA_BUF];
        byte[] head = (byte[]) scratch[HEAD_BUF];
        byte[] base64 = (byte[]) scratch[BASE64_BUF];
        try {
            md.digest(sha, 0, sha.length);
        } catch (DigestException e) {
            throw new IllegalStateException("SHA-256 digest does not fit 32 bytes", e);
        }
        System.arraycopy(sha, 0, head, 0, DIGEST_BYTES);
        B64.encode(head, base64);
        return new String(base64, StandardCharsets.ISO_8859_1);
    }

    private static MessageDigest newSha256() {
        try {
            return MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("SHA-256 is required by every Java platform", e);
        }
    }
}
