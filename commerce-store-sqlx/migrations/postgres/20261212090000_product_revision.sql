-- A product's catalogue revision (`Product::revision`): moved by every change of what an order
-- takes from the product (its fields, activity, its variants' prices, labels and supply prices,
-- its warranties), never by stock. An order's stock write compares it with the revision the
-- order was priced from (`NewOrder::priced_from`), so an order priced from a kept record is
-- never registered at a stale price, and concurrent orders of one product, which move its
-- `updated_at`, do not refuse each other.
ALTER TABLE products ADD COLUMN revision BIGINT NOT NULL DEFAULT 0;
