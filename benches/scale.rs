//! Scale: order list latency with 10 thousand and with 1 million orders in one account, and the
//! resident memory `MemoryStore` takes per million orders.
//!
//! ```text
//! CARGO_TARGET_DIR=/work/target-helper-bench cargo bench --bench scale
//! ```
//!
//! For each store the run bulk-loads orders through `Store::place_order` (the same call the
//! engine makes, minus pricing and HTTP; totals are priced once by `pricing::price`), first up
//! to `SCALE_SMALL` (default 10,000) orders, measures, then up to `SCALE_LARGE` (default
//! 1,000,000) and measures again, so both sizes are measured in the same run on the same
//! store. One order in ten is `order_pending`, the rest `order_delivered`; `created_at` (and so
//! `updated_at`) grows one second per order. The queries, each through `Store::orders` for the
//! account, page 1 of 25:
//!
//! - `list`: no filter (`GET /orders`);
//! - `family=pending`;
//! - `updated_since`: the last 50 orders changed (`GET /orders?updated_since=...`).
//!
//! Each latency is the median of up to 200 calls (at most about 2 s per query). Resident memory
//! is `VmRSS` from `/proc/self/status` before and after loading the memory store.
//!
//! Goal (BENCHMARKS.md): list and sync at 1M ≤ 1.5× their latency at 10k.

use std::sync::Arc;
use std::time::{Duration, Instant};

mod common;

use chrono::{DateTime, Utc};
use commerce_core::model::*;
use commerce_core::store::{MemoryStore, Store};
use common::env_or;

/// `VmRSS` of this process in bytes.
fn rss_bytes() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        .map_or(0, |kb| kb * 1024)
}

/// The seeded account and order template every loaded order copies.
struct Loader {
    store: Arc<dyn Store>,
    template: NewOrder,
    t0: DateTime<Utc>,
    loaded: usize,
}

impl Loader {
    async fn new(store: Arc<dyn Store>) -> Self {
        let (_, template) = common::seeded_template(store.clone()).await;
        let t0 = template.created_at - chrono::Duration::days(60);
        Self {
            store,
            template,
            t0,
            loaded: 0,
        }
    }

    fn at(&self, index: usize) -> DateTime<Utc> {
        self.t0 + chrono::Duration::seconds(index as i64)
    }

    /// Places orders until the account holds `target`, from `concurrency` tasks at once.
    async fn load_to(&mut self, target: usize, concurrency: usize) {
        let started = Instant::now();
        let from = self.loaded;
        let mut tasks = tokio::task::JoinSet::new();
        for worker in 0..concurrency {
            let store = self.store.clone();
            let template = self.template.clone();
            let t0 = self.t0;
            tasks.spawn(async move {
                for i in (from + worker..target).step_by(concurrency) {
                    let mut new = template.clone();
                    new.number = format!("EG-B{i:07}");
                    new.status = if i % 10 == 0 {
                        OrderStatus::Pending
                    } else {
                        OrderStatus::Delivered
                    };
                    new.created_at = t0 + chrono::Duration::seconds(i as i64);
                    store.place_order(new).await.expect("order placed");
                }
            });
        }
        while let Some(done) = tasks.join_next().await {
            done.expect("loader task");
        }
        self.loaded = target;
        let seconds = started.elapsed().as_secs_f64();
        println!(
            "  loaded {} orders in {seconds:.1} s ({:.0} orders/s)",
            target - from,
            (target - from) as f64 / seconds
        );
    }

    fn account(&self) -> AccountId {
        self.template.account_id
    }
}

/// Median latency of `query` in microseconds over up to 200 calls or about 2 s.
async fn median_us(store: &dyn Store, account: AccountId, filter: &OrderFilter) -> (f64, u64) {
    let page = PageRequest {
        page: 1,
        per_page: 25,
    };
    let budget = Duration::from_secs(2);
    let started = Instant::now();
    let mut samples = Vec::new();
    let mut total = 0;
    while samples.len() < 200 && (samples.len() < 5 || started.elapsed() < budget) {
        let t = Instant::now();
        let found = store.orders(account, filter, page).await.expect("orders");
        samples.push(t.elapsed().as_secs_f64() * 1e6);
        total = found.total;
        assert!(found.items.len() <= 25);
    }
    samples.sort_by(f64::total_cmp);
    (samples[samples.len() / 2], total)
}

