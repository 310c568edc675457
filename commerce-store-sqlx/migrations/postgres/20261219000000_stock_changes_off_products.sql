-- An order's stock is taken without writing its product's row. The product's `updated_at` as
-- read is its feed row's `at` (`catalog_changes`, one row per product, every change of what
-- GET /products/{id} renders), which the one-statement checkout moves itself, with the
-- change's position, in the statement that takes the stock. Writing the product's row there
-- (a wide row, six indexes) cost more than the rest of the order; the feed row is narrow.
--
-- The product's revision is kept on its feed row too, so that the checkout compares what the
-- order was priced from on a row it locks: a catalogue edit that committed while the order
-- waited is seen (the conflict's update reads the row's latest version), and one that comes
-- later waits for the order (its trigger writes the same row).
ALTER TABLE catalog_changes ADD COLUMN revision BIGINT;
UPDATE catalog_changes c SET revision = p.revision FROM products p WHERE p.id = c.product_id;

-- `updated_since` reads the products whose feed row changed since: the product's own stamp
-- is no longer what is read, and its index would only slow every write of the row.
CREATE INDEX catalog_changes_at ON catalog_changes (at);
DROP INDEX products_updated_at;

-- A change's `at` only moves forward: when the product was stamped, to its new stamp or one
-- microsecond past the feed row's, whichever is later (the checkout may have moved the feed
-- row beyond the product's own stamp), as `updated_at` moves on every write of a product; a
-- stop or sale again that leaves the stamp keeps it.
CREATE OR REPLACE FUNCTION catalog_change() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    stamped BOOLEAN := TG_OP = 'INSERT' OR OLD.updated_at IS DISTINCT FROM NEW.updated_at;
BEGIN
    INSERT INTO catalog_changes (product_id, kind, at, txid, seq, revision)
    VALUES (
        NEW.id,
        CASE WHEN NOT NEW.active THEN 'removed' WHEN TG_OP = 'INSERT' THEN 'created' ELSE 'updated' END,
        NEW.updated_at,
        CAST(CAST(pg_current_xact_id() AS TEXT) AS BIGINT),
        nextval('catalog_change_seq'),
        NEW.revision
    )
    ON CONFLICT (product_id) DO UPDATE
    SET kind = EXCLUDED.kind,
        at = CASE
            WHEN stamped THEN GREATEST(EXCLUDED.at, catalog_changes.at + 1000)
            ELSE GREATEST(EXCLUDED.at, catalog_changes.at)
        END,
        txid = EXCLUDED.txid,
        seq = EXCLUDED.seq,
        revision = EXCLUDED.revision;
    RETURN NULL;
END
$$;

DROP TRIGGER products_catalog_changed ON products;
CREATE TRIGGER products_catalog_changed AFTER UPDATE OF updated_at, active, removed_at, revision
ON products
FOR EACH ROW
WHEN (OLD.updated_at IS DISTINCT FROM NEW.updated_at OR OLD.active IS DISTINCT FROM NEW.active
      OR OLD.revision IS DISTINCT FROM NEW.revision)
EXECUTE FUNCTION catalog_change();
