-- The suppliers' money (the statement, the supplier wallet): one row of kept totals per
-- supplier (`commerce_core::model::SupplierTotals`: expected, settled, the balance and the
-- number of entries), and the statement's entries, both written in the same transaction as
-- the write that causes them (an order placed or moved, line outcomes recorded, a withdrawal
-- registered or rejected). A statement page reads `statement_entries_supplier` from its end
-- and its total from the totals row; the wallet's held sum reads the entries delivered within
-- the hold period (`statement_entries_held`), never the whole statement. Money in piastres,
-- instants in nanoseconds, as everywhere.
--
-- `supplier_id` has no foreign key on purpose: a withdrawal locks its account's row (`FOR
-- UPDATE`) and then the supplier's totals row, while an order move locks the totals row and
-- then writes entries; a key check on `accounts` from the move would wait for the
-- withdrawal's lock while the withdrawal waits for the totals row (a deadlock). The supplier
-- ids come from the accounts an order line's snapshot or a withdrawal names.
CREATE TABLE supplier_totals (
    supplier_id  BIGINT PRIMARY KEY,
    expected     BIGINT NOT NULL DEFAULT 0,
    settled      BIGINT NOT NULL DEFAULT 0,
    balance      BIGINT NOT NULL DEFAULT 0,
    entries      BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE statement_entries (
    id             INTEGER PRIMARY KEY,
    supplier_id    BIGINT NOT NULL,
    kind           TEXT NOT NULL,
    order_id       BIGINT REFERENCES orders (id),
    order_number   TEXT,
    variant_id     BIGINT,
    quantity       BIGINT,
    unit_price     BIGINT,
    amount         BIGINT NOT NULL,
    direction      TEXT NOT NULL,
    balance        BIGINT NOT NULL,
    delivered_at   BIGINT,
    withdrawal_id  BIGINT REFERENCES withdrawals (id),
    at             BIGINT NOT NULL
);
CREATE INDEX statement_entries_supplier ON statement_entries (supplier_id, id);
CREATE INDEX statement_entries_at ON statement_entries (supplier_id, at, id);
CREATE INDEX statement_entries_held ON statement_entries (supplier_id, delivered_at)
    WHERE delivered_at IS NOT NULL;
