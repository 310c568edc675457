//! Cancellation conformance: requests and store operations whose futures are dropped at random
//! points, interleaved with requests that complete, must leave the store consistent and usable.
//!
//! A future can be dropped at any `.await`: a client disconnects and the server drops the
//! handler, a timeout layer fires, the application calls the store under its own timeout.
//! Each case drives a sandbox [`Harness`] with a mixed workload (catalogue and order reads,
//! `POST /orders` with and without `Idempotency-Key`, cancels, wallet reads, operator moves
//! withdrawal requests and stock adjustments)
//! from several tasks at once, drops a share of the futures after a random number of polls or
//! a random delay, and then checks, on the store itself:
//!
//! * every endpoint answers (no connection of a pool left inside a transaction);
//! * every variant's stock is the sum of its history, as before (an order, a cancellation or
//!   an adjustment dropped half-way would break it);
//! * every order has its lines and its first timeline entry;
//! * the order counts per family equal the orders listed;
//! * the wallet the store keeps equals the recomputation from the orders, and the withdrawals
//!   (pending and paid) never exceed what was earned past the hold;
//! * no `Idempotency-Key` is left in flight past its stale time;
//! * the rate window never counted more than the limit.
//!
//! [`cancellation_tests!`](crate::cancellation_tests) expands to one test per case.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::task::Poll;
use std::time::Duration as StdDuration;

use bytes::Bytes;
use chrono::Duration;
use http::{Method, Request, Response};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use serde_json::{Value, json};

use super::http::{Harness, TestResponse, build_request};
use crate::domain::keys::KeySpec;
use crate::engine::Engine;
use crate::model::*;

mod checks;
mod quotes;
mod tcp;
mod yielding;

use checks::{Baseline, assert_consistent, assert_every_endpoint_answers};
pub use quotes::quote_writes_dropped_at_any_await_are_whole_or_nothing;

/// How an operation's future is cut short.
#[derive(Debug, Clone, Copy)]
pub enum Cut {
    /// Runs to completion.
    Never,
    /// Dropped after this many polls, if it has not finished by then (each `Pending` is an
    /// `.await` that had to wait).
    AfterPolls(u32),
    /// Dropped after this long, if it has not finished by then.
    After(StdDuration),
}

impl Cut {
    /// A random cut: a third run to completion, a third stop after 1 to `max_polls` polls, a
    /// third after 0 to `max_delay`.
    pub fn random(rng: &mut impl Rng, max_polls: u32, max_delay: StdDuration) -> Self {
        match rng.random_range(0..3) {
            0 => Cut::Never,
            1 => Cut::AfterPolls(rng.random_range(1..=max_polls.max(1))),
            _ => Cut::After(StdDuration::from_micros(
                rng.random_range(0..=max_delay.as_micros().max(1) as u64),
            )),
        }
    }

    /// Runs `future` under this cut: `None` when it was dropped unfinished.
    pub async fn run<F: Future>(self, future: F) -> Option<F::Output> {
        match self {
            Cut::Never => Some(future.await),
            Cut::After(delay) => tokio::time::timeout(delay, future).await.ok(),
            Cut::AfterPolls(limit) => {
                let mut future = pin!(future);
                let mut polls = 0;
                std::future::poll_fn(move |cx| {
                    polls += 1;
                    match future.as_mut().poll(cx) {
                        Poll::Ready(output) => Poll::Ready(Some(output)),
                        Poll::Pending if polls >= limit => Poll::Ready(None),
                        Poll::Pending => Poll::Pending,
                    }
                })
                .await
            }
        }
    }
}

/// What a workload does to one engine: its keys, bodies and idempotency keys.
struct Workload {
    keys: Vec<(AccountId, String)>,
    /// Idempotency keys, each always sent with the same body by the same account's key.
    idempotency_keys: Vec<String>,
    /// A key of marketer A limited to [`LIMITED_KEY_LIMIT`] requests a minute.
    limited_key: String,
    limited_key_id: KeyId,
}

