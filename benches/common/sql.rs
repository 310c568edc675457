//! The SQL side of the benches: fresh databases and the raw-insert baseline.

use commerce_core::model::NewOrder;
use commerce_core::money::to_piastres;
use commerce_store_sqlx::sqlx::{self, Connection, PgConnection, PgPool, SqlitePool};
use commerce_store_sqlx::{PgStore, SqliteStore};

/// The PostgreSQL server of the benches, from `COMMERCE_TEST_POSTGRES_URL`; `None` (and a line
/// saying so) when it is not set.
pub fn postgres_url(what: &str) -> Option<String> {
    match std::env::var("COMMERCE_TEST_POSTGRES_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ => {
            println!("{what}: PostgreSQL skipped (COMMERCE_TEST_POSTGRES_URL is not set)");
            None
        }
    }
}

/// Runs `statements` one after the other on a connection of its own to the server of `url`.
async fn admin(url: &str, statements: &[String]) {
    let mut admin = PgConnection::connect(url).await.expect("postgres answers");
    for statement in statements {
        sqlx::query(sqlx::AssertSqlSafe(statement.as_str()))
            .execute(&mut admin)
            .await
            .unwrap_or_else(|e| panic!("{statement}: {e}"));
    }
}

/// A new empty database `name` on the server of `url` (dropped first if left over), migrated.
pub async fn fresh_pg(url: &str, name: &'static str) -> PgStore {
    admin(
        url,
        &[
            format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            format!("CREATE DATABASE {name}"),
        ],
    )
    .await;
    let (base, _) = url.rsplit_once('/').expect("url names a database");
    let store = PgStore::connect(&format!("{base}/{name}"))
        .await
        .expect("bench database answers");
    store.migrate().await.expect("migrates");
    store
}

/// Drops database `name` on the server of `url`, ending its sessions.
pub async fn drop_pg(url: &str, name: &'static str) {
    admin(
        url,
        &[format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)")],
    )
    .await;
}

/// Removes the SQLite database at `path` with its WAL and shared-memory files, if there.
pub fn remove_sqlite(path: &str) {
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{path}{suffix}"));
    }
}

/// A new SQLite file database at `path` (removed first if left over), migrated.
pub async fn fresh_sqlite(path: &str) -> SqliteStore {
    remove_sqlite(path);
    let store = SqliteStore::connect(&format!("sqlite://{path}"))
        .await
        .expect("sqlite opens");
    store.migrate().await.expect("migrates");
    store
}

fn cents(amount: rust_decimal::Decimal) -> i64 {
    to_piastres(amount).expect("whole piastres")
}

fn nanos(at: chrono::DateTime<chrono::Utc>) -> i64 {
    at.timestamp_nanos_opt().expect("in range")
}

