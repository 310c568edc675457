//! Scale: order list and wallet latency with 10 thousand and with 1 million orders in one
//! account, and the resident memory `MemoryStore` takes per million orders.
//!
//! ```text
//! COMMERCE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo bench -p commerce-dev --features sqlx --bench scale
//! ```
//!
//! For each store the run loads orders through `Store::place_order` (the same call the engine
//! makes, minus pricing and HTTP; totals are priced once by `pricing::price`) and moves them
//! through the operator (`Operator::move_order_at`, as the platform does), first up to
//! `SCALE_SMALL` (default 10,000) orders, measures, then up to `SCALE_LARGE` (default
//! 1,000,000) and measures again, so both sizes are measured in the same run on the same
//! store. The mix, meant to look like a marketer's history:
//!
//! - the first 100 orders (`RECENT`) were placed 12 days ago and later, an hour apart, and
//!   delivered two days after: inside the 14-day hold, so the wallet's `held` has 100 orders at
//!   both sizes; they are also the newest orders (page 1 of the list) and the last changed;
//! - every other order `i` is placed at `t0 + i s` (`t0` 60 days ago) and is, by `i % 50`,
//!   `order_pending` (2%), `order_shipped` (2%, confirmed an hour after placing and shipped a
//!   day after) or `order_delivered` (96%, delivered two days after placing: long past the hold).
//!
//! SQLite and PostgreSQL load the orders past `SCALE_SMALL` by the documented SQL bulk copy of
//! `common::sql::bulk_copy_orders` (one template order per status, copied with its line,
//! timeline, earnings and counters); MemoryStore places and moves them all.
//!
//! The queries, each through the store for the account, page 1 of 25:
//!
//! - `list`: no filter (`GET /orders`);
//! - `family=pending`;
//! - `updated_since`: the last 50 orders changed (`GET /orders?updated_since=...`);
//! - `wallet`: `Operator::wallet` (what `GET /wallet` reads: the store's wallet sums and the
//!   account's withdrawals).
//!
//! PostgreSQL's statistics are refreshed (`ANALYZE`) before each of the two measurements.
//! Each latency is the median of up to 200 calls (at most about 2 s per query). Resident memory
//! is `VmRSS` from `/proc/self/status` before and after loading the memory store. The wallet is
//! checked at both sizes: at 10k it equals the recomputation from every order
//! (`WalletFigures::compute`); at 1M it equals the 10k figures plus what the orders added since
//! earn (their count by status times the template's `OrderEarnings`).
//!
//! Goals (BENCHMARKS.md): list, sync and wallet at 1M ≤ 1.5× their latency at 10k (the
//! `family` filter is reported only); each query prints a `ratio` line with its goal.
//!
//! On SQLite and PostgreSQL the run then measures a supplier's statement the same way: page 1
//! of 25 of `Store::statement` and `Operator::wallet` of a supplier with `SCALE_SMALL` entries,
//! then with `SCALE_LARGE` (appended by one SQL statement, delivered long ago), goal ≤ 1.5×;
//! and the catalogue change feed: a page of 100 from the feed's start, one from a cursor in
//! its middle and the feed's head, with `SCALE_SMALL` and then `SCALE_LARGE` changes (appended
//! by one SQL statement), goal ≤ 1.5×. `SCALE_PARTS` picks what runs (`orders`, `statement`,
//! `feed`; all by default; memory runs `orders` only).

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;

use chrono::{DateTime, Utc};
use commerce_core::Engine;
use commerce_core::domain::earnings::{EarningsBucket, OrderEarnings};
use commerce_core::domain::wallet::WalletFigures;
use commerce_core::model::*;
use commerce_core::store::{MemoryStore, prelude::*};
use common::report::{self, Goal, Unit};
use common::{env_or, mib, rss_bytes};
use rust_decimal::Decimal;

/// Orders delivered within the hold period (the first ones loaded).
const RECENT: usize = 100;
/// The mix of the other orders repeats every `PERIOD` orders.
const PERIOD: usize = 50;

/// The status order `i` (past `RECENT`) ends in; depends on `i % PERIOD` only.
fn status_of(i: usize) -> OrderStatus {
    match i % PERIOD {
        0 => OrderStatus::Pending,
        1 => OrderStatus::Shipped,
        _ => OrderStatus::Delivered,
    }
}