/// The three queries at the loader's current size.
async fn measure(loader: &Loader) -> [(f64, u64); 3] {
    let account = loader.account();
    let list = OrderFilter::default();
    let pending = OrderFilter {
        family: Some(Family::Pending),
        ..OrderFilter::default()
    };
    let sync = OrderFilter {
        updated_since: Some(loader.at(loader.loaded.saturating_sub(50))),
        ..OrderFilter::default()
    };
    let store = &*loader.store;
    [
        median_us(store, account, &list).await,
        median_us(store, account, &pending).await,
        median_us(store, account, &sync).await,
    ]
}

/// How the orders past `SCALE_SMALL` are loaded.
enum Bulk {
    /// Through `Store::place_order`, as the first ones.
    PlaceOrder,
    /// By SQL copying the first loaded order (see `common::sql::bulk_copy_orders`).
    #[cfg(feature = "sqlx")]
    Sql(common::sql::BulkTarget),
}

async fn run(
    name: &str,
    store: Arc<dyn Store>,
    (small, large): (usize, usize),
    concurrency: usize,
    bulk: Bulk,
) {
    println!("{name}:");
    let rss_before = rss_bytes();
    let mut loader = Loader::new(store).await;
    loader.load_to(small, concurrency).await;
    let at_small = measure(&loader).await;
    match bulk {
        Bulk::PlaceOrder => loader.load_to(large, concurrency).await,
        #[cfg(feature = "sqlx")]
        Bulk::Sql(target) => {
            let started = Instant::now();
            common::sql::bulk_copy_orders(&target, loader.account(), small, large, loader.t0).await;
            loader.loaded = large;
            println!(
                "  bulk-copied {} orders by SQL in {:.1} s",
                large - small,
                started.elapsed().as_secs_f64()
            );
        }
    }
    let rss_after = rss_bytes();
    let at_large = measure(&loader).await;
    for (i, query) in ["list", "family=pending", "updated_since"]
        .iter()
        .enumerate()
    {
        let (s, s_total) = at_small[i];
        let (l, l_total) = at_large[i];
        println!(
            "  {query:<15} {small:>8} orders: {s:>10.1} us (total {s_total:>7})   {large:>8} orders: {l:>10.1} us (total {l_total:>7})   ratio {:.2}x",
            l / s
        );
    }
    if name == "memory" {
        let per_million = (rss_after.saturating_sub(rss_before)) as f64 / large as f64 * 1e6;
        println!(
            "  resident memory: {:.0} MiB before, {:.0} MiB after {large} orders: {:.0} MiB per million orders ({:.0} bytes/order)",
            rss_before as f64 / 1048576.0,
            rss_after as f64 / 1048576.0,
            per_million / 1048576.0,
            per_million / 1e6
        );
    }
}

fn main() {
    let small: usize = env_or("SCALE_SMALL", 10_000);
    let large: usize = env_or("SCALE_LARGE", 1_000_000);
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime");
    let stores = std::env::var("SCALE_STORES").unwrap_or_else(|_| "memory,sqlite,postgres".into());
    if stores.contains("memory") {
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
            let target = common::sql::BulkTarget::Sqlite(store.pool().clone());
            run(
                "sqlite (file, WAL)",
                Arc::new(store),
                (small, large),
                1,
                Bulk::Sql(target),
            )
            .await;
            for suffix in ["", "-wal", "-shm"] {
                let _ = std::fs::remove_file(format!("{path}{suffix}"));
            }
        }
        if stores.contains("postgres")
            && let Some(url) = common::sql::postgres_url("scale")
        {
            let store = common::sql::fresh_pg(&url, "commerce_scale").await;
            let target = common::sql::BulkTarget::Postgres(store.pool().clone());
            run(
                "postgres",
                Arc::new(store),
                (small, large),
                8,
                Bulk::Sql(target),
            )
            .await;
        }
    });
    #[cfg(not(feature = "sqlx"))]
    println!("sqlite, postgres: skipped (run with --features sqlx)");
}
