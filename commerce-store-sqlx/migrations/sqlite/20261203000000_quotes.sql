-- Suppliers' quotes (docs/suppliers.md). Money in piastres, instants in nanoseconds (UTC).
-- A quote is stored 'pending' until it is accepted, rejected or withdrawn; a pending quote past
-- valid_until reads as 'expired' (and is written so when a new quote of its variant comes).
CREATE TABLE quotes (
    id             INTEGER PRIMARY KEY,
    account_id     BIGINT NOT NULL REFERENCES accounts (id),
    variant_id     BIGINT NOT NULL REFERENCES variants (id),
    unit_price     BIGINT NOT NULL,
    quantity       BIGINT NOT NULL,
    status         TEXT NOT NULL,
    valid_until    BIGINT,
    note           TEXT,
    decision_note  TEXT,
    decided_at     BIGINT,
    created_at     BIGINT NOT NULL,
    updated_at     BIGINT NOT NULL
);
-- One pending quote per variant, whatever the timing of concurrent inserts.
CREATE UNIQUE INDEX quotes_one_pending ON quotes (variant_id) WHERE status = 'pending';
-- A supplier's list, newest first.
CREATE INDEX quotes_account ON quotes (account_id, id);
-- The platform's list: pending first, oldest first.
CREATE INDEX quotes_pending ON quotes (id) WHERE status = 'pending';
