-- The wallet in bounded work: each order row keeps the earnings it contributes now (net of
-- commission, and the commission, in piastres; `commerce_core::earnings::OrderEarnings`), and
-- `account_order_counts` keeps their sums per account and family, both written in the same
-- transaction as every write that changes them (placing, status moves, line outcomes). A
-- wallet read then sums a handful of family rows plus the orders delivered within the hold
-- period (`orders_delivered`), never every order of the account.
--
-- NULL marks an order stored before this migration: `migrate()` books it from the order
-- itself with the one earnings rule in `commerce-core` right after the migrations run.
ALTER TABLE orders ADD COLUMN earnings_net BIGINT;
ALTER TABLE orders ADD COLUMN earnings_commission BIGINT;
ALTER TABLE account_order_counts ADD COLUMN net BIGINT NOT NULL DEFAULT 0;
ALTER TABLE account_order_counts ADD COLUMN commission BIGINT NOT NULL DEFAULT 0;

CREATE INDEX orders_delivered ON orders (account_id, delivered_at) WHERE delivered_at IS NOT NULL;
