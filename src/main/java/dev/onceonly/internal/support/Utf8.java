package dev.onceonly.internal.support;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;

/** Strict UTF-8: bytes become text only when they are valid UTF-8, never with replacement characters. */
public final class Utf8 {

    private Utf8() {
    }

    /**
     * Decodes strictly.
     *
     * @param bytes what to decode
     * @return the text, or {@code null} when {@code bytes} are not valid UTF-8
     */
    public static String strict(byte[] bytes) {
        try {
            return StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(bytes)).toString();
        } catch (CharacterCodingException e) {
            return null;
        }
    }
}