const LIMITED_KEY_LIMIT: u32 = 40;
const WORKERS: usize = 8;

impl Workload {
    async fn new(h: &Harness) -> Self {
        let op = h.engine.operator();
        let mut keys = Vec::new();
        for account in [h.fixture.marketer_a, h.fixture.marketer_b] {
            let created = op
                .create_key(account, spec(Some(1_000_000)))
                .await
                .expect("key created");
            keys.push((account, created.plaintext));
        }
        let limited = op
            .create_key(h.fixture.marketer_a, spec(Some(LIMITED_KEY_LIMIT)))
            .await
            .expect("key created");
        Self {
            keys,
            idempotency_keys: (0..12).map(|i| format!("cancel-test-{i}")).collect(),
            limited_key: limited.plaintext,
            limited_key_id: limited.key.id,
        }
    }

    /// A random request of the mix; `orders` are ids of orders seen so far.
    fn request(&self, h: &Harness, rng: &mut impl Rng, orders: &[OrderId]) -> Request<Bytes> {
        let (_, key) = &self.keys[rng.random_range(0..self.keys.len())];
        let get = |path: &str| build_request(Method::GET, Some(key), path, Bytes::new(), &[]);
        match rng.random_range(0..12) {
            0 => get("/api/v1/me"),
            1 => get("/api/v1/products?per_page=25"),
            2 => get(&format!("/api/v1/products/{}", h.fixture.featured_product)),
            3 => get("/api/v1/orders?per_page=25"),
            4 => get("/api/v1/wallet"),
            5 => build_request(
                Method::GET,
                Some(&self.limited_key),
                "/api/v1/me",
                Bytes::new(),
                &[],
            ),
            6 | 7 => {
                // The same body for one idempotency key every time: replays, not mismatches.
                let index = rng.random_range(0..self.idempotency_keys.len());
                let (_, key) = &self.keys[index % self.keys.len()];
                build_request(
                    Method::POST,
                    Some(key),
                    "/api/v1/orders",
                    order_body(h, 1 + index as i64 % 3).to_string(),
                    &[("idempotency-key", &self.idempotency_keys[index])],
                )
            }
            8 | 9 => build_request(
                Method::POST,
                Some(key),
                "/api/v1/orders",
                order_body(h, rng.random_range(1..=3)).to_string(),
                &[],
            ),
            _ => match orders.get(rng.random_range(0..orders.len().max(1))) {
                Some(id) => build_request(
                    Method::POST,
                    Some(key),
                    &format!("/api/v1/orders/{id}/cancel"),
                    json!({"reason_note": "العميل غير رأيه"}).to_string(),
                    &[],
                ),
                None => get("/api/v1/orders?per_page=5"),
            },
        }
    }
}

fn spec(rate_limit: Option<u32>) -> KeySpec {
    KeySpec {
        name: "cancellation".into(),
        abilities: Ability::ALL.to_vec(),
        expires_at: None,
        rate_limit,
    }
}

fn order_body(h: &Harness, quantity: i64) -> Value {
    json!({
        "full_name": "سارة حسن",
        "phone": "+201112223334",
        "address": "12 شارع النصر، مدينة نصر",
        "governorate_id": h.fixture.cairo,
        "shipping_option_id": h.fixture.standard_shipping,
        "lines": [
            {"variant_id": h.fixture.plain_variant, "quantity": quantity, "profit": "12.50"},
            {"variant_id": h.fixture.featured_variants[0], "quantity": 1, "profit": "3",
             "warranty_ids": [h.fixture.featured_warranties[0]]},
        ],
    })
}

fn order_id_of(response: &Response<Bytes>) -> Option<OrderId> {
    if response.status() != 201 {
        return None;
    }
    let body: Value = serde_json::from_slice(response.body()).ok()?;
    body["data"]["id"].as_i64().map(OrderId::new)
}

