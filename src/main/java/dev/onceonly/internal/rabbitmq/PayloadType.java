package dev.onceonly.internal.rabbitmq;

import java.nio.charset.StandardCharsets;

/** What the payload of an incoming message is: the body as UTF-8 text, or the raw bytes. */
enum PayloadType {
    STRING {
        @Override
        Object of(byte[] body) {
            return new String(body, StandardCharsets.UTF_8);
        }
    },
    BYTES {
        @Override
        Object of(byte[] body) {
            return body;
        }
    };

    abstract Object of(byte[] body);
}
