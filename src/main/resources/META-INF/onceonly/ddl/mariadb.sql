-- OnceOnly ledger, MariaDB and MySQL (InnoDB). Apply to the database that holds the business data.
-- Every statement is idempotent; statements end with a semicolon and contain none.
-- msg_id compares case-sensitively (utf8mb4_bin): keys end in a base64url digest, where 'a' and 'A'
-- differ. A case-insensitive default collation would make two different messages one.
CREATE TABLE IF NOT EXISTS onceonly_processed_message (
    msg_id       VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    consumer     VARCHAR(100) NOT NULL,
    body_sha256  VARCHAR(64)  NOT NULL,
    processed_at DATETIME(6)  NOT NULL,
    result_json  MEDIUMTEXT CHARACTER SET utf8mb4,
    result_until BIGINT,
    PRIMARY KEY (msg_id),
    -- The purge deletes by time, oldest first.
    INDEX onceonly_processed_message_at (processed_at)
) ENGINE = InnoDB;
-- Stored results (a consumer's result.keep): the result's JSON and until when it is given (epoch
-- milliseconds), null for a row without one. A table created by an earlier version gets them here
-- (MariaDB syntax: MySQL has no IF NOT EXISTS here; there, add them by hand once).
ALTER TABLE onceonly_processed_message ADD COLUMN IF NOT EXISTS result_json MEDIUMTEXT CHARACTER SET utf8mb4;
ALTER TABLE onceonly_processed_message ADD COLUMN IF NOT EXISTS result_until BIGINT;
-- The transactional outbox (only when the application injects dev.onceonly.api.Outbox).
-- state: 0 pending, 1 sent, 2 parked. Times are epoch milliseconds. SKIP LOCKED needs MariaDB 10.6+ (MySQL 8.0+).
CREATE TABLE IF NOT EXISTS onceonly_outbox (
    id             BIGINT       NOT NULL AUTO_INCREMENT,
    message_id     VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    source_key     VARCHAR(255) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    exchange_name  VARCHAR(255) NOT NULL,
    routing_key    VARCHAR(255) NOT NULL,
    content_type   VARCHAR(255),
    correlation_id VARCHAR(255),
    persistent     BOOLEAN      NOT NULL,
    headers        TEXT         NOT NULL,
    body           LONGBLOB     NOT NULL,
    state          SMALLINT     NOT NULL,
    created_at     BIGINT       NOT NULL,
    sent_at        BIGINT,
    attempts       INTEGER      NOT NULL,
    last_error     VARCHAR(500),
    app_scope      VARCHAR(64)  CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT '' NOT NULL,
    PRIMARY KEY (id),
    UNIQUE KEY onceonly_outbox_message_id (message_id),
    -- The relay takes pending rows in id order; the purge takes sent rows in id order.
    INDEX onceonly_outbox_state (state, id),
    -- The relay hands out a row only after the earlier pending rows of its source: looked up by source.
    INDEX onceonly_outbox_source (source_key, id)
) ENGINE = InnoDB;
-- app_scope: the key prefix of the application that wrote the row; '' for rows written before the
-- column was there (every application's relay takes those, as before). A table created by an
-- earlier version gets the column and the source index here (MariaDB syntax: MySQL has no IF NOT
-- EXISTS for either; there, add them by hand once).
ALTER TABLE onceonly_outbox ADD COLUMN IF NOT EXISTS app_scope VARCHAR(64) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin DEFAULT '' NOT NULL;
CREATE INDEX IF NOT EXISTS onceonly_outbox_source ON onceonly_outbox (source_key, id);
-- The claim store of the database-only mode (onceonly.store=database). state: 0 in progress, 1 done.
-- expires_at is epoch milliseconds; a released row holds minus its release time (expired for every clock). claim_key compares case-sensitively, like the ledger's msg_id.
CREATE TABLE IF NOT EXISTS onceonly_claim (
    claim_key   VARCHAR(200) CHARACTER SET utf8mb4 COLLATE utf8mb4_bin NOT NULL,
    token       VARCHAR(64)  NOT NULL,
    state       SMALLINT     NOT NULL,
    fingerprint VARCHAR(64)  NOT NULL,
    expires_at  BIGINT       NOT NULL,
    fence       BIGINT       DEFAULT 0 NOT NULL,
    PRIMARY KEY (claim_key),
    INDEX onceonly_claim_expires (expires_at)
) ENGINE = InnoDB;
-- fence: the last fencing token a claim of the key got (microseconds of the claiming instance's
-- clock, or one more than the previous); a release or expiry leaves the row until the purge, so the
-- next claim's fence grows from it. A table created by an earlier version gets the column here.
ALTER TABLE onceonly_claim ADD COLUMN IF NOT EXISTS fence BIGINT DEFAULT 0 NOT NULL;
