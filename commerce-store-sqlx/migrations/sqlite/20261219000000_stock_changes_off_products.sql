-- A product's `updated_at` is read from its row in the catalogue change feed
-- (`catalog_changes.at`, which the triggers keep equal to the product's stamp here; on
-- PostgreSQL an order's stock moves it without writing the product's row), and
-- `updated_since` reads the products whose feed row changed since.
CREATE INDEX catalog_changes_at ON catalog_changes (at);
DROP INDEX products_updated_at;
