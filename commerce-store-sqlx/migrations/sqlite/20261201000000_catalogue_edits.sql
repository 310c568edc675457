-- The catalogue after it is made: a product's supplier, a variant's supply price, the order
-- line's snapshot of both, and the history of stock adjustments (stock moves by deltas, each
-- kept with its cause). `quote_id` names a supplier's quote (no foreign key: quotes have a
-- migration of their own).
ALTER TABLE products ADD COLUMN supplier_id BIGINT REFERENCES accounts (id);
ALTER TABLE variants ADD COLUMN supply_price BIGINT NOT NULL DEFAULT 0;
ALTER TABLE order_lines ADD COLUMN supplier_id BIGINT;
ALTER TABLE order_lines ADD COLUMN supply_price BIGINT NOT NULL DEFAULT 0;
CREATE TABLE stock_adjustments (
    id               INTEGER PRIMARY KEY,
    variant_id       BIGINT NOT NULL REFERENCES variants (id),
    delta            BIGINT NOT NULL,
    reason           TEXT NOT NULL,
    note             TEXT,
    order_id         BIGINT REFERENCES orders (id),
    quote_id         BIGINT,
    available_after  BIGINT NOT NULL,
    at               BIGINT NOT NULL
);
CREATE INDEX stock_adjustments_variant ON stock_adjustments (variant_id, id DESC);
CREATE INDEX products_supplier ON products (supplier_id) WHERE supplier_id IS NOT NULL;