/// Sends one request through `send` under `cut`; records created orders and 5xx answers.
struct Tally {
    orders: std::sync::Mutex<Vec<OrderId>>,
    server_errors: AtomicU32,
    limited_allowed: AtomicU32,
    dropped: AtomicU32,
    completed: AtomicU32,
}

impl Tally {
    fn new() -> Self {
        Self {
            orders: std::sync::Mutex::new(Vec::new()),
            server_errors: AtomicU32::new(0),
            limited_allowed: AtomicU32::new(0),
            dropped: AtomicU32::new(0),
            completed: AtomicU32::new(0),
        }
    }

    fn orders(&self) -> Vec<OrderId> {
        self.orders
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone()
    }

    fn record(&self, limited: bool, response: Option<Response<Bytes>>) {
        let Some(response) = response else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            return;
        };
        self.completed.fetch_add(1, Ordering::Relaxed);
        if response.status().is_server_error() {
            self.server_errors.fetch_add(1, Ordering::Relaxed);
        }
        if limited && response.status() == 200 {
            self.limited_allowed.fetch_add(1, Ordering::Relaxed);
        }
        if let Some(id) = order_id_of(&response) {
            self.orders
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .push(id);
        }
    }
}

/// How a request reaches the engine in a storm.
#[derive(Clone, Copy, PartialEq)]
enum Path {
    /// In the caller's task: a drop cuts the store work short.
    Inline,
    /// Through [`Engine::handle`]: a drop hands the rest of the request to the runtime.
    Handle,
    /// Through [`Engine::serve`], as the adapters call it: a drop in the head phase or the
    /// body phase hands the rest of that phase to the runtime.
    Serve,
}

async fn send(engine: &Engine, path: Path, request: Request<Bytes>) -> Response<Bytes> {
    match path {
        Path::Inline => {
            let id = crate::render::request_id::RequestId::of(request.headers());
            engine.handle_here(request, id).await
        }
        Path::Handle => engine.handle(request).await,
        Path::Serve => engine.serve(request.map(http_body_util::Full::new)).await,
    }
}

