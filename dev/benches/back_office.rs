//! Back office: a page of each back-office query (`find_orders`, `order_status_counts`,
//! `find_accounts`, `find_withdrawals`, `find_webhooks`) with 10 thousand and with 1 million
//! orders, on SQLite and PostgreSQL, and the plan each statement runs on.
//!
//! ```text
//! COMMERCE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo bench -p commerce-dev --features sqlx --bench back_office
//! ```
//!
//! Each store is filled straight through SQL (the stores' own tables, one `INSERT ... SELECT`
//! per 100,000 rows): first to `BACK_OFFICE_SMALL` orders (default 10,000) with one account,
//! one withdrawal and one webhook endpoint per 10 orders but at least 25,000 of each (so that
//! every queue fills a page and a count at both sizes: the same work), measured; then to
//! `BACK_OFFICE_LARGE` (default 1,000,000 orders, 100,000 accounts, 100,000 withdrawals,
//! 100,000 endpoints), measured again (PostgreSQL: `VACUUM ANALYZE` before each, as autovacuum
//! does after a bulk insert). Every order has one line and one timeline entry (what a page
//! loads with it). The mix:
//!
//! - order `x`: account `1 + x % (orders / 10)` (`orders` the size being filled), created at
//!   `t0 + x s`, changed up to 99 minutes later; status by `x % 10`: pending, confirmed,
//!   shipped, cancelled, else delivered (60%);
//! - account `x`: a supplier when `x % 3 = 0`; suspended when `x % 20 = 0`, incomplete when 1;
//!   API status pending when `x % 10 = 0` (the approval queue: 10%), dated in scrambled order;
//! - withdrawal `x`: pending when `x % 5 = 0` (the payout queue: 20%), else decided;
//! - endpoint `x`: disabled (`failing`) when `x % 20 = 0`; 6, 3 or 1 attempts in a row failed
//!   when `x % 10` is 0, 5 or 7.
//!
//! Each latency is the median of up to 200 calls (at most about 2 s per query), through the
//! store (`Store::find_orders`, ...), 25 a page. A deep page is page 20 (475 rows skipped; page
//! 5 for the payout queue). Counts stop at the default
//! `count_limit` (1,000). The plan of each statement at the large size is printed from
//! `PgStore::explain` / `SqliteStore::explain` (the statements built exactly as the store runs
//! them). The account search reads every account (no index serves a substring) and the
//! withdrawal totals every matching withdrawal: both are reported only.
//!
//! The SQLite file is `back_office_bench.db` in `$CARGO_TARGET_DIR` (else the workspace's `target/`); the
//! PostgreSQL store lives in its own schema, `commerce_back_office_bench`, of the URL's database.
//! Both are removed at the end. Goal (BENCHMARKS.md): every indexed page at the large size
//! ≤ 1.5× its latency at the small size.

use std::future::Future;
use std::time::{Duration, Instant};

mod common;

use chrono::{DateTime, Utc};
use commerce_core::model::*;
use commerce_core::store::prelude::*;
use commerce_store_sqlx::sqlx::postgres::PgConnectOptions;
use commerce_store_sqlx::sqlx::{self, Connection, PgConnection};
use commerce_store_sqlx::{Explain, PgStore, SqliteStore};
use common::env_or;
use common::report::{self, Goal, Unit};

const SCHEMA: &str = "commerce_back_office_bench";
/// Rows added per statement.
const CHUNK: usize = 100_000;

/// The two stores the bench fills.
enum Bench {
    Sqlite(SqliteStore),
    Postgres(PgStore),
}

impl Bench {
    fn store(&self) -> &dyn Store {
        match self {
            Bench::Sqlite(s) => s,
            Bench::Postgres(s) => s,
        }
    }

    async fn explain(&self, what: Explain<'_>) -> Vec<String> {
        match self {
            Bench::Sqlite(s) => s.explain(what).await,
            Bench::Postgres(s) => s.explain(what).await,
        }
        .expect("explain")
    }

