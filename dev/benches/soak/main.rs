//! Soak: two engines on one PostgreSQL database under mixed traffic for a fixed time, with
//! clients that disconnect mid-request and the platform moving orders meanwhile, then a
//! reconciliation of everything the run did against what the store kept. Stops by itself.
//!
//! ```text
//! COMMERCE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo bench -p commerce-dev --features sqlx --bench soak
//! ```
//!
//! Set-up: a fresh database `commerce_soak` on the server of `COMMERCE_TEST_POSTGRES_URL`
//! (dropped at the end), migrated once and seeded once with the sandbox through the first
//! engine; two engines, each on its own `PgStore` (its own pool of 10), each served by axum on
//! its own `127.0.0.1` port and its own runtime. Two fresh marketer accounts, each with a key allowed 1,000,000
//! requests a minute; the plain variant gets 100,000,000 pieces and the featured one 1,000,000
//! (the sandbox's sold-out variant stays at 0).
//!
//! Traffic: `SOAK_CONNECTIONS` (default 64) keep-alive clients, alternately on either engine
//! and either account, for `SOAK_SECONDS` (default 600), one request in flight each, drawn by
//! weight: the catalogue (`GET /products?per_page=25`, `/products/{id}` — 5% of them the
//! stopped product, a 404 — `/categories`, `/shipping/options`, `POST /shipping/quote`),
//! `POST /orders` without and with `Idempotency-Key` (30% of the keyed ones repeat an earlier
//! key with its body: replays), `POST /orders/{id}/cancel` of one of the client's own orders,
//! `GET /orders?per_page=25`, `/wallet`, `/me`. Orders are mostly of the plain variant, 10% of
//! the featured variant with a warranty, 3% of the sold-out variant (422), 1% with a bad phone
//! (422); 30% carry an `external_reference`, and 2% of the unkeyed ones repeat one (409).
//!
//! Each engine runs on its own server runtime of `SOAK_INSTANCE_THREADS` threads (default 1), as
//! two app instances on their own cores would. Scaling first (`SOAK_SCALING_SECONDS`, default
//! 30; 0 skips it): the same traffic with every client on the first engine, then spread over
//! both, then each again, every phase half that long with new clients (so a drift during the
//! run weighs on both arms alike); the run prints each arm's throughput and their ratio (goal:
//! two instances ≥ 1.6× one). Its orders count in the reconciliation and the traffic report.
//!
//! Disconnects: 10% of the requests are instead written, whole or half, on a new connection
//! that is dropped 0–20 ms later without reading. A disconnected order always carries a fresh
//! key; the client sends it again on its own connection a second later (again after a 409
//! while the first is in flight) until it gets a final answer, so every order the server made
//! is known. A disconnected cancel leaves its outcome to the reconciliation.
//!
//! The platform: a task receives every new order id and moves 75% of them through the
//! operator API of either engine, after 0–200 ms (racing the clients' cancels), to
//! `order_confirmed` (10%), `order_shipped` (10%) or `order_delivered` (55%).
//!
//! Report: requests, 5xx, other non-2xx by status, p50/p99 per endpoint (histograms of about 3%
//! resolution, so the client's memory does not grow with the run), resident memory
//! (`VmRSS`, whole process: both servers, the client and the pools) when the traffic starts and
//! when it ends, then the reconciliation, per account:
//!
//! - the orders answered 201 (distinct ids, replays counted once) are exactly the orders the
//!   store holds for the account;
//! - stock + what the stored orders reserve (every order not cancelled) = the initial stock,
//!   per variant ordered;
//! - the counters `account_order_counts` equal `COUNT(*)` (and the earnings sums where the
//!   schema keeps them) per account and family, in SQL;
//! - the wallet the operator serves equals `WalletFigures::compute` over every order;
//! - the billing meter's order operations = orders created through the API + API cancels
//!   that succeeded (the cancels answered 200 plus those disconnected, as the store shows them:
//!   orders `rejected_by_marketer`).
//!
//! Goal: every reconciliation holds and no 5xx, printed as a `goal ...: met` / `NOT met` line;
//! the run then panics (non-zero exit) when a reconciliation failed or any 5xx was answered.

mod client;
#[path = "../common/mod.rs"]
mod common;
mod reconcile;
mod stats;