/// Runs `requests` requests of the mix from [`WORKERS`] tasks, each cut at random, plus a task
/// moving orders along their lifecycle through the operator API, also cut at random.
async fn storm(h: &Harness, workload: &Arc<Workload>, path: Path, requests: usize) -> Arc<Tally> {
    let tally = Arc::new(Tally::new());
    // Measure a request of the mix to scale the random delays.
    let started = std::time::Instant::now();
    let sample = build_request(
        Method::POST,
        Some(&workload.keys[0].1),
        "/api/v1/orders",
        order_body(h, 1).to_string(),
        &[],
    );
    tally.record(false, Some(send(&h.engine, path, sample).await));
    let max_delay = started.elapsed() * 2;
    // Through the engine, each store operation yields first: a request takes several polls
    // even on a store that never waits, so that drops land inside it.
    let engine = match path {
        Path::Inline => h.engine.clone(),
        Path::Handle | Path::Serve => yielding::engine(h),
    };
    let h = Arc::new(h.clone_handle());
    let mut tasks = Vec::new();
    for worker in 0..WORKERS {
        let (h, workload, tally) = (h.clone(), workload.clone(), tally.clone());
        let engine = engine.clone();
        // Half the workers of a storm through `handle` go through the adapters' `serve`.
        let path = match path {
            Path::Handle if worker % 2 == 1 => Path::Serve,
            path => path,
        };
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::from_rng(&mut rand::rng());
            for _ in (worker..requests).step_by(WORKERS) {
                let orders = tally.orders();
                let request = workload.request(&h, &mut rng, &orders);
                let limited = request
                    .headers()
                    .get("authorization")
                    .is_some_and(|v| v.as_bytes().ends_with(workload.limited_key.as_bytes()));
                // Inline, a `Pending` is a wait of the store; through the engine also each
                // store operation's yield (a request makes a few).
                let max_polls = match path {
                    Path::Inline => 12,
                    Path::Handle | Path::Serve => 6,
                };
                let cut = Cut::random(&mut rng, max_polls, max_delay);
                let response = cut.run(send(&engine, path, request)).await;
                tally.record(limited, response);
            }
        }));
    }
    {
        let (h, tally) = (h.clone(), tally.clone());
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::from_rng(&mut rand::rng());
            let op = h.engine.operator();
            for _ in 0..requests / 8 {
                let orders = tally.orders();
                let Some(id) = orders.get(rng.random_range(0..orders.len().max(1))) else {
                    tokio::task::yield_now().await;
                    continue;
                };
                let to = [
                    OrderStatus::Confirmed,
                    OrderStatus::Shipped,
                    OrderStatus::Delivered,
                ][rng.random_range(0..3)];
                let cut = Cut::random(&mut rng, 8, max_delay);
                // Refusals (a move the lifecycle forbids) are expected; only drops matter.
                let _ = cut.run(op.move_order(*id, to, None)).await;
                if rng.random_range(0..3) == 0 {
                    // Stock received or found damaged: a dropped adjustment moves the stock
                    // and keeps its record together, or does neither (checked by the stock
                    // totals, which count the kept adjustments).
                    let variant = h.fixture.featured_variants[rng.random_range(0..2)];
                    let new = match rng.random_range(0..3) {
                        0 => NewStockAdjustment::builder()
                            .variant_id(variant)
                            .delta(-1)
                            .reason(StockReason::Damaged)
                            .build(),
                        n => NewStockAdjustment::builder()
                            .variant_id(variant)
                            .delta(n)
                            .reason(StockReason::Received)
                            .build(),
                    };
                    let cut = Cut::random(&mut rng, 8, max_delay);
                    let _ = cut.run(op.adjust_stock(new)).await;
                }
                if rng.random_range(0..4) == 0 {
                    // Marketer A has a ready balance: some requests pass, later ones are
                    // refused; a dropped one is written whole or not at all.
                    let minimum = h.engine.config().withdrawal_minimum;
                    let new = NewWithdrawal::builder()
                        .account_id(h.fixture.marketer_a)
                        .amount(minimum)
                        .wallet_number("01012345678".to_owned())
                        .wallet_description("محفظة".to_owned())
                        .build();
                    let cut = Cut::random(&mut rng, 8, max_delay);
                    let _ = cut.run(op.request_withdrawal(new)).await;
                }
            }
        }));
    }
    for task in tasks {
        task.await.expect("storm task finished");
    }
    tally
}

/// Requests handled in the caller's task (so a drop cuts the store operations themselves
/// short, at any `.await`) leave the store consistent and every endpoint answering.
pub async fn requests_dropped_at_any_await_leave_the_store_consistent(h: &Harness) {
    let workload = Arc::new(Workload::new(h).await);
    let baseline = Baseline::take(h).await;
    let tally = storm(h, &workload, Path::Inline, 1200).await;
    // A store that never waits (the in-memory one) finishes within one poll: nothing to drop.
    eprintln!(
        "cancellation: {} requests dropped, {} answered",
        tally.dropped.load(Ordering::Relaxed),
        tally.completed.load(Ordering::Relaxed)
    );
    assert!(tally.completed.load(Ordering::Relaxed) > 100, "few answers");
    assert_eq!(
        tally.server_errors.load(Ordering::Relaxed),
        0,
        "5xx answers"
    );
    assert_every_endpoint_answers(h, &workload.keys[0].1).await;
    assert_consistent(h, &baseline).await;
    assert_rate_window_exact(h, &workload, &tally).await;
    // Past the stale time, no key is still in flight: each answers 201 (first or replay).
    h.clock
        .advance(h.engine.config().idempotency_stale_after + Duration::seconds(1));
    assert_no_key_in_flight(h, &workload).await;
    assert_consistent(h, &baseline).await;
}

