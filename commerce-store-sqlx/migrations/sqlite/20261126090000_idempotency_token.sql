-- Fenced idempotency: the token of the request that holds the record, written when a request
-- starts the record or takes it over. Placing the order (the link), keeping the response and
-- abandoning the record take effect only under this token, so a request that outlived the
-- stale time and lost the record to a retry writes nothing. Records begun before this
-- migration are held by no running request (0).
ALTER TABLE idempotency_records ADD COLUMN holder_token BIGINT NOT NULL DEFAULT 0;
