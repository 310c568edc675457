//! Soak: two engines on one PostgreSQL database under mixed traffic for a fixed time, with
//! clients that disconnect mid-request and the platform moving orders meanwhile, then a
//! reconciliation of everything the run did against what the store kept. Stops by itself.
//!
//! ```text
//! COMMERCE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo bench --features sqlx --bench soak
//! ```
//!
//! Set-up: a fresh database `commerce_soak` on the server of `COMMERCE_TEST_POSTGRES_URL`
//! (dropped at the end), migrated once and seeded once with the sandbox through the first
//! engine; two engines, each on its own `PgStore` (its own pool of 10), each served by axum on
//! its own `127.0.0.1` port. Two fresh marketer accounts, each with a key allowed 1,000,000
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

mod common;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use commerce::model::*;
use commerce::operator::Conflict;
use commerce::operator::KeySpec;
use commerce::sqlx::PgStore;
use commerce::store::Store;
use commerce::{Engine, OperatorError, cairo_month, sandbox};
use common::http::{ResponseHead, raw_request_as, read_response, serve};
use common::{env_or, mib, rss_bytes, runtime};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use tokio::sync::mpsc;

/// The database the run creates and drops.
const DATABASE: &str = "commerce_soak";
/// Share of requests that disconnect mid-request.
const DISCONNECT_SHARE: f64 = 0.10;
/// How long a disconnected order waits before the client asks again with its key.
const RESOLVE_AFTER: Duration = Duration::from_secs(1);
/// How many times a client asks again (a 409 while the first is in flight) before giving up.
const RESOLVE_ATTEMPTS: u32 = 60;

/// Latencies in microseconds, in buckets of about 3% (32 per power of two): constant memory
/// however long the run.
#[derive(Clone)]
struct Histogram {
    counts: Vec<u64>,
    total: u64,
}

impl Histogram {
    const SUB_BITS: u32 = 5;
    const SUB: usize = 1 << Self::SUB_BITS;

    fn new() -> Self {
        Self {
            counts: vec![0; 64 * Self::SUB],
            total: 0,
        }
    }

    fn index(value: u64) -> usize {
        let exp = 63 - value.max(1).leading_zeros();
        if exp < Self::SUB_BITS {
            return value as usize;
        }
        let mantissa = (value >> (exp - Self::SUB_BITS)) as usize - Self::SUB;
        (exp - Self::SUB_BITS + 1) as usize * Self::SUB + mantissa
    }

    /// The smallest value of bucket `index`.
    fn lowest(index: usize) -> u64 {
        if index < Self::SUB {
            return index as u64;
        }
        let exp = (index / Self::SUB - 1) as u32 + Self::SUB_BITS;
        ((index % Self::SUB + Self::SUB) as u64) << (exp - Self::SUB_BITS)
    }

    fn record(&mut self, micros: u64) {
        self.counts[Self::index(micros)] += 1;
        self.total += 1;
    }

    /// The `q` quantile in microseconds (the lowest value of its bucket).
    fn quantile(&self, q: f64) -> u64 {
        let rank = ((self.total as f64 * q).ceil() as u64).max(1);
        let mut seen = 0;
        for (index, count) in self.counts.iter().enumerate() {
            seen += count;
            if seen >= rank {
                return Self::lowest(index);
            }
        }
        0
    }
}

/// What the clients send.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Products,
    Product,
    Categories,
    ShippingOptions,
    Quote,
    Order,
    KeyedOrder,
    Resolve,
    Cancel,
    Orders,
    Wallet,
    Me,
}

impl Kind {
    /// The request kinds drawn each turn, with their weights (`Resolve` is not drawn: it is
    /// sent for each disconnected order).
    const MIX: [(Kind, u32); 11] = [
        (Kind::Products, 14),
        (Kind::Product, 10),
        (Kind::Categories, 7),
        (Kind::ShippingOptions, 7),
        (Kind::Quote, 8),
        (Kind::Order, 12),
        (Kind::KeyedOrder, 12),
        (Kind::Cancel, 8),
        (Kind::Orders, 8),
        (Kind::Wallet, 7),
        (Kind::Me, 7),
    ];

