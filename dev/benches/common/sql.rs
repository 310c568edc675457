//! The SQL side of the benches: fresh databases, the raw-insert baseline, the bulk copy of
//! the scale bench and the counter reconciliation of the soak run.

use commerce_core::domain::earnings::OrderEarnings;
use commerce_core::model::{NewOrder, OrderId, OrderStatus};
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

/// The URL of database `name` on the server of `url`.
pub fn database_url(url: &str, name: &str) -> String {
    let (base, _) = url.rsplit_once('/').expect("url names a database");
    format!("{base}/{name}")
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

/// Creates database `name` on the server of `url`, empty (dropped first if left over), not
/// migrated.
pub async fn create_pg_database(url: &str, name: &str) {
    admin(
        url,
        &[
            format!("DROP DATABASE IF EXISTS {name} WITH (FORCE)"),
            format!("CREATE DATABASE {name}"),
        ],
    )
    .await;
}

/// A new empty database `name` on the server of `url` (dropped first if left over), migrated.
pub async fn fresh_pg(url: &str, name: &'static str) -> PgStore {
    create_pg_database(url, name).await;
    let store = PgStore::connect(&database_url(url, name))
        .await
        .expect("bench database answers");
    store.migrate().await.expect("migrates");
    store
}

/// Drops database `name` on the server of `url`, ending its sessions.
pub async fn drop_pg(url: &str, name: &str) {
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

/// `at` as nanoseconds since the epoch, as the stores keep instants.
pub fn nanos(at: chrono::DateTime<chrono::Utc>) -> i64 {
    at.timestamp_nanos_opt().expect("in range")
}

/// The baseline: one transaction inserting the same rows as `place_order` (the order with its
/// earnings, `OrderEarnings::undelivered`, and its first timeline entry; its lines) and reserving
/// the stock with the same conditional update on the same variant, without the store's
/// duplicate checks, product `updated_at` stamp, order counter and earnings sums, billing
/// meter or idempotency link.
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
            let earnings = OrderEarnings::undelivered(new.status, t);
            let id: i64 = sqlx::query_scalar(
                "INSERT INTO orders (account_id, number, number_normalized, legacy_number, \
                 external_reference, status, family, customer_name, customer_phone, \
                 customer_second_phone, customer_address, governorate_id, governorate_name, \
                 shipping_option_id, shipping_option_name, store_name, store_link, note, \
                 products, warranties, delivery_charge, customer_total, profit, income_tax, \
                 net_profit, income_tax_percent, created_at, updated_at, earnings_net, \
                 earnings_commission, timeline) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, \
                 $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $27, $28, $29, \
                 $30) RETURNING id",
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
            .bind(cents(earnings.net))
            .bind(cents(earnings.commission))
            .bind(format!("[[\"{}\",{created},null]]", new.status.as_str()))
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
            tx.commit().await.expect("commit");
        }
    };
}

raw_place!(raw_place_pg, PgPool, None);
raw_place!(raw_place_sqlite, SqlitePool, Some("BEGIN IMMEDIATE"));

/// A database of the benches: where [`bulk_copy_orders`] writes, and whose schema
/// [`SqlPool::has_column`] looks up.
#[derive(Clone)]
pub enum SqlPool {
    /// An SQLite database.
    Sqlite(SqlitePool),
    /// A PostgreSQL database.
    Postgres(PgPool),
}

impl SqlPool {
    /// Whether `table` has a column `column` (PostgreSQL: `information_schema` of the current
    /// schema; SQLite: `pragma_table_info`), so that the benches work with the schema before and
    /// after a migration adds it.
    pub async fn has_column(&self, table: &str, column: &str) -> bool {
        match self {
            SqlPool::Postgres(pool) => sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM information_schema.columns \
                 WHERE table_schema = current_schema() AND table_name = $1 AND column_name = $2)",
            )
            .bind(table)
            .bind(column)
            .fetch_one(pool)
            .await
            .expect("schema look-up"),
            SqlPool::Sqlite(pool) => sqlx::query_scalar(
                "SELECT EXISTS (SELECT 1 FROM pragma_table_info($1) WHERE name = $2)",
            )
            .bind(table)
            .bind(column)
            .fetch_one(pool)
            .await
            .expect("schema look-up"),
        }
    }

    /// Refreshes PostgreSQL's planner statistics (`ANALYZE`), so that a measurement runs on
    /// the plans the data calls for; nothing on SQLite (whose planner works without them).
    pub async fn analyze(&self) {
        if let SqlPool::Postgres(pool) = self {
            sqlx::query("ANALYZE").execute(pool).await.expect("analyze");
        }
    }

    /// Whether the store keeps each order's earnings on its row (`orders.earnings_net`,
    /// `earnings_commission`) and their sums by account and family (`account_order_counts.net`,
    /// `commission`), as after migration `20261123000000_account_earnings`.
    pub async fn keeps_earnings(&self) -> bool {
        let mut all = true;
        for (table, column) in [
            ("orders", "earnings_net"),
            ("orders", "earnings_commission"),
            ("account_order_counts", "net"),
            ("account_order_counts", "commission"),
        ] {
            all &= self.has_column(table, column).await;
        }
        all
    }
}