    /// `(series, pad7, pad8)`: the rows `x` from `$1` to `$2 - 1`, and `x` zero-padded.
    fn dialect(&self) -> (&'static str, &'static str, &'static str) {
        match self {
            Bench::Postgres(_) => (
                "SELECT g AS x FROM generate_series($1::BIGINT, $2::BIGINT - 1) AS g",
                "lpad(x::TEXT, 7, '0')",
                "lpad(x::TEXT, 8, '0')",
            ),
            Bench::Sqlite(_) => (
                "WITH RECURSIVE s(x) AS (SELECT $1 UNION ALL SELECT x + 1 FROM s WHERE x + 1 < $2) \
                 SELECT x FROM s",
                "substr('0000000' || x, -7, 7)",
                "substr('00000000' || x, -8, 8)",
            ),
        }
    }

    /// Runs `sql` over `from..to` in chunks, binding `$1` `$2` (the chunk), `$3` (`t0` in
    /// nanoseconds), `$4` (`accounts`); `$5` the highest order id before the chunk.
    async fn fill(&self, sql: &str, (from, to): (usize, usize), t0: i64, accounts: usize) {
        let mut start = from;
        while start < to {
            let end = (start + CHUNK).min(to);
            macro_rules! run {
                ($pool:expr) => {{
                    let mut tx = $pool.begin().await.expect("begin");
                    let before: i64 = sqlx::query_scalar("SELECT COALESCE(MAX(id), 0) FROM orders")
                        .fetch_one(&mut *tx)
                        .await
                        .expect("max id");
                    for statement in sql.split(";\n") {
                        sqlx::query(sqlx::AssertSqlSafe(statement))
                            .bind(start as i64)
                            .bind(end as i64)
                            .bind(t0)
                            .bind(accounts as i64)
                            .bind(before)
                            .execute(&mut *tx)
                            .await
                            .unwrap_or_else(|e| panic!("{statement}: {e}"));
                    }
                    tx.commit().await.expect("commit");
                }};
            }
            match self {
                Bench::Sqlite(s) => run!(s.pool()),
                Bench::Postgres(s) => run!(s.pool()),
            }
            start = end;
        }
    }