    fn label(self) -> &'static str {
        match self {
            Kind::Products => "GET /products?per_page=25",
            Kind::Product => "GET /products/{id}",
            Kind::Categories => "GET /categories",
            Kind::ShippingOptions => "GET /shipping/options",
            Kind::Quote => "POST /shipping/quote",
            Kind::Order => "POST /orders",
            Kind::KeyedOrder => "POST /orders (Idempotency-Key)",
            Kind::Resolve => "POST /orders (key again after disconnect)",
            Kind::Cancel => "POST /orders/{id}/cancel",
            Kind::Orders => "GET /orders?per_page=25",
            Kind::Wallet => "GET /wallet",
            Kind::Me => "GET /me",
        }
    }

    fn draw(rng: &mut StdRng) -> Kind {
        let total: u32 = Self::MIX.iter().map(|(_, w)| w).sum();
        let mut roll = rng.random_range(0..total);
        for (kind, weight) in Self::MIX {
            if roll < weight {
                return kind;
            }
            roll -= weight;
        }
        Kind::Me
    }
}

/// What the clients saw, all connections together.
#[derive(Default)]
struct Stats {
    latency: BTreeMap<&'static str, Histogram>,
    statuses: BTreeMap<(&'static str, u16), u64>,
    disconnects: BTreeMap<&'static str, u64>,
    io_errors: u64,
}

impl Stats {
    fn record(&mut self, kind: Kind, status: u16, micros: u64) {
        self.latency
            .entry(kind.label())
            .or_insert_with(Histogram::new)
            .record(micros);
        *self.statuses.entry((kind.label(), status)).or_default() += 1;
    }
}

/// What the clients learnt about one account's orders.
#[derive(Default)]
struct Ledger {
    /// Every order id answered 201 (first answers and replays alike, once).
    created: HashSet<OrderId>,
    /// Answers marked `Idempotent-Replayed: true`.
    replays: u64,
    /// Replays whose order differs from the key's first answer (must stay 0).
    replay_mismatches: u64,
    /// Cancels answered 200.
    cancels_ok: u64,
    /// Cancels disconnected (outcome unknown to the client).
    cancels_disconnected: u64,
    /// Disconnected orders still without a final answer at the end (must stay 0).
    unresolved: u64,
}

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

/// A disconnected order, to be asked for again with its key.
struct Pending {
    due: Instant,
    key: String,
    body: Bytes,
    attempts: u32,
}

/// One client connection and what it remembers.
struct Client {
    number: usize,
    addr: SocketAddr,
    key: String,
    account: usize,
    rng: StdRng,
    stream: TcpStream,
    buf: Vec<u8>,
    shared: Arc<Shared>,
    /// Its latest orders, candidates for a cancel.
    own_orders: VecDeque<OrderId>,
    /// Its latest keyed orders answered 201: (key, body, order), candidates for a replay.
    keyed: VecDeque<(String, Bytes, OrderId)>,
    /// Its latest external references, candidates for a duplicate.
    references: VecDeque<String>,
    unresolved: VecDeque<Pending>,
    sequence: u64,
}

/// Pushes `item` on a queue kept to its latest `cap` items.
fn push_capped<T>(queue: &mut VecDeque<T>, item: T, cap: usize) {
    if queue.len() == cap {
        queue.pop_front();
    }
    queue.push_back(item);
}

impl Client {
    async fn connect(addr: SocketAddr) -> TcpStream {
        let stream = TcpStream::connect(addr).await.expect("connects");
        stream.set_nodelay(true).expect("nodelay");
        stream
    }

    fn next_name(&mut self, prefix: &str) -> String {
        self.sequence += 1;
        format!("{prefix}-{}-{}", self.number, self.sequence)
    }