/// The moves from `order_pending` to `status`, each with its delay after placing.
fn moves_to(status: OrderStatus) -> &'static [(OrderStatus, chrono::Duration)] {
    const HOUR: chrono::Duration = chrono::Duration::hours(1);
    const DAY: chrono::Duration = chrono::Duration::days(1);
    const TWO_DAYS: chrono::Duration = chrono::Duration::days(2);
    const ALL: [(OrderStatus, chrono::Duration); 3] = [
        (OrderStatus::Confirmed, HOUR),
        (OrderStatus::Shipped, DAY),
        (OrderStatus::Delivered, TWO_DAYS),
    ];
    match status {
        OrderStatus::Shipped => &ALL[..2],
        OrderStatus::Delivered => &ALL,
        _ => &[],
    }
}

/// The seeded account and order template every loaded order copies.
struct Loader {
    engine: Engine,
    template: NewOrder,
    /// When order `RECENT` was placed (60 days ago).
    t0: DateTime<Utc>,
    /// When order 0 was placed (12 days ago).
    recent0: DateTime<Utc>,
    loaded: usize,
    /// One order of each status of the mix (for the SQL bulk copy and the wallet check).
    templates: Vec<Order>,
}

impl Loader {
    async fn new(store: Arc<dyn Store>) -> Self {
        let (_, template) = common::seeded_template(store.clone()).await;
        let now = template.created_at;
        Self {
            engine: Engine::new(store),
            template,
            t0: now - chrono::Duration::days(60),
            recent0: now - chrono::Duration::days(12),
            loaded: 0,
            templates: Vec::new(),
        }
    }

    /// When order `i` was placed, and the status it ends in.
    fn plan(&self, i: usize) -> (DateTime<Utc>, OrderStatus) {
        if i < RECENT {
            (
                self.recent0 + chrono::Duration::hours(i as i64),
                OrderStatus::Delivered,
            )
        } else {
            (self.t0 + chrono::Duration::seconds(i as i64), status_of(i))
        }
    }

    /// Places orders and moves them until the account holds `target`, from `concurrency` tasks
    /// at once.
    async fn load_to(&mut self, target: usize, concurrency: usize) {
        let started = Instant::now();
        let from = self.loaded;
        let mut tasks = tokio::task::JoinSet::new();
        for worker in 0..concurrency {
            let store = self.engine.store().clone();
            let operator = self.engine.operator();
            let template = self.template.clone();
            let plans: Vec<_> = (from + worker..target)
                .step_by(concurrency)
                .map(|i| (i, self.plan(i)))
                .collect();
            tasks.spawn(async move {
                let mut templates = Vec::new();
                for (i, (at, status)) in plans {
                    let mut new = template.clone();
                    new.number = format!("EG-B{i:07}");
                    new.created_at = at;
                    let mut order = store.place_order(new).await.expect("order placed");
                    for &(to, after) in moves_to(status) {
                        order = operator
                            .move_order_at(order.id, to, None, at + after)
                            .await
                            .expect("order moved");
                    }
                    if (RECENT..RECENT + PERIOD).contains(&i) {
                        templates.push(order);
                    }
                }
                templates
            });
        }
        while let Some(done) = tasks.join_next().await {
            for order in done.expect("loader task") {
                if !self.templates.iter().any(|t| t.status == order.status) {
                    self.templates.push(order);
                }
            }
        }
        self.loaded = target;
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "  loaded {} orders in {seconds:.1} s ({:.0} orders/s, placed and moved)",
            target - from,
            (target - from) as f64 / seconds
        );
    }

    fn account(&self) -> AccountId {
        self.template.account_id
    }

    /// The `updated_since` of the last 50 orders changed: the delivery of recent order 50.
    fn last_50_changed(&self) -> DateTime<Utc> {
        let (placed, _) = self.plan(RECENT - 50);
        placed + chrono::Duration::days(2)
    }
}

/// Median latency of `call` in microseconds over up to 200 calls or about 2 s, and what the
/// last call returned.
async fn median_us<F, Fut>(mut call: F) -> (f64, u64)
where
    F: FnMut() -> Fut,
    Fut: Future<Output = u64>,
{
    let budget = Duration::from_secs(2);
    let started = Instant::now();
    let mut samples = Vec::new();
    let mut last = 0;
    while samples.len() < 200 && (samples.len() < 5 || started.elapsed() < budget) {
        let t = Instant::now();
        last = call().await;
        samples.push(t.elapsed().as_secs_f64() * 1e6);
    }
    samples.sort_by(f64::total_cmp);
    (samples[samples.len() / 2], last)
}

