-- POST /quotes linked to its idempotency record, as POST /orders is (docs/idempotency.md): the
-- quote a request registered, written in the quote's insert while the request's token holds the
-- record, so that a retry after the request died answers with that quote. A record linked to a
-- quote is never abandoned.
ALTER TABLE idempotency_records ADD COLUMN quote_id BIGINT;