/// What [`bulk_copy_orders`] copies: copy `i` is a copy of the template order whose status is
/// `status_of(i)`.
pub struct BulkMix<'a> {
    /// The status of copy `i`; it repeats every `period` copies.
    pub status_of: &'a dyn Fn(usize) -> OrderStatus,
    /// How often `status_of` repeats.
    pub period: usize,
    /// One order per status `status_of` gives, placed and moved through the store (so its
    /// columns are what the store writes), one line and no warranties.
    pub templates: &'a [OrderId],
}

/// The documented fast path of the scale bench: adds orders `from..to` to the account of the
/// templates in SQL (`generate_series` / a recursive CTE), in chunks of 100,000, each a copy of
/// the template with its status (see [`BulkMix`]), exactly as placing and moving it through the
/// store would leave it:
///
/// - number `EG-B` + 7 digits of `i`; `created_at = t0 + i s`; `updated_at`, `confirmed_at` and
///   `delivered_at` at the template's distances from its `created_at`;
/// - every other column of the order row copied from the template, including the order's
///   earnings (`earnings_net`, `earnings_commission`) where the schema has them
///   ([`SqlPool::keeps_earnings`]), so the copies earn what the template earns;
/// - the template's line and its whole timeline (shifted like the order's instants);
/// - the copies added to the store's per-account, per-family counters
///   (`account_order_counts`: `count`, and the `net`/`commission` sums of the copies' earnings
///   where the schema has them), as `place_order` and the status moves would have.
///
/// Stock is not reserved for the copies. PostgreSQL ends with `ANALYZE`.
pub async fn bulk_copy_orders(
    target: &SqlPool,
    (from, to): (usize, usize),
    t0: chrono::DateTime<chrono::Utc>,
    mix: &BulkMix<'_>,
) {
    const CHUNK: usize = 100_000;
    let earnings = target.keeps_earnings().await;
    let mut columns = String::from(
        "account_id, legacy_number, external_reference, tracking_url, customer_name, \
         customer_phone, customer_second_phone, customer_address, governorate_id, \
         governorate_name, shipping_option_id, shipping_option_name, store_name, store_link, \
         note, products, warranties, delivery_charge, customer_total, profit, income_tax, \
         net_profit, income_tax_percent",
    );
    if earnings {
        columns.push_str(", earnings_net, earnings_commission");
    }
    let line_columns = "position, variant_id, product_id, title, variant_label, quantity, \
        sell_price, profit, commission_on, delivered_quantity, returned_quantity, \
        damaged_quantity, lost_quantity, destroyed_quantity";
    let prefixed = |alias: &str, list: &str| {
        list.split(", ")
            .map(|c| format!("{alias}.{}", c.trim()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let ids = mix
        .templates
        .iter()
        .map(ToString::to_string)
        .collect::<Vec<_>>()
        .join(", ");
    let templates = format!("(SELECT * FROM orders WHERE id IN ({ids})) AS t");
    let whens: String = (0..mix.period)
        .map(|residue| {
            format!(
                "WHEN {residue} THEN '{}' ",
                (mix.status_of)(residue).as_str()
            )
        })
        .collect();
    let status_case = format!("CASE x % {} {whens}END", mix.period);
    // The copy's instants: the template's, shifted by the copy's `created_at` minus the
    // template's (NULL stays NULL), its timeline's entries too.
    let shift = "($3 + x * 1000000000 - t.created_at)";
    let (series, number, timeline) = match target {
        SqlPool::Postgres(_) => (
            "SELECT g AS x FROM generate_series($1::BIGINT, $2::BIGINT - 1) AS g",
            "lpad(x::TEXT, 7, '0')",
            format!(
                "(SELECT CAST(json_agg(json_build_array(e.entry->>0, \
                 CAST(e.entry->>1 AS BIGINT) + {shift}, e.entry->>2) ORDER BY e.n) AS TEXT) \
                 FROM json_array_elements(CAST(t.timeline AS json)) WITH ORDINALITY \
                 AS e(entry, n))"
            ),
        ),
        SqlPool::Sqlite(_) => (
            "WITH RECURSIVE s(x) AS (SELECT $1 UNION ALL SELECT x + 1 FROM s WHERE x + 1 < $2) \
             SELECT x FROM s",
            "substr('0000000' || x, -7, 7)",
            format!(
                "(SELECT json_group_array(json_array(json_extract(e.value, '$[0]'), \
                 json_extract(e.value, '$[1]') + {shift}, json_extract(e.value, '$[2]'))) \
                 FROM (SELECT value FROM json_each(t.timeline) ORDER BY key) AS e)"
            ),
        ),
    };
    let orders = format!(
        "INSERT INTO orders (number, number_normalized, status, family, created_at, \
         updated_at, confirmed_at, delivered_at, timeline, {columns}) \
         SELECT 'EG-B' || {number}, 'EGB' || {number}, t.status, t.family, \
         $3 + x * 1000000000, t.updated_at + {shift}, t.confirmed_at + {shift}, \
         t.delivered_at + {shift}, {timeline}, {} \
         FROM ({series}) AS g JOIN {templates} ON t.status = {status_case} ORDER BY x",
        prefixed("t", &columns)
    );
    let lines = format!(
        "INSERT INTO order_lines (order_id, {line_columns}) \
         SELECT o.id, {} FROM orders o JOIN {templates} ON t.status = o.status \
         JOIN order_lines l ON l.order_id = t.id WHERE o.id > $1 ORDER BY o.id, l.position",
        prefixed("l", line_columns)
    );
    // The store's per-family counters (and earnings sums), as placing and moving keep them.
    let (sums, sum_columns, add_sums) = if earnings {
        (
            ", CAST(SUM(earnings_net) AS BIGINT), CAST(SUM(earnings_commission) AS BIGINT)",
            ", net, commission",
            ", net = account_order_counts.net + excluded.net, \
             commission = account_order_counts.commission + excluded.commission",
        )
    } else {
        ("", "", "")
    };
    let counts = format!(
        "INSERT INTO account_order_counts (account_id, family, count{sum_columns}) \
         SELECT account_id, family, COUNT(*){sums} FROM orders WHERE id > $1 \
         GROUP BY account_id, family \
         ON CONFLICT (account_id, family) \
         DO UPDATE SET count = account_order_counts.count + excluded.count{add_sums}"
    );
    let t0 = nanos(t0);
    let mut start = from;
    while start < to {
        let end = (start + CHUNK).min(to);
        macro_rules! copy {
            ($pool:expr) => {{
                let mut tx = $pool.begin().await.expect("begin");
                let before: i64 = sqlx::query_scalar("SELECT COALESCE(max(id), 0) FROM orders")
                    .fetch_one(&mut *tx)
                    .await
                    .expect("max id");
                let copied = sqlx::query(sqlx::AssertSqlSafe(orders.as_str()))
                    .bind(start as i64)
                    .bind(end as i64)
                    .bind(t0)
                    .execute(&mut *tx)
                    .await
                    .expect("orders copied");
                assert_eq!(
                    copied.rows_affected(),
                    (end - start) as u64,
                    "one template per status"
                );
                for (statement, what) in [(&lines, "lines copied"), (&counts, "counters kept")] {
                    sqlx::query(sqlx::AssertSqlSafe(statement.as_str()))
                        .bind(before)
                        .execute(&mut *tx)
                        .await
                        .expect(what);
                }
                tx.commit().await.expect("commit");
            }};
        }
        match target {
            SqlPool::Postgres(pool) => copy!(pool),
            SqlPool::Sqlite(pool) => copy!(pool),
        }
        start = end;
    }
    target.analyze().await;
}

/// Where the per-account, per-family order counters (`account_order_counts`: `count`, and the
/// `net`/`commission` earnings sums where the schema keeps them) differ from `COUNT(*)` and the
/// sums over `orders` grouped by account and family: one line per differing row, and how many
/// (account, family) rows were compared.
pub async fn counter_mismatches(pool: &PgPool) -> (Vec<String>, u64) {
    let earnings = SqlPool::Postgres(pool.clone()).keeps_earnings().await;
    let (sums, compared_sums, differs) = if earnings {
        (
            ", CAST(SUM(earnings_net) AS BIGINT) AS net, \
             CAST(SUM(earnings_commission) AS BIGINT) AS commission",
            ", COALESCE(c.net, 0) AS kept_net, COALESCE(o.net, 0) AS net, \
             COALESCE(c.commission, 0) AS kept_commission, \
             COALESCE(o.commission, 0) AS commission",
            " OR x.kept_net <> x.net OR x.kept_commission <> x.commission",
        )
    } else {
        ("", "", "")
    };
    let rows: Vec<(String, bool)> = sqlx::query_as(sqlx::AssertSqlSafe(format!(
        "SELECT row_to_json(x)::TEXT, x.kept_count <> x.count{differs} FROM ( \
         SELECT COALESCE(c.account_id, o.account_id) AS account_id, \
         COALESCE(c.family, o.family) AS family, COALESCE(c.count, 0) AS kept_count, \
         COALESCE(o.count, 0) AS count{compared_sums} \
         FROM account_order_counts c FULL OUTER JOIN \
         (SELECT account_id, family, COUNT(*) AS count{sums} FROM orders \
          GROUP BY account_id, family) o \
         ON c.account_id = o.account_id AND c.family = o.family) x"
    )))
    .fetch_all(pool)
    .await
    .expect("counters compared");
    let compared = rows.len() as u64;
    let differing = rows
        .into_iter()
        .filter_map(|(row, differs)| differs.then_some(row))
        .collect();
    (differing, compared)
}