/// The queries, by name.
const QUERIES: [&str; 4] = ["list", "family=pending", "updated_since", "wallet"];

/// The queries at the loader's current size: (median µs, the list's `total`; 0 for the wallet).
async fn measure(loader: &Loader) -> [(f64, u64); 4] {
    let account = loader.account();
    let page = PageRequest::new(1, 25).expect("a valid page");
    let list = OrderFilter::default();
    let pending = OrderFilter::builder()
        .maybe_family(Some(Family::Pending))
        .build();
    let sync = OrderFilter::builder()
        .maybe_updated_since(Some(loader.last_50_changed()))
        .build();
    let store = &**loader.engine.store();
    let orders = |filter: &'static str, f: &OrderFilter| {
        let f = f.clone();
        async move {
            let found = store.orders(account, &f, page).await.expect(filter);
            assert!(found.items.len() <= 25);
            found.total
        }
    };
    let operator = loader.engine.operator();
    [
        median_us(|| orders("list", &list)).await,
        median_us(|| orders("family", &pending)).await,
        median_us(|| orders("sync", &sync)).await,
        median_us(|| async {
            operator.wallet(account).await.expect("wallet read");
            0
        })
        .await,
    ]
}

/// The goal of a query's large/small ratio: list, sync and wallet ≤ 1.5×; the family filter is
/// reported only.
fn goal_of(query: &str) -> Goal {
    match query {
        "family=pending" => Goal::None,
        _ => Goal::AtMost(1.5),
    }
}

/// Asserts that the wallet at the large size is the wallet at the small size plus what the
/// orders loaded since earn: `added` orders of each template's status, each earning what its
/// template earns.
fn check_wallet_growth(
    small: &WalletFigures,
    large: &WalletFigures,
    templates: &[Order],
    added: impl Fn(OrderStatus) -> u64,
) {
    let mut expected = small.clone();
    for template in templates {
        let earnings = OrderEarnings::of(template);
        let n = Decimal::from(added(template.status));
        match earnings.bucket {
            EarningsBucket::Expected => expected.expected += n * earnings.net,
            EarningsBucket::Settled => {
                expected.ready += n * earnings.net;
                expected.total_commission += n * earnings.commission;
            }
            // `Nothing`, and any bucket added later, earns nothing here.
            _ => {}
        }
    }
    assert_eq!(
        large, &expected,
        "wallet at the large size = small + what the added orders earn"
    );
}

/// How the orders past `SCALE_SMALL` are loaded.
enum Bulk {
    /// Through `Store::place_order` and the operator's moves, as the first ones.
    PlaceOrder,
    /// By SQL copying one order of each status (see `common::sql::bulk_copy_orders`).
    #[cfg(feature = "sqlx")]
    Sql(common::sql::SqlPool),
}