/// Requests through [`Engine::handle`] (and [`Engine::serve`]) whose callers stop waiting at random points are
/// completed anyway: once they are done, no key is in flight even before its stale time, and
/// the store is consistent.
pub async fn requests_abandoned_by_their_callers_are_completed(h: &Harness) {
    let workload = Arc::new(Workload::new(h).await);
    let baseline = Baseline::take(h).await;
    let tally = storm(h, &workload, Path::Handle, 800).await;
    let dropped = tally.dropped.load(Ordering::Relaxed);
    assert!(dropped > 50, "only {dropped} drops");
    assert_eq!(
        tally.server_errors.load(Ordering::Relaxed),
        0,
        "5xx answers"
    );
    assert_every_endpoint_answers(h, &workload.keys[0].1).await;
    settle_in_flight(h, &workload).await;
    assert_consistent(h, &baseline).await;
    assert_rate_window_exact(h, &workload, &tally).await;
}

/// Real HTTP clients that disconnect: requests of the mix sent over TCP to a server at `addr`
/// that serves `h.engine` (through any framework), a share of them dropped after a random
/// delay (part-way through writing the request, or before the answer is read), interleaved
/// with requests read to the end. Then, as in the report that found the pool poisoning:
/// 60 requests one after the other, none a 5xx; and the store is consistent.
pub async fn clients_disconnecting_mid_request(h: &Harness, addr: std::net::SocketAddr) {
    let workload = Arc::new(Workload::new(h).await);
    let baseline = Baseline::take(h).await;
    let started = std::time::Instant::now();
    let sample = build_request(
        Method::GET,
        Some(&workload.keys[0].1),
        "/api/v1/orders?per_page=25",
        Bytes::new(),
        &[],
    );
    let (status, _) = tcp::exchange(addr, &sample).await;
    assert_eq!(status, 200, "the server answers");
    let max_delay = started.elapsed() * 2;
    let tally = Arc::new(Tally::new());
    let h = Arc::new(h.clone_handle());
    let tasks: Vec<_> = (0..WORKERS * 2)
        .map(|worker| {
            let (h, workload, tally) = (h.clone(), workload.clone(), tally.clone());
            tokio::spawn(async move {
                let mut rng = StdRng::from_rng(&mut rand::rng());
                for _ in (worker..600).step_by(WORKERS * 2) {
                    let request = workload.request(&h, &mut rng, &tally.orders());
                    if rng.random_bool(0.5) {
                        let delay = rng.random_range(0..=max_delay.as_micros() as u64);
                        let partial = rng.random_bool(0.3);
                        tcp::abandon(addr, &request, partial, StdDuration::from_micros(delay))
                            .await;
                        tally.dropped.fetch_add(1, Ordering::Relaxed);
                    } else {
                        let (status, body) = tcp::exchange(addr, &request).await;
                        let response = Response::builder()
                            .status(status)
                            .body(body)
                            .expect("response");
                        tally.record(false, Some(response));
                    }
                }
            })
        })
        .collect();
    for task in tasks {
        task.await.expect("client task finished");
    }
    assert_eq!(
        tally.server_errors.load(Ordering::Relaxed),
        0,
        "5xx answers"
    );
    let mut server_errors = 0;
    for i in 0..60 {
        let path = ["/api/v1/orders?per_page=25", "/api/v1/me", "/api/v1/wallet"][i % 3];
        let request = build_request(
            Method::GET,
            Some(&workload.keys[0].1),
            path,
            Bytes::new(),
            &[],
        );
        let (status, _) = tcp::exchange(addr, &request).await;
        if status >= 500 {
            server_errors += 1;
        }
    }
    assert_eq!(server_errors, 0, "of 60 requests after the disconnects");
    settle_in_flight(&h, &workload).await;
    assert_consistent(&h, &baseline).await;
}