use client::Client;
use reconcile::{Ledger, reconcile};
use stats::Stats;

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use commerce::domain::keys::KeySpec;
use commerce::model::*;
use commerce::operator::Conflict;
use commerce::sqlx::PgStore;
use commerce::store::Store;
use commerce::{Engine, operator::OperatorError, sandbox};
use common::http::serve;
use common::report::{self, Goal, Unit};
use common::{env_or, mib, rss_bytes, runtime};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use tokio::sync::mpsc;

/// The database the run creates and drops.
const DATABASE: &str = "commerce_soak";
/// Share of requests that disconnect mid-request.
const DISCONNECT_SHARE: f64 = 0.10;
/// How long a disconnected order waits before the client asks again with its key.
const RESOLVE_AFTER: Duration = Duration::from_secs(1);
/// How many times a client asks again (a 409 while the first is in flight) before giving up.
const RESOLVE_ATTEMPTS: u32 = 60;

/// The fixture ids the clients use.
struct Ids {
    plain: VariantId,
    featured: VariantId,
    warranty: WarrantyId,
    sold_out: VariantId,
    products: Vec<ProductId>,
    stopped: ProductId,
    shipping: ShippingOptionId,
    cairo: GovernorateId,
}

/// What every client shares.
struct Shared {
    ids: Ids,
    stats: Mutex<Stats>,
    ledgers: Vec<Mutex<Ledger>>,
    /// New orders, for the platform's moves.
    new_orders: mpsc::UnboundedSender<OrderId>,
}

impl Shared {
    /// The requests answered so far (every status).
    fn answered(&self) -> u64 {
        self.stats.lock().expect("stats").statuses.values().sum()
    }
}

/// What the platform task did.
#[derive(Debug, Default)]
struct Moves {
    moved: u64,
    /// Moves refused because the order was no longer pending (a client's cancel won).
    refused: u64,
    errors: Vec<String>,
}

impl Moves {
    fn add(&mut self, other: Moves) {
        self.moved += other.moved;
        self.refused += other.refused;
        self.errors.extend(other.errors);
    }
}

/// The platform: moves new orders through the operator API of either engine until `stop`.
async fn platform(
    engines: [Engine; 2],
    mut new_orders: mpsc::UnboundedReceiver<OrderId>,
    stop: Arc<AtomicBool>,
) -> Moves {
    use OrderStatus::{Confirmed, Delivered, Shipped};
    const PATHS: [&[OrderStatus]; 4] = [
        &[],
        &[Confirmed],
        &[Confirmed, Shipped],
        &[Confirmed, Shipped, Delivered],
    ];
    let mut rng = StdRng::seed_from_u64(7);
    let mut running = tokio::task::JoinSet::new();
    let mut moves = Moves::default();
    let mut turn = 0;
    while let Some(id) = new_orders.recv().await {
        if stop.load(Ordering::Relaxed) {
            break;
        }
        let path = PATHS[match rng.random_range(0..100) {
            0..25 => 0,
            25..35 => 1,
            35..45 => 2,
            _ => 3,
        }];
        if path.is_empty() {
            continue;
        }
        let operator = engines[turn % 2].operator();
        turn += 1;
        let delay = Duration::from_millis(rng.random_range(0..200));
        running.spawn(async move {
            tokio::time::sleep(delay).await;
            let mut done = Moves::default();
            for &to in path {
                match operator.move_order(id, to, None).await {
                    Ok(_) => done.moved += 1,
                    Err(OperatorError::Conflict(Conflict::MoveNotAllowed { .. })) => {
                        done.refused += 1;
                        break;
                    }
                    Err(error) => {
                        done.errors.push(format!("order {id} to {to}: {error}"));
                        break;
                    }
                }
            }
            done
        });
        while running.len() >= 8 {
            moves.add(
                running
                    .join_next()
                    .await
                    .expect("a move")
                    .expect("move task"),
            );
        }
    }
    while let Some(done) = running.join_next().await {
        moves.add(done.expect("move task"));
    }
    moves
}

/// Pieces of `variant` available now.
async fn available(store: &dyn Store, variant: VariantId) -> i64 {
    store
        .products_of_variants(&[variant])
        .await
        .expect("product read")
        .iter()
        .flat_map(|p| &p.variants)
        .find(|v| v.id == variant)
        .expect("variant")
        .available
}

/// The run's set-up: the database, the two engines, the fixture, the accounts and keys.
struct Setup {
    url: String,
    stores: [PgStore; 2],
    engines: [Engine; 2],
    accounts: Vec<(AccountId, String)>,
    initial_stock: Vec<(VariantId, i64)>,
}