    /// Fills the tables from the sizes of `from` to those of `to` (orders; the others follow).
    async fn grow(&self, (from, to): (usize, usize), t0: i64) {
        let (series, pad7, pad8) = self.dialect();
        let (accounts_from, accounts_to) = (side_rows(from), side_rows(to));
        // Parameters every statement binds, even when unused: `+ 0 * $n` keeps their types.
        let unused = "0 * ($1 + $2 + $3 + $4 + $5)";
        let accounts = format!(
            "INSERT INTO accounts (id, name, store_name, email, phone, side, state, api_status, \
             api_status_at, created_at) \
             SELECT x + 1, 'Account ' || x, 'Store ' || x, 'user' || x || '@example.com', \
             '010' || {pad8}, CASE WHEN x % 3 = 0 THEN 'supplier' ELSE 'marketer' END, \
             CASE x % 20 WHEN 0 THEN 'suspended' WHEN 1 THEN 'incomplete' ELSE 'active' END, \
             CASE x % 10 WHEN 0 THEN 'pending' WHEN 1 THEN 'none' ELSE 'approved' END, \
             $3 + ((x * 7919) % 1000003) * 1000000000, $3 + x * 1000000000 + {unused} \
             FROM ({series}) AS g"
        );
        self.fill(&accounts, (accounts_from, accounts_to), t0, 0)
            .await;
        let orders = format!(
            "INSERT INTO orders (account_id, number, number_normalized, external_reference, \
             status, family, customer_name, customer_phone, customer_address, governorate_id, \
             governorate_name, shipping_option_id, shipping_option_name, products, warranties, \
             delivery_charge, customer_total, profit, income_tax, net_profit, \
             income_tax_percent, created_at, updated_at, timeline) \
             SELECT 1 + x % $4, 'EG-B' || {pad7}, 'EGB' || {pad7}, 'ref-' || x, \
             CASE x % 10 WHEN 0 THEN 'order_pending' WHEN 1 THEN 'order_confirmed' \
             WHEN 2 THEN 'order_shipped' WHEN 3 THEN 'order_cancelled' \
             ELSE 'order_delivered' END, \
             CASE x % 10 WHEN 0 THEN 'pending' WHEN 1 THEN 'confirmed' WHEN 2 THEN 'shipping' \
             WHEN 3 THEN 'cancelled' ELSE 'delivered' END, \
             'عميل', '01012345678', 'القاهرة', 1, 'القاهرة', 1, 'شحن عادي', 25000, 0, 4500, \
             29500, 1000, 40, 960, 400, $3 + x * 1000000000, \
             $3 + x * 1000000000 + (x % 100) * 60000000000 + {unused}, \
             '[[\"order_pending\",' || ($3 + x * 1000000000) || ',null]]' \
             FROM ({series}) AS g ORDER BY x;\n\
             INSERT INTO order_lines (order_id, position, variant_id, product_id, title, \
             variant_label, quantity, sell_price, profit, commission_on, damaged_quantity, \
             lost_quantity, destroyed_quantity) \
             SELECT id, 0, 1, 1, 'غلاية', 'أبيض', 1, 25000, 1000, TRUE, 0, 0, 0 FROM orders \
             WHERE id > $5 + 0 * ($1 + $2 + $3 + $4) ORDER BY id"
        );
        // One account per 10 orders, whatever the floor of `side_rows`: one account's page
        // has 10 orders at the small size.
        self.fill(&orders, (from, to), t0, (to / 10).max(1)).await;
        let withdrawals = format!(
            "INSERT INTO withdrawals (account_id, amount, supply_amount, status, wallet_number, \
             wallet_description, created_at, decided_at) \
             SELECT 1 + x % $4, 10000 + x % 1000, 0, \
             CASE x % 5 WHEN 0 THEN 'pending' WHEN 1 THEN 'rejected' ELSE 'completed' END, \
             '01012345678', 'فودافون كاش', $3 + x * 10000000000 + {unused}, NULL \
             FROM ({series}) AS g"
        );
        self.fill(&withdrawals, (accounts_from, accounts_to), t0, accounts_to)
            .await;
        let webhooks = format!(
            "INSERT INTO webhook_endpoints (account_id, url, events, enabled, disabled_reason, \
             secret, created_at, updated_at, failed_attempts) \
             SELECT 1 + (x * 10) % $4, 'https://hooks.example.com/' || x, 'order.created', \
             x % 20 <> 0, CASE WHEN x % 20 = 0 THEN 'failing' END, 'whsec_' || x, \
             $3 + {unused}, $3, CASE x % 10 WHEN 0 THEN 6 WHEN 5 THEN 3 WHEN 7 THEN 1 ELSE 0 END \
             FROM ({series}) AS g"
        );
        self.fill(&webhooks, (accounts_from, accounts_to), t0, accounts_to)
            .await;
        if let Bench::Postgres(s) = self {
            // What autovacuum does after a bulk insert (PostgreSQL 13+: by inserted rows):
            // the statistics, and the visibility map that lets a count read the index alone.
            sqlx::query(
                "VACUUM ANALYZE accounts, orders, order_lines, withdrawals, \
                 webhook_endpoints",
            )
            .execute(s.pool())
            .await
            .expect("vacuum analyze");
        }
    }
}

/// The accounts, withdrawals and webhook endpoints at `orders` orders: one per 10 orders, at
/// least 25,000, so that every queue (10% of the accounts wait for approval, 20% of the
/// withdrawals are pending, 5% of the endpoints are disabled, 20% failed 3 times or more) fills
/// a page and a count (`count_limit` + 1 rows) at both sizes, and both do the same work.
fn side_rows(orders: usize) -> usize {
    if orders == 0 {
        0
    } else {
        (orders / 10).max(25_000)
    }
}

/// Median latency in µs of up to 200 calls (about 2 s at most), and the last call's answer.
async fn median_us<F, Fut>(mut call: F) -> (f64, String)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = String>,
{
    let budget = Duration::from_secs(2);
    let started = Instant::now();
    let mut samples = Vec::new();
    let mut last = String::new();
    while samples.len() < 200 && (samples.len() < 5 || started.elapsed() < budget) {
        let t = Instant::now();
        last = call().await;
        samples.push(t.elapsed().as_secs_f64() * 1e6);
    }
    samples.sort_by(f64::total_cmp);
    (samples[samples.len() / 2], last)
}

/// One measured query: its name, whether the goal applies, and what it runs.
struct Case {
    name: &'static str,
    goal: bool,
    what: What,
}