    fn order_body(&mut self, keyed: bool) -> Bytes {
        let ids = &self.shared.ids;
        let roll = self.rng.random_range(0..100);
        let (variant, quantity, warranties) = match roll {
            0..=2 => (ids.sold_out, 1, vec![]),
            3..=12 => (ids.featured, 1, vec![ids.warranty]),
            _ => (ids.plain, self.rng.random_range(1..=3), vec![]),
        };
        let profit = ["40.00", "55.50", "12.25"][self.rng.random_range(0..3)];
        let mut body = json!({
            "full_name": "سارة حسن",
            "phone": if roll == 99 { "12345" } else { "+201112223334" },
            "address": "12 شارع النصر، مدينة نصر",
            "governorate_id": ids.cairo,
            "shipping_option_id": ids.shipping,
            "lines": [{
                "variant_id": variant,
                "quantity": quantity,
                "profit": profit,
                "warranty_ids": warranties,
            }],
        });
        let repeat = !keyed && !self.references.is_empty() && self.rng.random_bool(0.02);
        let reference = if repeat {
            let at = self.rng.random_range(0..self.references.len());
            Some(self.references[at].clone())
        } else if self.rng.random_bool(0.3) {
            let reference = self.next_name("ref");
            // Only unkeyed orders' references are repeated: a keyed order asked for again
            // after a disconnect must not find its reference taken by another order.
            if !keyed {
                push_capped(&mut self.references, reference.clone(), 16);
            }
            Some(reference)
        } else {
            None
        };
        if let Some(reference) = reference {
            body["external_reference"] = json!(reference);
        }
        Bytes::from(serde_json::to_vec(&body).expect("json"))
    }

    /// The next request of `kind`: (request bytes, idempotency key and body of an order).
    fn request(
        &mut self,
        kind: Kind,
        disconnecting: bool,
    ) -> (Kind, Bytes, Option<(String, Bytes)>) {
        let ids = &self.shared.ids;
        let get = |path: &str| raw_request_as("GET", path, &self.key, &[], b"");
        let request = match kind {
            Kind::Products => get("/api/v1/products?per_page=25"),
            Kind::Product => {
                let id = if self.rng.random_bool(0.05) {
                    ids.stopped
                } else {
                    ids.products[self.rng.random_range(0..ids.products.len())]
                };
                get(&format!("/api/v1/products/{id}"))
            }
            Kind::Categories => get("/api/v1/categories"),
            Kind::ShippingOptions => get("/api/v1/shipping/options"),
            Kind::Quote => {
                let body = json!({
                    "shipping_option_id": ids.shipping,
                    "governorate_id": ids.cairo,
                    "lines": [{"variant_id": ids.featured, "quantity": 2, "profit": "50.01",
                               "warranty_ids": [ids.warranty]}],
                });
                let body = serde_json::to_vec(&body).expect("json");
                raw_request_as("POST", "/api/v1/shipping/quote", &self.key, &[], &body)
            }
            Kind::Orders => get("/api/v1/orders?per_page=25"),
            Kind::Wallet => get("/api/v1/wallet"),
            Kind::Me => get("/api/v1/me"),
            Kind::Cancel => match self.own_orders.pop_front() {
                Some(id) => raw_request_as(
                    "POST",
                    &format!("/api/v1/orders/{id}/cancel"),
                    &self.key,
                    &[],
                    br#"{"reason_note":"soak"}"#,
                ),
                None => return self.request(Kind::Orders, disconnecting),
            },
            Kind::Order | Kind::KeyedOrder | Kind::Resolve => {
                let keyed = kind != Kind::Order || disconnecting;
                let replay = keyed && !disconnecting && self.rng.random_bool(0.3);
                let (key, body) = if replay && !self.keyed.is_empty() {
                    let at = self.rng.random_range(0..self.keyed.len());
                    let (key, body, _) = &self.keyed[at];
                    (Some(key.clone()), body.clone())
                } else {
                    let key = keyed.then(|| self.next_name("soak"));
                    (key, self.order_body(keyed))
                };
                let headers: Vec<(&str, &str)> = key
                    .as_deref()
                    .map(|k| vec![("idempotency-key", k)])
                    .unwrap_or_default();
                let request = raw_request_as("POST", "/api/v1/orders", &self.key, &headers, &body);
                let kind = if keyed { Kind::KeyedOrder } else { Kind::Order };
                return (kind, request, key.map(|k| (k, body)));
            }
        };
        (kind, request, None)
    }