async fn run(
    name: &str,
    store: Arc<dyn Store>,
    (small, large): (usize, usize),
    concurrency: usize,
    bulk: Bulk,
) {
    assert!(
        small >= RECENT + PERIOD,
        "SCALE_SMALL holds the recent orders and one of each status"
    );
    println!("{name}:");
    let rss_before = rss_bytes();
    let mut loader = Loader::new(store).await;
    loader.load_to(small, concurrency).await;
    #[cfg(feature = "sqlx")]
    if let Bulk::Sql(target) = &bulk {
        // The large size is measured after the bulk copy's `ANALYZE`: the small one too.
        target.analyze().await;
    }
    let at_small = measure(&loader).await;
    let (wallet_small, recomputed) =
        common::wallet_and_recomputation(&loader.engine, loader.account()).await;
    assert_eq!(
        wallet_small, recomputed,
        "wallet = recomputation from every order"
    );
    match bulk {
        Bulk::PlaceOrder => loader.load_to(large, concurrency).await,
        #[cfg(feature = "sqlx")]
        Bulk::Sql(target) => {
            let started = Instant::now();
            let templates: Vec<OrderId> = loader.templates.iter().map(|o| o.id).collect();
            let mix = common::sql::BulkMix {
                status_of: &status_of,
                period: PERIOD,
                templates: &templates,
            };
            common::sql::bulk_copy_orders(&target, (small, large), loader.t0, &mix).await;
            loader.loaded = large;
            println!(
                "  bulk-copied {} orders by SQL in {:.1} s (earnings columns: {})",
                large - small,
                started.elapsed().as_secs_f64(),
                if target.keeps_earnings().await {
                    "copied"
                } else {
                    "none in this schema"
                }
            );
        }
    }
    let rss_after = rss_bytes();
    let at_large = measure(&loader).await;
    let wallet_large = loader
        .engine
        .operator()
        .wallet(loader.account())
        .await
        .expect("wallet read");
    check_wallet_growth(&wallet_small, &wallet_large, &loader.templates, |status| {
        (small..large).filter(|&i| status_of(i) == status).count() as u64
    });
    for (i, query) in QUERIES.iter().enumerate() {
        let (s, s_total) = at_small[i];
        let (l, l_total) = at_large[i];
        let total = |t: u64| {
            if *query == "wallet" {
                " ".repeat(15)
            } else {
                format!(" (total {t:>7})")
            }
        };
        println!(
            "  {query:<15} {small:>8} orders: {s:>10.1} us{}   {large:>8} orders: {l:>10.1} us{}",
            total(s_total),
            total(l_total),
        );
        report::ratio(
            &format!("{large}/{small} orders {name} {query}"),
            l / s,
            Unit::Times,
            goal_of(query),
        );
    }
    println!(
        "  wallet checked: at {small} = recomputation from every order; at {large} = {small} + what the added orders earn (expected {}, held {}, ready {}, commission {})",
        wallet_large.expected, wallet_large.held, wallet_large.ready, wallet_large.total_commission
    );
    if name == "memory" {
        let per_million = (rss_after.saturating_sub(rss_before)) as f64 / large as f64 * 1e6;
        println!(
            "  resident memory: {:.0} MiB before, {:.0} MiB after {large} orders: {:.0} MiB per million orders ({:.0} bytes/order)",
            mib(rss_before),
            mib(rss_after),
            per_million / 1048576.0,
            per_million / 1e6
        );
    }
}

/// Runs one statement of the bench's own (integers it computed, no input) on `target`.
#[cfg(feature = "sqlx")]
async fn execute(target: &common::sql::SqlPool, sql: String) {
    use commerce_store_sqlx::sqlx::{self, AssertSqlSafe};
    let done = match target {
        common::sql::SqlPool::Postgres(pool) => sqlx::query(AssertSqlSafe(sql))
            .execute(pool)
            .await
            .map(|_| ()),
        common::sql::SqlPool::Sqlite(pool) => sqlx::query(AssertSqlSafe(sql))
            .execute(pool)
            .await
            .map(|_| ()),
    };
    done.expect("bench SQL");
}

/// Appends entries to `supplier`'s statement until it has `to` (from `from`), by one SQL
/// statement (a series of `delivery` credits of 1.00, delivered 60 days ago: past the hold,
/// so the wallet's held sum reads none of them), and sets its kept totals to match.
#[cfg(feature = "sqlx")]
async fn bulk_statement(
    target: &common::sql::SqlPool,
    supplier: AccountId,
    from: usize,
    to: usize,
) {
    let delivered = common::sql::nanos(Utc::now() - chrono::Duration::days(60));
    let (supplier, first, last) = (supplier.get(), from as i64 + 1, to as i64);
    let series = match target {
        common::sql::SqlPool::Postgres(_) => {
            format!("WITH g(n) AS (SELECT generate_series({first}::BIGINT, {last}::BIGINT))")
        }
        common::sql::SqlPool::Sqlite(_) => format!(
            "WITH RECURSIVE g(n) AS (SELECT {first} UNION ALL SELECT n + 1 FROM g WHERE n < {last})"
        ),
    };
    execute(
        target,
        format!(
            "INSERT INTO statement_entries (supplier_id, kind, order_id, order_number, \
             variant_id, quantity, unit_price, amount, direction, balance, delivered_at, \
             withdrawal_id, at) \
             {series} SELECT {supplier}, 'delivery', NULL, 'EG-BENCH00', 1, 1, 100, 100, \
             'credit', n * 100, {delivered}, NULL, {delivered} + n FROM g"
        ),
    )
    .await;
    execute(
        target,
        format!(
            "INSERT INTO supplier_totals (supplier_id, expected, settled, balance, entries) \
             VALUES ({supplier}, 0, {piastres}, {piastres}, {last}) \
             ON CONFLICT (supplier_id) DO UPDATE SET settled = excluded.settled, \
             balance = excluded.balance, entries = excluded.entries",
            piastres = last * 100
        ),
    )
    .await;
}