/// Each idempotency key of the workload, sent again, answers 201 (its order, first or replay).
async fn assert_no_key_in_flight(h: &Harness, workload: &Workload) {
    for (index, key) in workload.idempotency_keys.iter().enumerate() {
        let r = resend(h, workload, index, key).await;
        assert_eq!(
            r.status,
            201,
            "key {key}: {}",
            String::from_utf8_lossy(&r.body)
        );
    }
}

/// Waits (up to 20 s) until the engine has finished the requests whose callers left: every
/// idempotency key then answers 201 without moving the clock.
async fn settle_in_flight(h: &Harness, workload: &Workload) {
    for (index, key) in workload.idempotency_keys.iter().enumerate() {
        let mut last = None;
        for _ in 0..200 {
            let r = resend(h, workload, index, key).await;
            if r.status == 201 {
                last = None;
                break;
            }
            last = Some(r);
            tokio::time::sleep(StdDuration::from_millis(100)).await;
        }
        if let Some(r) = last {
            panic!(
                "key {key} still answers {}: {}",
                r.status,
                String::from_utf8_lossy(&r.body)
            );
        }
    }
}

async fn resend(h: &Harness, workload: &Workload, index: usize, key: &str) -> TestResponse {
    let (_, plaintext) = &workload.keys[index % workload.keys.len()];
    let body = order_body(h, 1 + index as i64 % 3);
    h.post_idempotent(plaintext, key, &body).await
}

/// The limited key was allowed at most its limit in this minute, dropped requests included:
/// the answers seen plus what the window still allows never exceed the limit, and the window
/// ends exactly full.
async fn assert_rate_window_exact(h: &Harness, workload: &Workload, tally: &Tally) {
    let window = RateWindow::containing(h.clock.now_utc());
    let seen = tally.limited_allowed.load(Ordering::Relaxed);
    let mut more = 0;
    let last = loop {
        let hit = h
            .engine
            .store()
            .hit_rate_limit(workload.limited_key_id, window, LIMITED_KEY_LIMIT)
            .await
            .expect("rate limit answers");
        if !hit.allowed {
            break hit;
        }
        more += 1;
        assert!(more <= LIMITED_KEY_LIMIT, "window never fills");
    };
    assert!(
        seen + more <= LIMITED_KEY_LIMIT,
        "{seen} answered + {more} more > limit {LIMITED_KEY_LIMIT}"
    );
    assert_eq!(last.used, LIMITED_KEY_LIMIT, "window ends full");
}

/// Expands to one `#[tokio::test]` per cancellation case; `$harness` is an expression
/// evaluating to a future of an [`IntoHarness`](super::http::IntoHarness), as for
/// [`http_conformance_tests!`](crate::http_conformance_tests). Attributes given before it
/// (e.g. `#[ignore]`) go on every test.
#[macro_export]
macro_rules! cancellation_tests {
    (@cases $attrs:tt $harness:expr; $($case:ident),* $(,)?) => {
        $( $crate::cancellation_tests!(@case $attrs $harness; $case); )*
    };
    (@case [$(#[$meta:meta])*] $harness:expr; $case:ident) => {
        $(#[$meta])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $case() {
            $crate::testing::http::run_case($harness.await, |harness| async move {
                $crate::testing::cancellation::$case(&harness).await
            })
            .await;
        }
    };
    (@attrs $attrs:tt $harness:expr) => {
        $crate::cancellation_tests!(@cases $attrs $harness;
            requests_dropped_at_any_await_leave_the_store_consistent,
            requests_abandoned_by_their_callers_are_completed,
            quote_writes_dropped_at_any_await_are_whole_or_nothing,
        );
    };
    ($($input:tt)+) => {
        $crate::__gather_attrs!([$crate::cancellation_tests] [] $($input)+);
    };
}
