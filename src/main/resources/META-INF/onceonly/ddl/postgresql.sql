-- OnceOnly ledger, PostgreSQL. Apply to the database that holds the business data.
-- Every statement is idempotent; statements end with a semicolon and contain none.
CREATE TABLE IF NOT EXISTS onceonly_processed_message (
    msg_id       VARCHAR(200)                NOT NULL,
    consumer     VARCHAR(100)                NOT NULL,
    body_sha256  VARCHAR(64)                 NOT NULL,
    processed_at TIMESTAMP(6) WITH TIME ZONE NOT NULL,
    CONSTRAINT onceonly_processed_message_pk PRIMARY KEY (msg_id)
);
-- The purge deletes by time, oldest first.
CREATE INDEX IF NOT EXISTS onceonly_processed_message_at ON onceonly_processed_message (processed_at);
