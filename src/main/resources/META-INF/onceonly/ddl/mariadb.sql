-- OnceOnly ledger, MariaDB and MySQL (InnoDB). Apply to the database that holds the business data.
-- Every statement is idempotent; statements end with a semicolon and contain none.
-- msg_id compares case-sensitively (utf8mb4_bin): keys end in a base64url digest, where 'a' and 'A'
-- differ. A case-insensitive default collation would make two different messages one.
CREATE TABLE IF NOT EXISTS onceonly_processed_message (
    msg_id       VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    consumer     VARCHAR(100) NOT NULL,
    body_sha256  VARCHAR(64)  NOT NULL,
    processed_at DATETIME(6)  NOT NULL,
    PRIMARY KEY (msg_id),
    -- The purge deletes by time, oldest first.
    INDEX onceonly_processed_message_at (processed_at)
) ENGINE = InnoDB;
