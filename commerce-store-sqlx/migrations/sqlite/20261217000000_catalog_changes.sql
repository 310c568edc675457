-- The catalogue change feed (GET /api/v1/catalog/changes): one row per product, its latest
-- change, written by triggers on `products` in the writing statement itself, so that every
-- path that stamps a product (`updated_at`, on every change of what GET /products/{id}
-- renders), stops it or inserts it makes a change, present paths and future ones, without a
-- round trip of its own.
--
-- A row's position is (txid, seq) = (0, n): n is one more than the greatest taken, read by the
-- writer under SQLite's single writer lock, so positions are commit order and a reader, which
-- sees committed rows only, can never have a row appear behind one it returned.
CREATE TABLE catalog_changes (
    product_id  INTEGER PRIMARY KEY,
    kind        TEXT NOT NULL,
    at          BIGINT NOT NULL,
    txid        BIGINT NOT NULL,
    seq         BIGINT NOT NULL
);
CREATE INDEX catalog_changes_position ON catalog_changes (txid, seq);

-- The products as they are now, oldest change first, so that a reader starting from the
-- feed's beginning finds every product.
INSERT INTO catalog_changes (product_id, kind, at, txid, seq)
SELECT id, CASE WHEN active THEN 'updated' ELSE 'removed' END, updated_at, 0,
       ROW_NUMBER() OVER (ORDER BY updated_at, id)
FROM products;

CREATE TRIGGER products_catalog_created AFTER INSERT ON products
FOR EACH ROW
BEGIN
    INSERT INTO catalog_changes (product_id, kind, at, txid, seq)
    VALUES (
        NEW.id,
        CASE WHEN NOT NEW.active THEN 'removed' ELSE 'created' END,
        NEW.updated_at,
        0,
        COALESCE((SELECT seq FROM catalog_changes ORDER BY txid DESC, seq DESC LIMIT 1), 0) + 1
    )
    ON CONFLICT (product_id) DO UPDATE
    SET kind = excluded.kind, at = excluded.at, txid = excluded.txid, seq = excluded.seq;
END;

CREATE TRIGGER products_catalog_changed AFTER UPDATE OF updated_at, active, removed_at ON products
FOR EACH ROW
WHEN OLD.updated_at IS NOT NEW.updated_at OR OLD.active IS NOT NEW.active
BEGIN
    INSERT INTO catalog_changes (product_id, kind, at, txid, seq)
    VALUES (
        NEW.id,
        CASE WHEN NOT NEW.active THEN 'removed' ELSE 'updated' END,
        NEW.updated_at,
        0,
        COALESCE((SELECT seq FROM catalog_changes ORDER BY txid DESC, seq DESC LIMIT 1), 0) + 1
    )
    ON CONFLICT (product_id) DO UPDATE
    SET kind = excluded.kind, at = excluded.at, txid = excluded.txid, seq = excluded.seq;
END;
