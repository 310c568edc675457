-- The catalogue change feed (GET /api/v1/catalog/changes): one row per product, its latest
-- change, written by triggers on `products` in the writing transaction itself, so that every
-- path that stamps a product (`updated_at`, on every change of what GET /products/{id}
-- renders), stops it or inserts it makes a change, present paths and future ones, without a
-- round trip of its own.
--
-- A row's position is (txid, seq): the id of the transaction that wrote it and a number of
-- `catalog_change_seq`. A reader returns only rows whose txid is below the xmin of its own
-- snapshot (every transaction below it has ended), in (txid, seq) order, so no row can later
-- appear at or before a position it returned: a transaction still running has a txid at or
-- above that xmin, and every transaction that starts later a greater one.
CREATE SEQUENCE catalog_change_seq;

CREATE TABLE catalog_changes (
    product_id  BIGINT PRIMARY KEY,
    kind        TEXT NOT NULL,
    at          BIGINT NOT NULL,
    txid        BIGINT NOT NULL,
    seq         BIGINT NOT NULL
);
CREATE INDEX catalog_changes_position ON catalog_changes (txid, seq);

-- The products as they are now, oldest change first, so that a reader starting from the
-- feed's beginning finds every product.
INSERT INTO catalog_changes (product_id, kind, at, txid, seq)
SELECT id, kind, updated_at, CAST(CAST(pg_current_xact_id() AS TEXT) AS BIGINT),
       nextval('catalog_change_seq')
FROM (
    SELECT id, updated_at, CASE WHEN active THEN 'updated' ELSE 'removed' END AS kind
    FROM products ORDER BY updated_at, id
) AS existing;

-- The trigger's function resolves its tables in the store's schema, whoever writes.
CREATE FUNCTION catalog_change() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    INSERT INTO catalog_changes (product_id, kind, at, txid, seq)
    VALUES (
        NEW.id,
        CASE WHEN NOT NEW.active THEN 'removed' WHEN TG_OP = 'INSERT' THEN 'created' ELSE 'updated' END,
        NEW.updated_at,
        CAST(CAST(pg_current_xact_id() AS TEXT) AS BIGINT),
        nextval('catalog_change_seq')
    )
    ON CONFLICT (product_id) DO UPDATE
    SET kind = EXCLUDED.kind, at = EXCLUDED.at, txid = EXCLUDED.txid, seq = EXCLUDED.seq;
    RETURN NULL;
END
$$;

CREATE TRIGGER products_catalog_created AFTER INSERT ON products
FOR EACH ROW EXECUTE FUNCTION catalog_change();

CREATE TRIGGER products_catalog_changed AFTER UPDATE OF updated_at, active, removed_at ON products
FOR EACH ROW
WHEN (OLD.updated_at IS DISTINCT FROM NEW.updated_at OR OLD.active IS DISTINCT FROM NEW.active)
EXECUTE FUNCTION catalog_change();
