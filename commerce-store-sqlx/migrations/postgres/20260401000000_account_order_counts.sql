-- Per-account order counters by family, kept in step with `orders` by `place_order` and
-- `change_order_status` in the same transaction, so that the unfiltered and `family=` order
-- lists answer `total` without counting every order of the account.
CREATE TABLE account_order_counts (
    account_id  BIGINT NOT NULL,
    family      TEXT NOT NULL,
    count       BIGINT NOT NULL,
    PRIMARY KEY (account_id, family)
);

-- Backfill from the orders already stored.
INSERT INTO account_order_counts (account_id, family, count)
SELECT account_id, family, COUNT(*) FROM orders GROUP BY account_id, family;

-- Pages of a family (or status) newest first straight from an index, without sorting the
-- family's rows: the old (account_id, family) / (account_id, status) indexes are prefixes of
-- these.
CREATE INDEX orders_family_newest ON orders (account_id, family, created_at DESC, id DESC);
DROP INDEX orders_family;
CREATE INDEX orders_status_newest ON orders (account_id, status, created_at DESC, id DESC);
DROP INDEX orders_status;
