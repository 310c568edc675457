-- The commerce store schema. Money is integer piastres (BIGINT), percents are hundredths of a
-- percent (BIGINT), instants are nanoseconds since the Unix epoch, UTC (BIGINT).

CREATE TABLE accounts (
    id          INTEGER PRIMARY KEY,
    name        TEXT NOT NULL,
    store_name  TEXT,
    email       TEXT NOT NULL,
    phone       TEXT NOT NULL,
    side        TEXT NOT NULL,
    state       TEXT NOT NULL,
    api_status  TEXT NOT NULL,
    created_at  BIGINT NOT NULL
);

CREATE TABLE api_keys (
    id          INTEGER PRIMARY KEY,
    account_id  BIGINT NOT NULL REFERENCES accounts (id),
    name        TEXT NOT NULL,
    hash        BLOB NOT NULL UNIQUE,
    abilities   TEXT NOT NULL,
    expires_at  BIGINT,
    revoked_at  BIGINT,
    rate_limit  BIGINT NOT NULL,
    created_at  BIGINT NOT NULL
);
CREATE INDEX api_keys_account ON api_keys (account_id);

CREATE TABLE rate_limit_windows (
    key_id         BIGINT NOT NULL,
    window_minute  BIGINT NOT NULL,
    used           BIGINT NOT NULL,
    PRIMARY KEY (key_id, window_minute)
);

CREATE TABLE categories (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    slug       TEXT NOT NULL,
    parent_id  BIGINT REFERENCES categories (id),
    active     BOOLEAN NOT NULL
);

CREATE TABLE products (
    id                   INTEGER PRIMARY KEY,
    title                TEXT NOT NULL,
    title_lower          TEXT NOT NULL,
    slug                 TEXT NOT NULL,
    category_id          BIGINT NOT NULL REFERENCES categories (id),
    description          TEXT NOT NULL,
    images               TEXT NOT NULL,
    files                TEXT NOT NULL,
    video_url            TEXT,
    marketing_files_url  TEXT,
    url                  TEXT NOT NULL,
    active               BOOLEAN NOT NULL,
    updated_at           BIGINT NOT NULL
);
CREATE INDEX products_updated_at ON products (updated_at);
CREATE INDEX products_category ON products (category_id);

CREATE TABLE variants (
    id             INTEGER PRIMARY KEY,
    product_id     BIGINT NOT NULL REFERENCES products (id),
    label          TEXT NOT NULL,
    price          BIGINT NOT NULL,
    suggested_min  BIGINT NOT NULL,
    suggested_max  BIGINT NOT NULL,
    available      BIGINT NOT NULL
);
CREATE INDEX variants_product ON variants (product_id);

CREATE TABLE warranties (
    id             INTEGER PRIMARY KEY,
    product_id     BIGINT NOT NULL REFERENCES products (id),
    name           TEXT NOT NULL,
    admin_fee      BIGINT NOT NULL,
    percent        BIGINT NOT NULL,
    price_from     BIGINT NOT NULL,
    duration_days  INTEGER NOT NULL,
    terms          TEXT NOT NULL,
    icon_url       TEXT,
    active         BOOLEAN NOT NULL
);
CREATE INDEX warranties_product ON warranties (product_id);

CREATE TABLE governorates (
    id    INTEGER PRIMARY KEY,
    name  TEXT NOT NULL
);

CREATE TABLE shipping_options (
    id      INTEGER PRIMARY KEY,
    name    TEXT NOT NULL,
    active  BOOLEAN NOT NULL
);

CREATE TABLE shipping_rates (
    option_id              BIGINT NOT NULL REFERENCES shipping_options (id),
    governorate_id         BIGINT NOT NULL REFERENCES governorates (id),
    delivery_charge        BIGINT NOT NULL,
    shipping_tax_percent   BIGINT NOT NULL,
    total_due_tax_percent  BIGINT NOT NULL,
    PRIMARY KEY (option_id, governorate_id)
);

