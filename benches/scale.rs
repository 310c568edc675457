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

use chrono::{DateTime, Utc};
use commerce_core::model::*;
use commerce_core::pricing::{LineInput, ShippingTerms, price};
use commerce_core::store::{MemoryStore, Store};
use commerce_core::{Engine, sandbox};
use rust_decimal::Decimal;

fn env_or<T: std::str::FromStr>(name: &str, default: T) -> T {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

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
        let engine = Engine::new(store.clone());
        let fixture = sandbox::seed(&engine).await.expect("sandbox seeds");
        engine
            .operator()
            .update_variant(
                fixture.plain_variant,
                VariantPatch {
                    price: None,
                    suggested_min: None,
                    suggested_max: None,
                    available: Some(i64::MAX / 4),
                },
            )
            .await
            .expect("stock set");
        let product = store
            .products_of_variants(&[fixture.plain_variant])
            .await
            .expect("product")
            .remove(0);
        let variant = product
            .variants
            .iter()
            .find(|v| v.id == fixture.plain_variant)
            .expect("variant")
            .clone();
        let option = store
            .shipping_options()
            .await
            .expect("options")
            .into_iter()
            .find(|o| o.id == fixture.standard_shipping)
            .expect("standard shipping");
        let rate = option
            .rates
            .iter()
            .find(|r| r.governorate_id == fixture.cairo)
            .expect("cairo rate")
            .clone();
        let profit = Decimal::new(4_000, 2);
        let priced = price(
            &[LineInput {
                price: variant.price,
                profit,
                quantity: 1,
                warranties: &[],
            }],
            ShippingTerms::from(&rate),
            Decimal::from(4),
        );
        let t0 = engine.now() - chrono::Duration::days(60);
        let template = NewOrder {
            // Marketer B starts with no orders, so the account holds exactly the loaded ones.
            account_id: fixture.marketer_b,
            number: String::new(),
            legacy_number: None,
            external_reference: None,
            status: OrderStatus::Pending,
            customer: Customer {
                name: "سارة حسن".into(),
                phone: "01112223334".into(),
                second_phone: None,
                address: "12 شارع النصر، مدينة نصر".into(),
                governorate_id: rate.governorate_id,
                governorate_name: rate.governorate_name.clone(),
            },
            shipping_option_id: option.id,
            shipping_option_name: option.name.clone(),
            store_name: None,
            store_link: None,
            note: None,
            lines: vec![NewOrderLine {
                variant_id: variant.id,
                product_id: product.id,
                title: product.title.clone(),
                variant_label: variant.label.clone(),
                quantity: 1,
                sell_price: priced.lines[0].sale,
                profit,
                commission_on: true,
                warranties: Vec::new(),
            }],
            totals: priced.totals,
            created_at: t0,
            bill_month: None,
            idempotency: None,
        };
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

async fn run(name: &str, store: Arc<dyn Store>, small: usize, large: usize, concurrency: usize) {
    println!("{name}:");
    let rss_before = rss_bytes();
    let mut loader = Loader::new(store).await;
    loader.load_to(small, concurrency).await;
    let at_small = measure(&loader).await;
    loader.load_to(large, concurrency).await;
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
    rt.block_on(run("memory", Arc::new(MemoryStore::new()), small, large, 1));
}
