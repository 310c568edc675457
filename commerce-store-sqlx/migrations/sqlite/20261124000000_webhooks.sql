-- Webhook endpoints and the outbox of their deliveries. A delivery row is written in the same
-- transaction as the order change it tells of (placing, status moves); the dispatcher claims
-- due ones with a lease (`lease_owner`, `lease_until`) and records each attempt.
-- Instants are nanoseconds since the Unix epoch, UTC (BIGINT), like every other table.

CREATE TABLE webhook_endpoints (
    id                     INTEGER PRIMARY KEY,
    account_id             BIGINT NOT NULL REFERENCES accounts (id),
    url                    TEXT NOT NULL,
    -- The event types received, comma-joined (`order.created,order.status_changed`).
    events                 TEXT NOT NULL,
    description            TEXT,
    enabled                BOOLEAN NOT NULL,
    disabled_reason        TEXT,
    secret                 TEXT NOT NULL,
    previous_secret        TEXT,
    previous_secret_until  BIGINT,
    failing_since          BIGINT,
    created_at             BIGINT NOT NULL,
    updated_at             BIGINT NOT NULL
);
-- An account's endpoints (listing, the per-account limit, the outbox's subscribers).
CREATE INDEX webhook_endpoints_account ON webhook_endpoints (account_id, id);

CREATE TABLE webhook_deliveries (
    id                INTEGER PRIMARY KEY,
    -- No foreign key: every order change of an account with an endpoint inserts here, and
    -- on PostgreSQL a foreign key check share-locks the endpoint's row, so that concurrent
    -- orders of one account queue on that one row. Deleting an endpoint deletes its
    -- deliveries in the same transaction; a delivery left by a change that raced the delete
    -- is never claimed (the claim joins the endpoint) and is purged.
    endpoint_id       BIGINT NOT NULL,
    account_id        BIGINT NOT NULL,
    event_id          TEXT NOT NULL,
    event_type        TEXT NOT NULL,
    order_id          BIGINT,
    payload           TEXT NOT NULL,
    status            TEXT NOT NULL,
    attempts          BIGINT NOT NULL,
    next_attempt_at   BIGINT,
    last_attempt_at   BIGINT,
    last_status_code  INTEGER,
    last_error        TEXT,
    lease_owner       TEXT,
    lease_until       BIGINT,
    created_at        BIGINT NOT NULL
);
-- An endpoint's deliveries, newest first (the delivery log).
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, id DESC);
-- The pending deliveries: the dispatcher's claim reads them all (the backlog, small while
-- receivers answer) and an earlier pending delivery of the same order to the same endpoint
-- (per-order ordering). One index for both: each delivery an order change writes costs one
-- index entry fewer.
CREATE INDEX webhook_deliveries_order ON webhook_deliveries (endpoint_id, order_id, id)
    WHERE status = 'pending';
-- Purging old history.
CREATE INDEX webhook_deliveries_created ON webhook_deliveries (created_at);