    /// Sends `request` on the client's connection; records the answer.
    async fn send(&mut self, kind: Kind, request: &[u8]) -> Option<ResponseHead> {
        let started = Instant::now();
        let answer = async {
            self.stream.write_all(request).await?;
            read_response(&mut self.stream, &mut self.buf).await
        }
        .await;
        let micros = started.elapsed().as_micros() as u64;
        match answer {
            Ok(head) => {
                self.shared
                    .stats
                    .lock()
                    .expect("stats")
                    .record(kind, head.status, micros);
                if head.status == 201 {
                    self.created(head);
                }
                Some(head)
            }
            Err(_) => {
                self.shared.stats.lock().expect("stats").io_errors += 1;
                self.stream = Self::connect(self.addr).await;
                None
            }
        }
    }

    /// Books the order of the 201 just read.
    fn created(&mut self, head: ResponseHead) {
        let replayed = head.header(&self.buf, "idempotent-replayed") == Some("true");
        let id = self.answered_id(head).expect("a 201 names its order");
        let mut ledger = self.shared.ledgers[self.account].lock().expect("ledger");
        ledger.created.insert(id);
        if replayed {
            ledger.replays += 1;
        } else {
            drop(ledger);
            push_capped(&mut self.own_orders, id, 256);
            // The platform task ends after the clients; a closed channel only means it stopped.
            let _ = self.shared.new_orders.send(id);
        }
    }

    /// The order id in the body of the answer just read.
    fn answered_id(&self, head: ResponseHead) -> Option<OrderId> {
        let body: Value = serde_json::from_slice(head.body(&self.buf)).ok()?;
        body["data"]["id"].as_i64().map(OrderId)
    }

    /// Writes all or half of `request` on a new connection and drops it 0–20 ms later.
    async fn disconnect(&mut self, kind: Kind, request: &[u8]) {
        let mut stream = Self::connect(self.addr).await;
        let upto = if self.rng.random_bool(0.5) {
            request.len()
        } else {
            request.len() / 2
        };
        // The server may already have closed its side: nothing to learn from that here.
        let _ = stream.write_all(&request[..upto]).await;
        tokio::time::sleep(Duration::from_millis(self.rng.random_range(0..20))).await;
        drop(stream);
        *self
            .shared
            .stats
            .lock()
            .expect("stats")
            .disconnects
            .entry(kind.label())
            .or_default() += 1;
    }

    /// One turn: a request drawn from the mix, sent or disconnected.
    async fn turn(&mut self) {
        let drawn = Kind::draw(&mut self.rng);
        let disconnecting = self.rng.random_bool(DISCONNECT_SHARE);
        let (kind, request, keyed) = self.request(drawn, disconnecting);
        if disconnecting {
            self.disconnect(kind, &request).await;
            if let Some((key, body)) = keyed {
                self.unresolved.push_back(Pending {
                    due: Instant::now() + RESOLVE_AFTER,
                    key,
                    body,
                    attempts: 0,
                });
            }
            if kind == Kind::Cancel {
                self.shared.ledgers[self.account]
                    .lock()
                    .expect("ledger")
                    .cancels_disconnected += 1;
            }
            return;
        }
        let answer = self.send(kind, &request).await;
        match (kind, answer.map(|head| (head.status, head))) {
            (Kind::Cancel, Some((200, _))) => {
                self.shared.ledgers[self.account]
                    .lock()
                    .expect("ledger")
                    .cancels_ok += 1;
            }
            (Kind::KeyedOrder, Some((201, head))) => self.remember_key(keyed, head),
            _ => {}
        }
    }