async fn set_up(url: String) -> (Setup, Ids) {
    common::sql::create_pg_database(&url, DATABASE).await;
    let database = common::sql::database_url(&url, DATABASE);
    let first = PgStore::connect(&database).await.expect("database answers");
    first.migrate().await.expect("migrates");
    let second = PgStore::connect(&database).await.expect("database answers");
    let engines = [
        Engine::new(Arc::new(first.clone())),
        Engine::new(Arc::new(second.clone())),
    ];
    let fixture = sandbox::seed(&engines[0]).await.expect("sandbox seeds");
    let operator = engines[0].operator();
    for (variant, stock) in [
        (fixture.plain_variant, 100_000_000),
        (fixture.featured_variants[0], 1_000_000),
    ] {
        let received = NewStockAdjustment::builder()
            .variant_id(variant)
            .delta(stock)
            .reason(StockReason::Received)
            .build();
        operator
            .adjust_stock(received)
            .await
            .expect("stock received");
    }
    let mut accounts = Vec::new();
    for name in ["soak-1", "soak-2"] {
        let account = operator
            .create_account(
                NewAccount::builder()
                    .name(name.to_owned())
                    .store_name(format!("متجر {name}"))
                    .email(format!("{name}@example.com"))
                    .phone("01000000000".to_owned())
                    .side(Side::Marketer)
                    .state(AccountState::Active)
                    .api_status(ApiStatus::Approved)
                    .build(),
            )
            .await
            .expect("account created");
        let key = operator
            .create_key(
                account.id,
                KeySpec::new(
                    name.to_owned(),
                    vec![
                        Ability::CatalogRead,
                        Ability::OrdersRead,
                        Ability::OrdersWrite,
                        Ability::WalletRead,
                    ],
                    None,
                    Some(1_000_000),
                ),
            )
            .await
            .expect("key created");
        accounts.push((account.id, key.plaintext));
    }
    let store = &**engines[0].store();
    let sold_out = fixture.featured_variants[2];
    let variants = [
        fixture.plain_variant,
        fixture.featured_variants[0],
        sold_out,
    ];
    let mut initial_stock = Vec::new();
    for variant in variants {
        initial_stock.push((variant, available(store, variant).await));
    }
    let plain_product = store
        .products_of_variants(&[fixture.plain_variant])
        .await
        .expect("product read")[0]
        .id;
    let ids = Ids {
        plain: fixture.plain_variant,
        featured: fixture.featured_variants[0],
        warranty: fixture.featured_warranties[0],
        sold_out,
        products: vec![fixture.featured_product, plain_product],
        stopped: fixture.stopped_product,
        shipping: fixture.standard_shipping,
        cairo: fixture.cairo,
    };
    let setup = Setup {
        url,
        stores: [first, second],
        engines,
        accounts,
        initial_stock,
    };
    (setup, ids)
}

/// Prints the traffic figures; returns the number of 5xx answers.
fn report_traffic(stats: &Stats, seconds: f64, moves: &Moves) -> u64 {
    let total: u64 = stats.statuses.values().sum();
    let disconnected: u64 = stats.disconnects.values().sum();
    let mut by_status: BTreeMap<u16, u64> = BTreeMap::new();
    for ((_, status), n) in &stats.statuses {
        *by_status.entry(*status).or_default() += n;
    }
    let server_errors: u64 = by_status.range(500..).map(|(_, n)| n).sum();
    let ok: u64 = by_status.range(200..300).map(|(_, n)| n).sum();
    println!(
        "requests answered: {total} ({:.0}/s), 2xx {ok}, 5xx {server_errors}; disconnected mid-request: {disconnected}; connection errors: {}",
        total as f64 / seconds,
        stats.io_errors
    );
    let others: Vec<String> = by_status
        .iter()
        .filter(|(s, _)| !(200..300).contains(*s) && **s < 500)
        .map(|(s, n)| format!("{s}: {n}"))
        .collect();
    println!("other non-2xx by status: {}", others.join(", "));
    println!(
        "{:<42} {:>9} {:>9} {:>9}  non-2xx",
        "endpoint", "answered", "p50 ms", "p99 ms"
    );
    for (label, histogram) in &stats.latency {
        let non_2xx: Vec<String> = stats
            .statuses
            .iter()
            .filter(|((l, s), _)| l == label && !(200..300).contains(s))
            .map(|((_, s), n)| format!("{s}×{n}"))
            .collect();
        println!(
            "{label:<42} {:>9} {:>9.2} {:>9.2}  {}",
            histogram.total,
            histogram.quantile(0.50) as f64 / 1000.0,
            histogram.quantile(0.99) as f64 / 1000.0,
            non_2xx.join(" ")
        );
    }
    let dropped: Vec<String> = stats
        .disconnects
        .iter()
        .map(|(l, n)| format!("{l}: {n}"))
        .collect();
    println!("disconnected by endpoint: {}", dropped.join(", "));
    println!(
        "platform moves: {} done, {} refused (cancelled first), {} errors",
        moves.moved,
        moves.refused,
        moves.errors.len()
    );
    server_errors
}

