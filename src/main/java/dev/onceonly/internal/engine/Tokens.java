package dev.onceonly.internal.engine;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/** The claims' fencing tokens. */
final class Tokens {

    private static final int TOKEN_CHARS = 21;
    private static final byte[] TOKEN_ALPHABET =
            "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".getBytes(StandardCharsets.US_ASCII);

    private Tokens() {
    }

    /**
     * A fencing token: 21 base64url characters, 126 random bits. Tokens must be unique, not secret
     * (anyone who can forge one can write to Redis anyway), and never contain {@code '|'}. Built
     * straight from bytes: one per message, so it should cost one small string and nothing more.
     */
    static String next() {
        ThreadLocalRandom r = ThreadLocalRandom.current();
        byte[] token = new byte[TOKEN_CHARS];
        for (int i = 0; i < TOKEN_CHARS; i++) {
            token[i] = TOKEN_ALPHABET[r.nextInt(TOKEN_ALPHABET.length)];
        }
        return new String(token, StandardCharsets.ISO_8859_1);
    }
}
