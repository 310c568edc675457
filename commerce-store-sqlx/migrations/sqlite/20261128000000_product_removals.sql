-- Product removals for sync (GET /api/v1/products/removed): when a product was stopped, NULL
-- while it is sold. Stopping a sold product records the instant; selling it again clears it.
-- The partial index holds the stopped products only, by removal time then id (newest first).

ALTER TABLE products ADD COLUMN removed_at BIGINT;
-- Products stopped before this migration: their last change is the closest known instant.
UPDATE products SET removed_at = updated_at WHERE NOT active;
CREATE INDEX products_removed_at ON products (removed_at, id) WHERE removed_at IS NOT NULL;