/// `GET /statement`'s page and the supplier's wallet at `SCALE_SMALL` and at `SCALE_LARGE`
/// statement entries (goal: the large page within 1.5× of the small one).
#[cfg(feature = "sqlx")]
async fn statement_pair(
    name: &str,
    store: Arc<dyn Store>,
    target: common::sql::SqlPool,
    (small, large): (usize, usize),
) {
    let engine = Engine::new(store.clone());
    let supplier = store
        .insert_account(
            NewAccount::supplier(
                "Bench supplier",
                "bench-supplier@example.com",
                "01112345678",
            ),
            Utc::now(),
        )
        .await
        .expect("supplier")
        .id;
    let page = PageRequest::new(1, 25).expect("a valid page");
    // Every entry is 1.00, past the hold: the wallet's `ready` is their count in pounds.
    let (target, store, engine) = (&target, &store, &engine);
    let measure = |entries: usize| async move {
        target.analyze().await;
        let statement = median_us(|| async {
            let found = store
                .statement(supplier, &StatementFilter::default(), page)
                .await
                .expect("statement");
            assert_eq!(found.items.len(), 25);
            found.total
        })
        .await;
        let operator = engine.operator();
        let wallet = median_us(|| async {
            let w = operator.wallet(supplier).await.expect("wallet");
            assert_eq!((w.ready, w.held), (Decimal::from(entries), Decimal::ZERO));
            0
        })
        .await;
        (statement, wallet)
    };
    bulk_statement(target, supplier, 0, small).await;
    let (s_page, s_wallet) = measure(small).await;
    bulk_statement(target, supplier, small, large).await;
    let (l_page, l_wallet) = measure(large).await;
    assert_eq!(
        (s_page.1, l_page.1),
        (small as u64, large as u64),
        "the kept totals"
    );
    println!(
        "  statement page   {small:>8} entries: {:>10.1} us   {large:>8} entries: {:>10.1} us",
        s_page.0, l_page.0
    );
    println!(
        "  supplier wallet  {small:>8} entries: {:>10.1} us   {large:>8} entries: {:>10.1} us",
        s_wallet.0, l_wallet.0
    );
    for (query, s, l) in [
        ("statement", s_page.0, l_page.0),
        ("supplier wallet", s_wallet.0, l_wallet.0),
    ] {
        report::ratio(
            &format!("{large}/{small} entries {name} {query}"),
            l / s,
            Unit::Times,
            Goal::AtMost(1.5),
        );
    }
}

/// Appends changes to the catalogue change feed until it holds `to` bulk entries (from
/// `from`), by one SQL statement: products that are not in `products` (the feed's rows stand
/// alone), at positions `(0, FEED_BASE + n)`, behind every fence.
#[cfg(feature = "sqlx")]
async fn bulk_feed(target: &common::sql::SqlPool, from: usize, to: usize) {
    let (first, last) = (from as i64 + 1, to as i64);
    let series = match target {
        common::sql::SqlPool::Postgres(_) => {
            format!("WITH g(n) AS (SELECT generate_series({first}::BIGINT, {last}::BIGINT))")
        }
        common::sql::SqlPool::Sqlite(_) => format!(
            "WITH RECURSIVE g(n) AS (SELECT {first} UNION ALL SELECT n + 1 FROM g WHERE n < {last})"
        ),
    };
    execute(
        target,
        format!(
            "INSERT INTO catalog_changes (product_id, kind, at, txid, seq)              {series} SELECT {FEED_BASE} + n, 'updated', n, 0, {FEED_BASE} + n FROM g"
        ),
    )
    .await;
}

/// Where the bench's feed entries are numbered from (product ids and positions), past any
/// real product and position of the run.
#[cfg(feature = "sqlx")]
const FEED_BASE: i64 = 1_000_000_000;