    /// Keeps a keyed order answered 201 for replays; counts a replay naming another order.
    fn remember_key(&mut self, keyed: Option<(String, Bytes)>, head: ResponseHead) {
        let (Some((key, body)), Some(id)) = (keyed, self.answered_id(head)) else {
            return;
        };
        match self.keyed.iter().find(|(k, _, _)| *k == key) {
            Some((_, _, first)) if *first != id => {
                self.shared.ledgers[self.account]
                    .lock()
                    .expect("ledger")
                    .replay_mismatches += 1;
            }
            Some(_) => {}
            None => push_capped(&mut self.keyed, (key, body, id), 64),
        }
    }

    /// Asks again for the oldest disconnected order, with its key: a 409 (still in flight)
    /// puts it back; any other answer is final.
    async fn resolve(&mut self) {
        let Some(mut pending) = self.unresolved.pop_front() else {
            return;
        };
        let headers = [("idempotency-key", pending.key.as_str())];
        let request = raw_request_as("POST", "/api/v1/orders", &self.key, &headers, &pending.body);
        let answer = self.send(Kind::Resolve, &request).await;
        if answer.is_none_or(|head| head.status == 409) {
            pending.attempts += 1;
            if pending.attempts >= RESOLVE_ATTEMPTS {
                self.shared.ledgers[self.account]
                    .lock()
                    .expect("ledger")
                    .unresolved += 1;
            } else {
                pending.due = Instant::now() + Duration::from_millis(250);
                self.unresolved.push_back(pending);
            }
        }
    }

