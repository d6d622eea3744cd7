package dev.onceonly.internal.ledger.jpa;

import jakarta.persistence.Column;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Table;

import java.time.Instant;

/**
 * One row of the ledger: this message key was processed by a committed transaction. The primary
 * key {@code msg_id} is what makes the ledger authoritative: the database refuses a second row for
 * the same key, whatever the claim store remembers. The DDL users apply lives in
 * {@code META-INF/onceonly/ddl/}. The table's name here is the default: {@code LedgerSessions} maps
 * it to {@code onceonly.ledger.table}.
 */
@Entity
@Table(name = "onceonly_processed_message")
public class ProcessedMessage {

    /** Longest key: a 32-character prefix, a 100-character consumer, ':' and a 22-character digest. */
    static final int MAX_KEY_LENGTH = 200;

    @Id
    @Column(name = "msg_id", length = MAX_KEY_LENGTH, nullable = false, updatable = false)
    private String msgId;

    @Column(name = "consumer", length = 100, nullable = false, updatable = false)
    private String consumer;

    @Column(name = "body_sha256", length = 64, nullable = false, updatable = false)
    private String bodySha256;

    @Column(name = "processed_at", nullable = false, updatable = false)
    private Instant processedAt;

    /** For JPA, which reads rows through it. */
    protected ProcessedMessage() {
        // for JPA
    }

    /**
     * A new row.
     *
     * @param msgId       the full scoped key ({@code <prefix><consumer>:<digest>})
     * @param consumer    the consumer name
     * @param bodySha256  SHA-256 of what the consumer compares (the body, or its conflict fields), 64
     *                    lower-case hex characters; empty when it compares nothing ({@code conflict=ignore})
     * @param processedAt when the row was written; the purge deletes by this time
     */
    public ProcessedMessage(String msgId, String consumer, String bodySha256, Instant processedAt) {
        this.msgId = msgId;
        this.consumer = consumer;
        this.bodySha256 = bodySha256;
        this.processedAt = processedAt;
    }

    /** {@return the full scoped key} */
    public String msgId() {
        return msgId;
    }

    /** {@return the consumer name} */
    public String consumer() {
        return consumer;
    }

    /** {@return the SHA-256 of the body or of the consumer's conflict fields, hex; empty when not compared} */
    public String bodySha256() {
        return bodySha256;
    }

    /** {@return when the row was written} */
    public Instant processedAt() {
        return processedAt;
    }
}