/// The machine's CPU time from `/proc/stat` (every core, every process: the database, the
/// servers and the client share this machine), in clock ticks; zero where it is unreadable.
#[derive(Debug, Default, Clone, Copy)]
struct CpuTicks {
    busy: u64,
    idle: u64,
}

impl CpuTicks {
    fn now() -> Self {
        let stat = std::fs::read_to_string("/proc/stat").unwrap_or_default();
        let fields: Vec<u64> = stat
            .lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .skip(1)
            .filter_map(|f| f.parse().ok())
            .collect();
        // user nice system idle iowait irq softirq steal ...
        let idle = fields.iter().skip(3).take(2).sum();
        let busy = fields.iter().take(8).sum::<u64>() - idle;
        Self { busy, idle }
    }

    fn since(self, earlier: Self) -> Self {
        Self {
            busy: self.busy.saturating_sub(earlier.busy),
            idle: self.idle.saturating_sub(earlier.idle),
        }
    }

    fn add(&mut self, other: Self) {
        self.busy += other.busy;
        self.idle += other.idle;
    }

    /// The share of the CPUs' time spent busy.
    fn busy_share(self) -> f64 {
        self.busy as f64 / (self.busy + self.idle).max(1) as f64
    }
}

/// `connections` clients, spread over `addrs` (the engines) and the accounts, until `deadline`.
/// Clients are numbered from `first` (their idempotency keys and seeds derive from it, so that
/// each phase's clients are new ones).
async fn run_clients(
    setup: &Setup,
    shared: &Arc<Shared>,
    addrs: &[std::net::SocketAddr],
    (first, connections): (usize, usize),
    deadline: Instant,
) {
    let mut clients = tokio::task::JoinSet::new();
    for n in 0..connections {
        let account = (n / 2) % setup.accounts.len();
        let addr = addrs[n % addrs.len()];
        let number = first + n;
        let client = Client {
            number,
            addr,
            key: setup.accounts[account].1.clone(),
            account,
            rng: StdRng::seed_from_u64(number as u64),
            stream: Client::connect(addr).await,
            buf: Vec::with_capacity(64 * 1024),
            shared: shared.clone(),
            own_orders: VecDeque::new(),
            keyed: VecDeque::new(),
            references: VecDeque::new(),
            unresolved: VecDeque::new(),
            sequence: 0,
        };
        clients.spawn(client.run(deadline));
    }
    while let Some(done) = clients.join_next().await {
        done.expect("client task");
    }
}