/// `GET /catalog/changes`: a page of 100 read from the feed's start, a page read from a cursor
/// in its middle, and the head (`newest_catalog_change`, what `catalog.changed` reads), at
/// `SCALE_SMALL` and at `SCALE_LARGE` changes (goal: each at most 1.5× at the large size).
#[cfg(feature = "sqlx")]
async fn feed_pair(
    name: &str,
    store: Arc<dyn Store>,
    target: common::sql::SqlPool,
    (small, large): (usize, usize),
) {
    let (target, store) = (&target, &store);
    let measure = |size: usize| async move {
        target.analyze().await;
        let start = median_us(|| async {
            let page = store.catalog_changes(None, 100).await.expect("a page");
            assert_eq!(page.changes.len(), 100);
            0
        })
        .await;
        let middle = ChangePosition::new(0, FEED_BASE + size as i64 / 2);
        let middle = median_us(|| async {
            let page = store
                .catalog_changes(Some(middle), 100)
                .await
                .expect("a page");
            assert_eq!(page.changes.len(), 100);
            assert_eq!(page.changes[0].product_id.get(), middle.low() + 1);
            0
        })
        .await;
        let head = median_us(|| async {
            store.newest_catalog_change().await.expect("the head");
            0
        })
        .await;
        [start.0, middle.0, head.0]
    };
    bulk_feed(target, 0, small).await;
    let at_small = measure(small).await;
    bulk_feed(target, small, large).await;
    let at_large = measure(large).await;
    for (n, query) in [
        "feed page from the start",
        "feed page from the middle",
        "feed head",
    ]
    .iter()
    .enumerate()
    {
        println!(
            "  {query:<26} {small:>8} changes: {:>10.1} us   {large:>8} changes: {:>10.1} us",
            at_small[n], at_large[n]
        );
        report::ratio(
            &format!("{large}/{small} changes {name} {query}"),
            at_large[n] / at_small[n],
            Unit::Times,
            Goal::AtMost(1.5),
        );
    }
}

/// The parts of `SCALE_PARTS` (`orders`, `statement`, `feed`; all by default) on one SQL store.
#[cfg(feature = "sqlx")]
async fn sql_parts(
    name: &str,
    store: Arc<dyn Store>,
    target: common::sql::SqlPool,
    (sizes, writers): ((usize, usize), usize),
    part: impl Fn(&str) -> bool,
) {
    if part("orders") {
        run(
            name,
            store.clone(),
            sizes,
            writers,
            Bulk::Sql(target.clone()),
        )
        .await;
    }
    if part("statement") {
        statement_pair(name, store.clone(), target.clone(), sizes).await;
    }
    if part("feed") {
        feed_pair(name, store, target, sizes).await;
    }
}

fn main() {
    let small: usize = env_or("SCALE_SMALL", 10_000);
    let large: usize = env_or("SCALE_LARGE", 1_000_000);
    let rt = common::runtime("scale", 2);
    let stores = std::env::var("SCALE_STORES").unwrap_or_else(|_| "memory,sqlite,postgres".into());
    let parts = std::env::var("SCALE_PARTS").unwrap_or_else(|_| "orders,statement,feed".into());
    let part = |name: &str| parts.split(',').any(|p| p.trim() == name);
    if stores.contains("memory") && part("orders") {
        rt.block_on(run(
            "memory",
            Arc::new(MemoryStore::new()),
            (small, large),
            1,
            Bulk::PlaceOrder,
        ));
    }
    #[cfg(feature = "sqlx")]
    rt.block_on(async {
        if stores.contains("sqlite") {
            let path =
                std::env::temp_dir().join(format!("commerce-scale-{}.db", std::process::id()));
            let path = path.to_str().expect("utf-8 temp path").to_owned();
            let store = common::sql::fresh_sqlite(&path).await;
            let target = common::sql::SqlPool::Sqlite(store.pool().clone());
            let sizes = ((small, large), 1);
            sql_parts("sqlite (file, WAL)", Arc::new(store), target, sizes, part).await;
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{path}{suffix}"));
            }
        }
        if stores.contains("postgres")
            && let Some(url) = common::sql::postgres_url("scale")
        {
            let store = common::sql::fresh_pg(&url, "commerce_scale").await;
            let target = common::sql::SqlPool::Postgres(store.pool().clone());
            let sizes = ((small, large), 8);
            sql_parts("postgres", Arc::new(store), target, sizes, part).await;
        }
    });
    #[cfg(not(feature = "sqlx"))]
    println!("sqlite, postgres: skipped (run with --features sqlx)");
}