CREATE TABLE orders (
    id                     INTEGER PRIMARY KEY,
    account_id             BIGINT NOT NULL REFERENCES accounts (id),
    number                 TEXT NOT NULL,
    number_normalized      TEXT NOT NULL,
    legacy_number          TEXT,
    external_reference     TEXT,
    tracking_url           TEXT,
    status                 TEXT NOT NULL,
    family                 TEXT NOT NULL,
    customer_name          TEXT NOT NULL,
    customer_phone         TEXT NOT NULL,
    customer_second_phone  TEXT,
    customer_address       TEXT NOT NULL,
    governorate_id         BIGINT NOT NULL,
    governorate_name       TEXT NOT NULL,
    shipping_option_id     BIGINT NOT NULL,
    shipping_option_name   TEXT NOT NULL,
    store_name             TEXT,
    store_link             TEXT,
    note                   TEXT,
    products               BIGINT NOT NULL,
    warranties             BIGINT NOT NULL,
    delivery_charge        BIGINT NOT NULL,
    customer_total         BIGINT NOT NULL,
    profit                 BIGINT NOT NULL,
    income_tax             BIGINT NOT NULL,
    net_profit             BIGINT NOT NULL,
    income_tax_percent     BIGINT NOT NULL,
    created_at             BIGINT NOT NULL,
    updated_at             BIGINT NOT NULL,
    confirmed_at           BIGINT,
    delivered_at           BIGINT
);
CREATE UNIQUE INDEX orders_number ON orders (number);
CREATE UNIQUE INDEX orders_external_reference ON orders (account_id, external_reference);
CREATE INDEX orders_newest ON orders (account_id, created_at DESC, id DESC);
CREATE INDEX orders_updated_at ON orders (account_id, updated_at);
CREATE INDEX orders_status ON orders (account_id, status);
CREATE INDEX orders_family ON orders (account_id, family);
CREATE INDEX orders_number_normalized ON orders (account_id, number_normalized);
CREATE INDEX orders_legacy_number ON orders (account_id, legacy_number);

CREATE TABLE order_lines (
    id                  INTEGER PRIMARY KEY,
    order_id            BIGINT NOT NULL REFERENCES orders (id),
    position            INTEGER NOT NULL,
    variant_id          BIGINT NOT NULL,
    product_id          BIGINT NOT NULL,
    title               TEXT NOT NULL,
    variant_label       TEXT NOT NULL,
    quantity            BIGINT NOT NULL,
    sell_price          BIGINT NOT NULL,
    profit              BIGINT NOT NULL,
    commission_on       BOOLEAN NOT NULL,
    delivered_quantity  BIGINT,
    returned_quantity   BIGINT,
    damaged_quantity    BIGINT NOT NULL,
    lost_quantity       BIGINT NOT NULL,
    destroyed_quantity  BIGINT NOT NULL
);
CREATE INDEX order_lines_order ON order_lines (order_id, position);

CREATE TABLE order_line_warranties (
    id             INTEGER PRIMARY KEY,
    order_id       BIGINT NOT NULL REFERENCES orders (id),
    line_id        BIGINT NOT NULL REFERENCES order_lines (id),
    position       INTEGER NOT NULL,
    warranty_id    BIGINT NOT NULL,
    name           TEXT NOT NULL,
    unit_price     BIGINT NOT NULL,
    quantity       BIGINT NOT NULL,
    total          BIGINT NOT NULL,
    duration_days  INTEGER NOT NULL,
    terms          TEXT NOT NULL
);
CREATE INDEX order_line_warranties_order ON order_line_warranties (order_id, line_id, position);

CREATE TABLE order_timeline (
    id        INTEGER PRIMARY KEY,
    order_id  BIGINT NOT NULL REFERENCES orders (id),
    status    TEXT NOT NULL,
    at        BIGINT NOT NULL,
    reason    TEXT
);
CREATE INDEX order_timeline_order ON order_timeline (order_id, id);

CREATE TABLE idempotency_records (
    account_id       BIGINT NOT NULL,
    idem_key         TEXT NOT NULL,
    fingerprint      TEXT NOT NULL,
    created_at       BIGINT NOT NULL,
    order_id         BIGINT,
    response_status  INTEGER,
    response_body    BLOB,
    PRIMARY KEY (account_id, idem_key)
);
CREATE INDEX idempotency_records_created_at ON idempotency_records (created_at);

CREATE TABLE meter_pulls (
    account_id  BIGINT NOT NULL,
    month       TEXT NOT NULL,
    product_id  BIGINT NOT NULL,
    PRIMARY KEY (account_id, month, product_id)
);

CREATE TABLE meter_order_operations (
    account_id  BIGINT NOT NULL,
    month       TEXT NOT NULL,
    operations  BIGINT NOT NULL,
    PRIMARY KEY (account_id, month)
);

CREATE TABLE withdrawals (
    id                  INTEGER PRIMARY KEY,
    account_id          BIGINT NOT NULL REFERENCES accounts (id),
    amount              BIGINT NOT NULL,
    supply_amount       BIGINT NOT NULL,
    status              TEXT NOT NULL,
    wallet_number       TEXT NOT NULL,
    wallet_description  TEXT NOT NULL,
    notes               TEXT,
    transfer_reference  TEXT,
    receipt_url         TEXT,
    created_at          BIGINT NOT NULL,
    decided_at          BIGINT
);
CREATE INDEX withdrawals_account ON withdrawals (account_id, created_at, id);