/// The baseline: one transaction inserting the same rows as `place_order` (the order, its
/// lines, its first timeline entry) and reserving the stock with the same conditional update
/// on the same variant, without the store's duplicate checks, product `updated_at` stamp,
/// order counter, billing meter or idempotency link.
macro_rules! raw_place {
    ($name:ident, $pool:ty, $begin:expr) => {
        /// Inserts `new` in one raw transaction (see the module's baseline).
        pub async fn $name(pool: &$pool, new: &NewOrder) {
            let begin: Option<&'static str> = $begin;
            let mut tx = match begin {
                Some(sql) => pool.begin_with(sql).await,
                None => pool.begin().await,
            }
            .expect("begin");
            let t = &new.totals;
            let created = nanos(new.created_at);
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO orders (account_id, number, number_normalized, legacy_number, \
                 external_reference, status, family, customer_name, customer_phone, \
                 customer_second_phone, customer_address, governorate_id, governorate_name, \
                 shipping_option_id, shipping_option_name, store_name, store_link, note, \
                 products, warranties, delivery_charge, customer_total, profit, income_tax, \
                 net_profit, income_tax_percent, created_at, updated_at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, \
                 $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $27) RETURNING id",
            )
            .bind(new.account_id)
            .bind(&new.number)
            .bind(new.number.replace('-', ""))
            .bind(&new.legacy_number)
            .bind(&new.external_reference)
            .bind(new.status.as_str())
            .bind(new.status.family().as_str())
            .bind(&new.customer.name)
            .bind(&new.customer.phone)
            .bind(&new.customer.second_phone)
            .bind(&new.customer.address)
            .bind(new.customer.governorate_id)
            .bind(&new.customer.governorate_name)
            .bind(new.shipping_option_id)
            .bind(&new.shipping_option_name)
            .bind(&new.store_name)
            .bind(&new.store_link)
            .bind(&new.note)
            .bind(cents(t.products))
            .bind(cents(t.warranties))
            .bind(cents(t.delivery_charge))
            .bind(cents(t.customer_total))
            .bind(cents(t.profit))
            .bind(cents(t.income_tax))
            .bind(cents(t.net_profit))
            .bind(cents(t.income_tax_percent))
            .bind(created)
            .fetch_one(&mut *tx)
            .await
            .expect("order row");
            for (position, line) in new.lines.iter().enumerate() {
                sqlx::query(
                    "UPDATE variants SET available = available - $2 \
                     WHERE id = $1 AND available >= $2",
                )
                .bind(line.variant_id)
                .bind(line.quantity)
                .execute(&mut *tx)
                .await
                .expect("stock");
                sqlx::query(
                    "INSERT INTO order_lines (order_id, position, variant_id, product_id, \
                     title, variant_label, quantity, sell_price, profit, commission_on, \
                     damaged_quantity, lost_quantity, destroyed_quantity) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, 0, 0, 0)",
                )
                .bind(id)
                .bind(position as i32)
                .bind(line.variant_id)
                .bind(line.product_id)
                .bind(&line.title)
                .bind(&line.variant_label)
                .bind(line.quantity)
                .bind(cents(line.sell_price))
                .bind(cents(line.profit))
                .bind(line.commission_on)
                .execute(&mut *tx)
                .await
                .expect("line row");
            }
            sqlx::query(
                "INSERT INTO order_timeline (order_id, status, at, reason) \
                 VALUES ($1, $2, $3, NULL)",
            )
            .bind(id)
            .bind(new.status.as_str())
            .bind(created)
            .execute(&mut *tx)
            .await
            .expect("timeline row");
            tx.commit().await.expect("commit");
        }
    };
}

raw_place!(raw_place_pg, PgPool, None);
raw_place!(raw_place_sqlite, SqlitePool, Some("BEGIN IMMEDIATE"));

/// Where [`bulk_copy_orders`] writes.
pub enum BulkTarget {
    /// An SQLite database.
    Sqlite(SqlitePool),
    /// A PostgreSQL database.
    Postgres(PgPool),
}