    /// Turns until `deadline`, asking again for disconnected orders as they fall due; then
    /// asks for the ones left.
    async fn run(mut self, deadline: Instant) {
        while Instant::now() < deadline {
            if self
                .unresolved
                .front()
                .is_some_and(|p| p.due <= Instant::now())
            {
                self.resolve().await;
            } else {
                self.turn().await;
            }
        }
        while let Some(due) = self.unresolved.front().map(|p| p.due) {
            tokio::time::sleep_until(due.into()).await;
            self.resolve().await;
        }
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
        let patch = VariantPatch::default().set_available(stock);
        operator
            .update_variant(variant, patch)
            .await
            .expect("stock set");
    }
    let mut accounts = Vec::new();
    for name in ["soak-1", "soak-2"] {
        let account = operator
            .create_account(
                NewAccount::marketer(
                    name,
                    format!("متجر {name}"),
                    format!("{name}@example.com"),
                    "01000000000",
                )
                .with_states(AccountState::Active, ApiStatus::Approved),
            )
            .await
            .expect("account created");
        let key = operator
            .create_key(
                account.id,
                KeySpec::new(
                    name,
                    [
                        Ability::CatalogRead,
                        Ability::OrdersRead,
                        Ability::OrdersWrite,
                        Ability::WalletRead,
                    ],
                )
                .with_rate_limit(1_000_000),
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

/// Checks what the store kept against what the run did; returns the failures.
async fn reconcile(setup: &Setup, ledgers: &[Ledger], months: &[String]) -> Vec<String> {
    let engine = &setup.engines[0];
    let store = &**engine.store();
    let mut failures = Vec::new();
    let mut check = |ok: bool, line: String| {
        println!("  {} {line}", if ok { "ok  " } else { "FAIL" });
        if !ok {
            failures.push(line);
        }
    };
    let mut reserved: HashMap<VariantId, i64> = HashMap::new();
    for ((account, _), ledger) in setup.accounts.iter().zip(ledgers) {
        let orders = common::all_orders_of(store, *account).await;
        let stored: HashSet<OrderId> = orders.iter().map(|o| o.id).collect();
        check(
            stored == ledger.created,
            format!(
                "account {account}: orders answered 201 (distinct) {} = orders stored {} ({} replays; {} answered but not stored, {} stored but never answered)",
                ledger.created.len(),
                stored.len(),
                ledger.replays,
                ledger.created.difference(&stored).count(),
                stored.difference(&ledger.created).count(),
            ),
        );
        check(
            ledger.replay_mismatches == 0 && ledger.unresolved == 0,
            format!(
                "account {account}: replays naming another order {}, disconnected orders never resolved {}",
                ledger.replay_mismatches, ledger.unresolved
            ),
        );
        for order in &orders {
            if order.status.family() != Family::Cancelled {
                for line in &order.lines {
                    *reserved.entry(line.variant_id).or_default() += line.quantity;
                }
            }
        }
        let cancelled = orders
            .iter()
            .filter(|o| o.status == OrderStatus::RejectedByMarketer)
            .count() as u64;
        check(
            (ledger.cancels_ok..=ledger.cancels_ok + ledger.cancels_disconnected)
                .contains(&cancelled),
            format!(
                "account {account}: cancels answered 200 {} <= orders rejected_by_marketer {cancelled} <= those + disconnected cancels {}",
                ledger.cancels_ok, ledger.cancels_disconnected
            ),
        );
        let mut metered = 0;
        for month in months {
            metered += engine
                .operator()
                .meter(*account, month)
                .await
                .expect("meter read")
                .order_operations;
        }
        let api_orders = stored.len() as u64;
        check(
            metered == api_orders + cancelled,
            format!(
                "account {account}: meter order operations {metered} = API orders {api_orders} + API cancels {cancelled}"
            ),
        );
        let (served, recomputed) = common::wallet_and_recomputation(engine, *account).await;
        check(
            served == recomputed,
            format!(
                "account {account}: wallet served = recomputed from {} orders (expected {}, held {}, ready {}, commission {}){}",
                orders.len(),
                served.expected,
                served.held,
                served.ready,
                served.total_commission,
                if served == recomputed {
                    String::new()
                } else {
                    format!("; recomputed: {recomputed:?}; served: {served:?}")
                }
            ),
        );
    }
    for (variant, initial) in &setup.initial_stock {
        let now = available(store, *variant).await;
        let held = reserved.get(variant).copied().unwrap_or(0);
        check(
            now + held == *initial,
            format!("variant {variant}: stock {now} + reserved {held} = initial {initial}"),
        );
    }
    let (mismatches, compared) = common::sql::counter_mismatches(setup.stores[0].pool()).await;
    check(
        mismatches.is_empty(),
        format!(
            "order counters = COUNT(*) (and earnings sums) per account and family: {compared} rows compared, {} differ {}",
            mismatches.len(),
            mismatches.join(" ")
        ),
    );
    failures
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
    let server = runtime(2);
    let client = runtime(1);
    let (setup, ids) = server.block_on(set_up(url));
    let addrs = [
        serve(&server, commerce::axum::router(setup.engines[0].clone())),
        serve(&server, commerce::axum::router(setup.engines[1].clone())),
    ];
    println!(
        "soak: {seconds} s, {connections} connections over 2 engines ({} and {}), one PostgreSQL database `{DATABASE}`, {:.0}% of requests disconnected mid-request",
        addrs[0],
        addrs[1],
        DISCONNECT_SHARE * 100.0
    );

    let (new_orders, received) = mpsc::unbounded_channel();
    let stop = Arc::new(AtomicBool::new(false));
    let moves = server.spawn(platform(setup.engines.clone(), received, stop.clone()));
    let shared = Arc::new(Shared {
        ids,
        stats: Mutex::new(Stats::default()),
        ledgers: setup.accounts.iter().map(|_| Mutex::default()).collect(),
        new_orders,
    });
    let months_from = cairo_month(setup.engines[0].now());
    let rss_start = rss_bytes();
    let started = Instant::now();
    let deadline = started + Duration::from_secs_f64(seconds);
    client.block_on(async {
        let mut clients = tokio::task::JoinSet::new();
        for number in 0..connections {
            let (_, key) = &setup.accounts[(number / 2) % setup.accounts.len()];
            let addr = addrs[number % 2];
            let client = Client {
                number,
                addr,
                key: key.clone(),
                account: (number / 2) % setup.accounts.len(),
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
    });
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
    let month_now = cairo_month(setup.engines[0].now());
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
    server.shutdown_background();
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
