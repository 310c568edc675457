-- Product slugs are unique among products, as category slugs are. Products repeating a slug
-- before this migration keep it for their first holder (the lowest id); each later one gets
-- its id appended (`kettle-7`), as `unique_names` did for categories, so nothing is deleted,
-- the index can be built, and the repeats are easy to find and tidy. (Their `updated_at` is
-- left as it was: a marketer's sync by `updated_since` does not see the new slug until the
-- product's next change.)
UPDATE products SET slug = slug || '-' || CAST(id AS TEXT)
WHERE EXISTS (SELECT 1 FROM products first WHERE first.slug = products.slug AND first.id < products.id);

CREATE UNIQUE INDEX products_slug ON products (slug);