/// The documented fast path of the scale bench: copies the account's oldest order (with its
/// lines and first timeline entry) as orders `from..to`, numbered `EG-B` + 7 digits, one in ten
/// `order_pending` and the rest `order_delivered`, `created_at = updated_at = t0 + i s`, exactly
/// as the bench's `place_order` loop would, in SQL (`generate_series` / a recursive CTE) in
/// chunks of 100,000, adding them to the store's order counters (`account_order_counts`) as
/// `place_order` would. Stock is not reserved for the copies.
pub async fn bulk_copy_orders(
    target: &BulkTarget,
    account: i64,
    from: usize,
    to: usize,
    t0: chrono::DateTime<chrono::Utc>,
) {
    const CHUNK: usize = 100_000;
    let columns = "account_id, legacy_number, external_reference, customer_name, customer_phone, \
        customer_second_phone, customer_address, governorate_id, governorate_name, \
        shipping_option_id, shipping_option_name, store_name, store_link, note, products, \
        warranties, delivery_charge, customer_total, profit, income_tax, net_profit, \
        income_tax_percent";
    let line_columns = "position, variant_id, product_id, title, variant_label, quantity, \
        sell_price, profit, commission_on, damaged_quantity, lost_quantity, destroyed_quantity";
    let t0 = nanos(t0);
    let mut start = from;
    while start < to {
        let end = (start + CHUNK).min(to);
        let (series, number) = match target {
            BulkTarget::Postgres(_) => (
                "SELECT g AS x FROM generate_series($2::BIGINT, $3::BIGINT - 1) AS g".to_owned(),
                "lpad(x::TEXT, 7, '0')",
            ),
            BulkTarget::Sqlite(_) => (
                "WITH RECURSIVE s(x) AS (SELECT $2 UNION ALL SELECT x + 1 FROM s WHERE x + 1 < $3) \
                 SELECT x FROM s"
                    .to_owned(),
                "substr('0000000' || x, -7, 7)",
            ),
        };
        let orders = format!(
            "INSERT INTO orders (number, number_normalized, status, family, created_at, \
             updated_at, {columns}) \
             SELECT 'EG-B' || {number}, 'EGB' || {number}, \
             CASE WHEN x % 10 = 0 THEN 'order_pending' ELSE 'order_delivered' END, \
             CASE WHEN x % 10 = 0 THEN 'pending' ELSE 'delivered' END, \
             $4 + x * 1000000000, $4 + x * 1000000000, {columns} \
             FROM ({series}) AS g, \
             (SELECT * FROM orders WHERE account_id = $1 ORDER BY id LIMIT 1) AS t"
        );
        let l_columns = line_columns
            .split(", ")
            .map(|c| format!("l.{}", c.trim()))
            .collect::<Vec<_>>()
            .join(", ");
        let lines = format!(
            "INSERT INTO order_lines (order_id, {line_columns}) \
             SELECT o.id, {l_columns} FROM orders o, \
             (SELECT * FROM order_lines WHERE order_id = \
              (SELECT min(id) FROM orders WHERE account_id = $1)) AS l \
             WHERE o.account_id = $1 AND o.id > $2"
        );
        let timeline = "INSERT INTO order_timeline (order_id, status, at, reason) \
             SELECT id, status, created_at, NULL FROM orders WHERE account_id = $1 AND id > $2";
        // The store's per-family order counters, as `place_order` keeps them.
        let counts = "INSERT INTO account_order_counts (account_id, family, count) \
             SELECT account_id, family, COUNT(*) FROM orders WHERE account_id = $1 AND id > $2 \
             GROUP BY account_id, family \
             ON CONFLICT (account_id, family) \
             DO UPDATE SET count = account_order_counts.count + excluded.count";
        macro_rules! copy {
            ($pool:expr) => {{
                let mut tx = $pool.begin().await.expect("begin");
                let before: i64 = sqlx::query_scalar("SELECT COALESCE(max(id), 0) FROM orders")
                    .fetch_one(&mut *tx)
                    .await
                    .expect("max id");
                sqlx::query(sqlx::AssertSqlSafe(orders))
                    .bind(account)
                    .bind(start as i64)
                    .bind(end as i64)
                    .bind(t0)
                    .execute(&mut *tx)
                    .await
                    .expect("orders copied");
                sqlx::query(sqlx::AssertSqlSafe(lines))
                    .bind(account)
                    .bind(before)
                    .execute(&mut *tx)
                    .await
                    .expect("lines copied");
                sqlx::query(timeline)
                    .bind(account)
                    .bind(before)
                    .execute(&mut *tx)
                    .await
                    .expect("timeline copied");
                sqlx::query(counts)
                    .bind(account)
                    .bind(before)
                    .execute(&mut *tx)
                    .await
                    .expect("counters kept");
                tx.commit().await.expect("commit");
            }};
        }
        match target {
            BulkTarget::Postgres(pool) => copy!(pool),
            BulkTarget::Sqlite(pool) => copy!(pool),
        }
        start = end;
    }
    if let BulkTarget::Postgres(pool) = target {
        sqlx::query("ANALYZE").execute(pool).await.expect("analyze");
    }
}