enum What {
    Orders(OrderQuery, PageRequest),
    StatusCounts(OrderQuery),
    Accounts(AccountQuery, PageRequest),
    Withdrawals(WithdrawalQuery, PageRequest),
    WithdrawalTotals(WithdrawalQuery),
    Webhooks(WebhookQuery, PageRequest),
}

impl What {
    fn explain(&self) -> Explain<'_> {
        match self {
            What::Orders(q, p) => Explain::Orders(q, *p),
            What::StatusCounts(q) => Explain::StatusCounts(q),
            What::Accounts(q, p) => Explain::Accounts(q, *p),
            What::Withdrawals(q, p) => Explain::Withdrawals(q, *p),
            What::WithdrawalTotals(q) => Explain::WithdrawalTotals(q),
            What::Webhooks(q, p) => Explain::Webhooks(q, *p),
        }
    }

    /// Runs it; what it found, in short.
    async fn run(&self, store: &dyn Store) -> String {
        let shown = |n: usize, total: Count| format!("{n} rows, total {total}");
        match self {
            What::Orders(q, p) => {
                let l = store.find_orders(q, *p).await.expect("orders");
                shown(l.items.len(), l.total)
            }
            What::StatusCounts(q) => {
                let counts = store.order_status_counts(q).await.expect("counts");
                counts
                    .iter()
                    .filter(|(_, c)| c.value > 0)
                    .map(|(s, c)| format!("{s} {c}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            }
            What::Accounts(q, p) => {
                let l = store.find_accounts(q, *p).await.expect("accounts");
                shown(l.items.len(), l.total)
            }
            What::Withdrawals(q, p) => {
                let l = store.find_withdrawals(q, *p).await.expect("withdrawals");
                shown(l.items.len(), l.total)
            }
            What::WithdrawalTotals(q) => {
                let t = store.withdrawal_totals(q).await.expect("totals");
                format!("{} withdrawals, {} EGP", t.count, t.amount)
            }
            What::Webhooks(q, p) => {
                let l = store.find_webhooks(q, *p).await.expect("webhooks");
                shown(l.items.len(), l.total)
            }
        }
    }
}

fn cases(t0: DateTime<Utc>) -> Vec<Case> {
    let p = |page: u32| PageRequest::new(page, 25).expect("a valid page");
    let orders = OrderQuery::default;
    let pending = orders()
        .status(OrderStatus::Pending)
        .sort(SortOrder::OldestFirst);
    let range = TimeRange::between(
        t0 + chrono::Duration::seconds(2000),
        t0 + chrono::Duration::seconds(8000),
    );
    let accounts = AccountQuery::default;
    let queue = WithdrawalQuery::payout_queue();
    let case = |name, goal, what| Case { name, goal, what };
    vec![
        case("orders: newest, page 1", true, What::Orders(orders(), p(1))),
        case(
            "orders: pending oldest first, page 1",
            true,
            What::Orders(pending.clone(), p(1)),
        ),
        case(
            "orders: pending oldest first, page 20",
            true,
            What::Orders(pending, p(20)),
        ),
        case(
            "orders: family delivered, page 20",
            true,
            What::Orders(orders().family(Family::Delivered), p(20)),
        ),
        case(
            "orders: one account, 10 a page",
            true,
            What::Orders(
                orders().account(AccountId::new(1)),
                PageRequest::new(1, 10).expect("a valid page"),
            ),
        ),
        case(
            "orders: created range, page 1",
            true,
            What::Orders(orders().created(range), p(1)),
        ),
        case(
            "orders: by number",
            true,
            What::Orders(orders().number("EG-B0005000"), p(1)),
        ),
        case(
            "orders: counts per status",
            true,
            What::StatusCounts(orders()),
        ),
        case(
            "accounts: newest, page 1",
            true,
            What::Accounts(accounts(), p(1)),
        ),
        case(
            "accounts: waiting for approval, page 1",
            true,
            What::Accounts(AccountQuery::waiting_for_approval(), p(1)),
        ),
        case(
            "accounts: active, page 20",
            true,
            What::Accounts(accounts().state(AccountState::Active), p(20)),
        ),
        case(
            "accounts: search (reads every account)",
            false,
            What::Accounts(accounts().search("user999@"), p(1)),
        ),
        case(
            "withdrawals: payout queue, page 1",
            true,
            What::Withdrawals(queue.clone(), p(1)),
        ),
        case(
            "withdrawals: payout queue, page 5",
            true,
            What::Withdrawals(queue.clone(), p(5)),
        ),
        case(
            "withdrawals: payout queue totals (every pending row)",
            false,
            What::WithdrawalTotals(queue),
        ),
        case(
            "webhooks: 3 or more failures in a row, page 1",
            true,
            What::Webhooks(WebhookQuery::default().failing_at_least(3), p(1)),
        ),
        case(
            "webhooks: disabled, page 1",
            true,
            What::Webhooks(WebhookQuery::default().enabled(false), p(1)),
        ),
    ]
}

async fn run(label: &str, bench: Bench, (small, large): (usize, usize)) {
    let t0 = Utc::now() - chrono::Duration::days(400);
    let t0_nanos = t0.timestamp_nanos_opt().expect("in range");
    let cases = cases(t0);
    let mut figures: Vec<[f64; 2]> = vec![[0.0; 2]; cases.len()];
    let mut from = 0;
    for (size, orders) in [small, large].into_iter().enumerate() {
        let started = Instant::now();
        bench.grow((from, orders), t0_nanos).await;
        from = orders;
        println!(
            "{label}: filled to {orders} orders, {} accounts in {:.1} s",
            side_rows(orders),
            started.elapsed().as_secs_f64()
        );
        for (i, case) in cases.iter().enumerate() {
            let (us, found) = median_us(|| case.what.run(bench.store())).await;
            figures[i][size] = us;
            println!(
                "{label} {orders:>9} {:<52} {us:>9.0} µs  ({found})",
                case.name
            );
        }
    }
    println!("{label}: plans at {large} orders");
    for case in &cases {
        println!("  {}:", case.name);
        for plan in bench.explain(case.what.explain()).await {
            for line in plan.lines() {
                println!("      {line}");
            }
            println!("      --");
        }
    }
    for (case, [at_small, at_large]) in cases.iter().zip(figures) {
        let goal = if case.goal {
            Goal::AtMost(1.5)
        } else {
            Goal::None
        };
        report::ratio(
            &format!("back office {label} {} {large}/{small}", case.name),
            at_large / at_small,
            Unit::Times,
            goal,
        );
    }
}

fn main() {
    let small: usize = env_or("BACK_OFFICE_SMALL", 10_000);
    let large: usize = env_or("BACK_OFFICE_LARGE", 1_000_000);
    let stores = std::env::var("BACK_OFFICE_STORES").unwrap_or_else(|_| "sqlite,postgres".into());
    let rt = common::runtime("back-office", 2);
    rt.block_on(async {
        if stores.contains("sqlite") {
            let dir = std::env::var("CARGO_TARGET_DIR")
                .unwrap_or_else(|_| concat!(env!("CARGO_MANIFEST_DIR"), "/../target").into());
            let path = std::path::Path::new(&dir).join("back_office_bench.db");
            let path = path.to_str().expect("utf-8 path").to_owned();
            let store = common::sql::fresh_sqlite(&path).await;
            run("sqlite", Bench::Sqlite(store), (small, large)).await;
            common::sql::remove_sqlite(&path);
        }
        if stores.contains("postgres")
            && let Some(url) = common::sql::postgres_url("back office")
        {
            let drop = format!("DROP SCHEMA IF EXISTS {SCHEMA} CASCADE");
            let mut admin = PgConnection::connect(&url).await.expect("postgres answers");
            sqlx::query(sqlx::AssertSqlSafe(drop.as_str()))
                .execute(&mut admin)
                .await
                .expect("drop schema");
            let options: PgConnectOptions = url.parse().expect("postgres url");
            let store = PgStore::connect_with_schema(options, SCHEMA)
                .await
                .expect("connects");
            store.migrate().await.expect("migrates");
            run("postgres", Bench::Postgres(store), (small, large)).await;
            sqlx::query(sqlx::AssertSqlSafe(drop.as_str()))
                .execute(&mut admin)
                .await
                .expect("drop schema");
        }
    });
}