fn main() {
    let seconds: f64 = env_or("SOAK_SECONDS", 600.0);
    let connections: usize = env_or("SOAK_CONNECTIONS", 64);
    let Some(url) = common::sql::postgres_url("soak") else {
        return;
    };
    // What the engines log about failures (a 5xx says why here; sqlx's slow-statement
    // warnings left out); `RUST_LOG` for more.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,sqlx=error".into()),
        )
        .with_writer(std::io::stderr)
        .init();
    // Each engine on its own runtime, as two app instances each with its own core would be.
    let threads: usize = env_or("SOAK_INSTANCE_THREADS", 1);
    let servers = [
        runtime("instance-a", threads),
        runtime("instance-b", threads),
    ];
    let server = &servers[0];
    let client = runtime("bench-client", 1);
    let (setup, ids) = server.block_on(set_up(url));
    let addrs = [
        serve(
            &servers[0],
            commerce::axum::router(setup.engines[0].clone()),
        ),
        serve(
            &servers[1],
            commerce::axum::router(setup.engines[1].clone()),
        ),
    ];

    let (new_orders, received) = mpsc::unbounded_channel();
    let stop = Arc::new(AtomicBool::new(false));
    let moves = server.spawn(platform(setup.engines.clone(), received, stop.clone()));
    let shared = Arc::new(Shared {
        ids,
        stats: Mutex::new(Stats::default()),
        ledgers: setup.accounts.iter().map(|_| Mutex::default()).collect(),
        new_orders,
    });
    let months_from = BillingMonth::of(setup.engines[0].now());

    // The traffic report covers the whole run, scaling phases included.
    let rss_start = rss_bytes();
    let started = Instant::now();
    let scaling: f64 = env_or("SOAK_SCALING_SECONDS", 30.0);
    if scaling > 0.0 {
        // One instance, two, one, two: each arm gets half its time early and half late, so a
        // load that drifts during the run (the tables growing, the machine's other work)
        // weighs on both alike.
        let mut arms = [(0u64, 0f64); 2];
        let mut cpu = [CpuTicks::default(); 2];
        for (phase, instances) in [1, 2, 1, 2].into_iter().enumerate() {
            let before = shared.answered();
            let ticks = CpuTicks::now();
            let phase_started = Instant::now();
            client.block_on(run_clients(
                &setup,
                &shared,
                &addrs[..instances],
                ((phase + 1) * connections, connections),
                phase_started + Duration::from_secs_f64(scaling / 2.0),
            ));
            let arm = &mut arms[instances - 1];
            arm.0 += shared.answered() - before;
            arm.1 += phase_started.elapsed().as_secs_f64();
            cpu[instances - 1].add(CpuTicks::now().since(ticks));
        }
        let [one, two] = arms.map(|(answered, seconds)| answered as f64 / seconds);
        let [busy_one, busy_two] = cpu.map(|t| t.busy_share() * 100.0);
        println!(
            "scaling: {connections} connections for {scaling} s on one instance ({one:.0} req/s, the machine's CPUs {busy_one:.0}% busy) and {scaling} s over both ({two:.0} req/s, {busy_two:.0}% busy), alternating; {threads} server thread(s) each"
        );
        report::ratio(
            "two instances against one, mixed traffic (throughput)",
            two / one,
            Unit::Percent,
            Goal::AtLeast(160.0),
        );
    }

    println!(
        "soak: {seconds} s, {connections} connections over 2 engines ({} and {}), one PostgreSQL database `{DATABASE}`, {:.0}% of requests disconnected mid-request",
        addrs[0],
        addrs[1],
        DISCONNECT_SHARE * 100.0
    );
    let soak_started = Instant::now();
    client.block_on(run_clients(
        &setup,
        &shared,
        &addrs,
        (0, connections),
        soak_started + Duration::from_secs_f64(seconds),
    ));
    let elapsed = started.elapsed().as_secs_f64();
    stop.store(true, Ordering::Relaxed);
    let shared = Arc::into_inner(shared).expect("clients done");
    drop(shared.new_orders);
    let moves = server.block_on(moves).expect("platform task");
    let rss_end = rss_bytes();

    let stats = shared.stats.into_inner().expect("stats");
    let server_errors = report_traffic(&stats, elapsed, &moves);
    println!(
        "resident memory (VmRSS, whole process): {:.1} MiB when the traffic started, {:.1} MiB when it ended",
        mib(rss_start),
        mib(rss_end)
    );
    let ledgers: Vec<Ledger> = shared
        .ledgers
        .into_iter()
        .map(|l| l.into_inner().expect("ledger"))
        .collect();
    let mut months = vec![months_from];
    let month_now = BillingMonth::of(setup.engines[0].now());
    if !months.contains(&month_now) {
        months.push(month_now);
    }
    println!("reconciliation:");
    let mut failures = server.block_on(reconcile(&setup, &ledgers, &months));
    if server_errors > 0 {
        failures.push(format!("{server_errors} answers were 5xx"));
    }
    failures.extend(
        moves
            .errors
            .iter()
            .map(|e| format!("platform move failed: {e}")),
    );
    server.block_on(async {
        for store in &setup.stores {
            store.pool().close().await;
        }
        common::sql::drop_pg(&setup.url, DATABASE).await;
    });
    for server in servers {
        server.shutdown_background();
    }
    client.shutdown_background();
    println!(
        "goal (every reconciliation holds, no 5xx): {}",
        if failures.is_empty() {
            "met"
        } else {
            "NOT met"
        }
    );
    assert!(failures.is_empty(), "soak failed: {failures:#?}");
    println!("soak passed: every reconciliation holds and no 5xx");
}
