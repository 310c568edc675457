-- Category slugs, account emails and governorate names are unique (a set-up run twice must not
-- create a second `home` category, a second account with the same email, or 27 more
-- governorates). Rows repeated before this migration keep their first holder (the lowest id);
-- each later one gets its id appended (`home-7`, `a@example.com#12`, `القاهرة (31)`), so
-- nothing is deleted, the indexes can be built, and the repeats are easy to find and tidy.
UPDATE categories SET slug = slug || '-' || CAST(id AS TEXT)
WHERE EXISTS (SELECT 1 FROM categories first WHERE first.slug = categories.slug AND first.id < categories.id);
UPDATE accounts SET email = email || '#' || CAST(id AS TEXT)
WHERE EXISTS (SELECT 1 FROM accounts first WHERE first.email = accounts.email AND first.id < accounts.id);
UPDATE governorates SET name = name || ' (' || CAST(id AS TEXT) || ')'
WHERE EXISTS (SELECT 1 FROM governorates first WHERE first.name = governorates.name AND first.id < governorates.id);

CREATE UNIQUE INDEX categories_slug ON categories (slug);
CREATE UNIQUE INDEX accounts_email ON accounts (email);
CREATE UNIQUE INDEX governorates_name ON governorates (name);
