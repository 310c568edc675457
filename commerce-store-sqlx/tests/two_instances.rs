//! Two instances on one PostgreSQL database: two [`Engine`]s, each with its own `PgStore` and
//! pool on the same fresh schema and the same clock, answering concurrent requests split
//! between them. The guarantees the HTTP suite checks on one instance hold across both: one
//! order per `Idempotency-Key`, one order per `external_reference`, no oversold variant, an
//! exact shared rate limit.
//!
//! Runs when `COMMERCE_TEST_POSTGRES_URL` (or `DATABASE_URL`) is set; without it every test
//! is reported as ignored (see `build.rs`).

#[path = "two_instances/catalog_changed.rs"]
mod catalog_changed;
#[path = "two_instances/mirror.rs"]
mod mirror;
mod pg;

use std::future::Future;
use std::sync::Arc;

use bytes::Bytes;
use commerce_core::Engine;
use commerce_core::chrono::TimeDelta;
use commerce_core::clock::ManualClock;
use commerce_core::domain::keys::KeySpec;
use commerce_core::domain::webhooks::WebhookInput;
use commerce_core::model::{
    Ability, CategoryId, CategoryPatch, DeliveryStatus, NewStockAdjustment, PageRequest,
    StockReason, VariantId, VariantPatch,
};
use commerce_core::sandbox::{self, Sandbox};
use commerce_core::testing::crowd::a_crowd_of_slow_accounts_leaves_room_for_a_polite_one;
use commerce_core::testing::fairness::a_dead_receiver_slows_only_its_own_endpoint;
use commerce_core::testing::feed::wait_for_changes;
use commerce_core::testing::http::receiver::Receiver;
use commerce_core::testing::http::start_instant;
use commerce_core::webhooks::{Dispatcher, DispatcherConfig};
use commerce_store_sqlx::PgStore;
use commerce_store_sqlx::sqlx::{self, PgPool};
use http::{Request, StatusCode};
use serde_json::{Value, json};
use tokio::sync::Barrier;

const BENCH: &str = "sk_demo_bench";

/// Two engines on one schema, seeded once through the first.
#[derive(Clone)]
struct Pair {
    engines: [Engine; 2],
    /// The clock both engines read.
    clock: ManualClock,
    fixture: Sandbox,
    /// The first store's pool, for counting rows.
    pool: PgPool,
}

/// A response read whole.
struct Answer {
    status: StatusCode,
    body: Bytes,
}

impl Answer {
    fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }
}

impl Pair {
    /// Request `i` goes to engine `i % 2`.
    async fn send(&self, i: usize, request: Request<Bytes>) -> Answer {
        let response = self.engines[i % 2].handle(request).await;
        Answer {
            status: response.status(),
            body: response.into_body(),
        }
    }

    async fn post_order(&self, i: usize, body: &Value, idempotency_key: Option<&str>) -> Answer {
        let mut request = Request::post("/api/v1/orders")
            .header("authorization", format!("Bearer {BENCH}"))
            .header("content-type", "application/json");
        if let Some(key) = idempotency_key {
            request = request.header("idempotency-key", key);
        }
        let request = request
            .body(Bytes::from(body.to_string()))
            .expect("request");
        self.send(i, request).await
    }

    fn order_body(&self, variant: VariantId) -> Value {
        json!({
            "full_name": "سارة حسن",
            "phone": "+201112223334",
            "address": "12 شارع النصر، مدينة نصر",
            "governorate_id": self.fixture.cairo,
            "shipping_option_id": self.fixture.standard_shipping,
            "lines": [{"variant_id": variant, "quantity": 1, "profit": "10"}],
        })
    }

    async fn count(&self, sql: &'static str) -> i64 {
        sqlx::query_scalar(sql)
            .fetch_one(&self.pool)
            .await
            .expect("count")
    }

    /// `available` of a variant as each engine's store reads it.
    async fn available(&self, variant: VariantId) -> [i64; 2] {
        let mut out = [0; 2];
        for (i, engine) in self.engines.iter().enumerate() {
            out[i] = engine
                .store()
                .products_of_variants(&[variant])
                .await
                .expect("store answers")
                .iter()
                .flat_map(|p| &p.variants)
                .find(|v| v.id == variant)
                .expect("variant")
                .available;
        }
        out
    }
}

impl Pair {
    /// A new key of marketer A that may read the catalogue `limit` times a minute.
    async fn key_limited_to(&self, limit: u32) -> String {
        let spec = KeySpec::new(
            format!("two instances, {limit} a minute"),
            vec![Ability::CatalogRead],
            None,
            Some(limit),
        );
        self.engines[0]
            .operator()
            .create_key(self.fixture.marketer_a, spec)
            .await
            .expect("key")
            .plaintext
    }
}

/// Runs `count` tasks (task `i` on engine `i % 2`), released together by a barrier.
async fn race<F, Fut>(count: usize, task: F) -> Vec<Answer>
where
    F: Fn(usize) -> Fut,
    Fut: Future<Output = Answer> + Send + 'static,
{
    let barrier = Arc::new(Barrier::new(count));
    let handles: Vec<_> = (0..count)
        .map(|i| {
            let barrier = barrier.clone();
            let work = task(i);
            tokio::spawn(async move {
                barrier.wait().await;
                work.await
            })
        })
        .collect();
    let mut answers = Vec::with_capacity(count);
    for handle in handles {
        answers.push(handle.await.expect("task finished"));
    }
    answers
}

/// Two engines on a fresh schema, the scenario, then the schema dropped, also when the
/// scenario panicked.
async fn with_pair<F, Fut>(scenario: F)
where
    F: FnOnce(Pair) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    with_skewed_pair(TimeDelta::zero(), scenario).await
}

/// [`with_pair`] where the second engine's clock is `behind` the first's (`Pair::clock`, the
/// first's, moves only the first).
async fn with_skewed_pair<F, Fut>(behind: TimeDelta, scenario: F)
where
    F: FnOnce(Pair) -> Fut,
    Fut: Future<Output = ()> + Send + 'static,
{
    let url = pg::database_url();
    let schema = pg::create_schema(&url).await;
    let first: PgStore = pg::connect(&url, &schema).await;
    let second: PgStore = pg::connect(&url, &schema).await;
    let pools = [first.pool().clone(), second.pool().clone()];
    let clock = ManualClock::new(start_instant());
    let second_clock = if behind.is_zero() {
        clock.clone()
    } else {
        ManualClock::new(start_instant() - behind)
    };
    // The sandbox's settings: webhooks may go to the local receiver of the webhook tests.
    let engine = |store: PgStore, clock: &ManualClock| {
        Engine::builder(Arc::new(store))
            .config(sandbox::config())
            .clock(Arc::new(clock.clone()))
            .build()
            .expect("valid settings")
    };
    let engines = [engine(first, &clock), engine(second, &second_clock)];
    let fixture = sandbox::seed(&engines[0]).await.expect("the sandbox seeds");
    let pair = Pair {
        engines,
        clock,
        fixture,
        pool: pools[0].clone(),
    };
    let outcome = tokio::spawn(scenario(pair)).await;
    let mismatches = pg::counter_mismatches(&pools[0]).await;
    pg::drop_schema(&url, &[&pools[0], &pools[1]], &schema).await;
    if let Err(error) = outcome {
        std::panic::resume_unwind(error.into_panic());
    }
    assert_eq!(mismatches, 0, "order counters out of step with the orders");
}

/// 50 concurrent creates with one `Idempotency-Key`, split across both instances: every
/// answer is the one 201 (byte for byte) or a 409, and exactly one order is written.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_order_per_idempotency_key_across_instances() {
    with_pair(|p| async move {
        let before = p.count("SELECT COUNT(*) FROM orders").await;
        let body = p.order_body(p.fixture.plain_variant);
        let answers = race(50, |i| {
            let (p, body) = (p.clone(), body.clone());
            async move { p.post_order(i, &body, Some("two-instances")).await }
        })
        .await;
        let created: Vec<_> = answers.iter().filter(|a| a.status == 201).collect();
        assert!(
            answers.iter().all(|a| a.status == 201 || a.status == 409),
            "only 201 or 409: {:?}",
            answers.iter().map(|a| a.status).collect::<Vec<_>>()
        );
        assert!(!created.is_empty(), "one 201 at least");
        assert!(
            created.iter().all(|a| a.body == created[0].body),
            "every 201 is the same bytes"
        );
        for conflict in answers.iter().filter(|a| a.status == 409) {
            assert_eq!(conflict.json()["error"]["code"], "conflict");
        }
        assert_eq!(p.count("SELECT COUNT(*) FROM orders").await, before + 1);
        let id = created[0].json()["data"]["id"].as_i64().expect("order id");
        let linked: i64 =
            sqlx::query_scalar("SELECT COUNT(*) FROM idempotency_records WHERE order_id = $1")
                .bind(id)
                .fetch_one(&p.pool)
                .await
                .expect("count");
        assert_eq!(linked, 1, "the key's record points at the order");
    })
    .await;
}

/// 20 concurrent creates with one `external_reference` (no idempotency key), split across
/// both instances: exactly one 201; every other answer is a 409 naming that order.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn one_order_per_external_reference_across_instances() {
    with_pair(|p| async move {
        let before = p.count("SELECT COUNT(*) FROM orders").await;
        let mut body = p.order_body(p.fixture.plain_variant);
        body["external_reference"] = json!("TWO-INSTANCES-1");
        let answers = race(20, |i| {
            let (p, body) = (p.clone(), body.clone());
            async move { p.post_order(i, &body, None).await }
        })
        .await;
        let created: Vec<_> = answers.iter().filter(|a| a.status == 201).collect();
        assert_eq!(created.len(), 1, "exactly one 201");
        let order = created[0].json();
        for answer in answers.iter().filter(|a| a.status != 201) {
            assert_eq!(
                answer.status,
                409,
                "{}",
                String::from_utf8_lossy(&answer.body)
            );
            let error = &answer.json()["error"];
            assert_eq!(error["code"], "conflict");
            assert_eq!(error["existing_order_id"], order["data"]["id"]);
            assert_eq!(error["existing_order_number"], order["data"]["number"]);
        }
        assert_eq!(p.count("SELECT COUNT(*) FROM orders").await, before + 1);
    })
    .await;
}

/// A variant with 10 available and 50 concurrent single-piece orders split across both
/// instances: exactly 10 orders, 40 refused on stock, 0 left.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn no_oversold_variant_across_instances() {
    with_pair(|p| async move {
        let variant = p.fixture.featured_variants[1];
        let [stock, _] = p.available(variant).await;
        p.engines[0]
            .operator()
            .set_stock(variant, stock, 10, None)
            .await
            .expect("stock");
        assert_eq!(p.available(variant).await, [10, 10]);
        let before = p.count("SELECT COUNT(*) FROM orders").await;
        let body = p.order_body(variant);
        let answers = race(50, |i| {
            let (p, body) = (p.clone(), body.clone());
            async move { p.post_order(i, &body, None).await }
        })
        .await;
        let created = answers.iter().filter(|a| a.status == 201).count();
        let refused: Vec<_> = answers.iter().filter(|a| a.status == 422).collect();
        assert_eq!((created, refused.len()), (10, 40));
        for answer in refused {
            assert_eq!(answer.json()["error"]["code"], "validation_failed");
        }
        assert_eq!(p.available(variant).await, [0, 0]);
        assert_eq!(p.count("SELECT COUNT(*) FROM orders").await, before + 10);
    })
    .await;
}

/// A key limited to 20 a minute hit 50 times concurrently across both instances: exactly 20
/// pass, 30 are 429 (the counter lives in the database).
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rate_limit_is_exact_across_instances() {
    with_pair(|p| async move {
        let key = p.key_limited_to(20).await;
        let answers = race(50, |i| {
            let (p, key) = (p.clone(), key.clone());
            async move {
                let request = Request::get("/api/v1/me")
                    .header("authorization", format!("Bearer {key}"))
                    .body(Bytes::new())
                    .expect("request");
                p.send(i, request).await
            }
        })
        .await;
        let ok = answers.iter().filter(|a| a.status == 200).count();
        let limited = answers.iter().filter(|a| a.status == 429).count();
        assert_eq!((ok, limited), (20, 30));
    })
    .await;
}

/// A key allowed 3,000 a minute (counted by leases of 3) hit 3,100 times, split across both
/// instances: never more than 3,000 allowed, and at most one lease per instance short of it.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn high_volume_rate_limit_never_exceeds_across_instances() {
    with_pair(|p| async move {
        let key = p.key_limited_to(3_000).await;
        let mut tasks = Vec::new();
        for task in 0..16 {
            let (p, key) = (p.clone(), key.clone());
            tasks.push(tokio::spawn(async move {
                let mut ok = 0;
                for i in (task..3_100).step_by(16) {
                    let request = Request::get("/api/v1/me")
                        .header("authorization", format!("Bearer {key}"))
                        .body(Bytes::new())
                        .expect("request");
                    let answer = p.send(i, request).await;
                    assert!(
                        matches!(answer.status.as_u16(), 200 | 429),
                        "{}",
                        answer.status
                    );
                    ok += usize::from(answer.status == 200);
                }
                ok
            }));
        }
        let mut ok = 0;
        for task in tasks {
            ok += task.await.expect("task");
        }
        assert!((3_000 - 2 * 3..=3_000).contains(&ok), "{ok} allowed");
    })
    .await;
}

/// Drains deliveries with both engines' dispatchers at once until neither finds any due;
/// how many attempts each made.
async fn drain_both(dispatchers: &[Dispatcher; 2]) -> [usize; 2] {
    let work = dispatchers.clone().map(|d| {
        tokio::spawn(async move {
            let mut attempted = 0;
            loop {
                match d.deliver_due().await.expect("a pass") {
                    0 => return attempted,
                    n => attempted += n,
                }
            }
        })
    });
    let [a, b] = work;
    [a.await.expect("dispatcher"), b.await.expect("dispatcher")]
}

fn dispatchers(pair: &Pair, config: DispatcherConfig) -> [Dispatcher; 2] {
    pair.engines
        .clone()
        .map(|e| e.dispatcher().with_config(config.clone()))
}

/// 500 events (orders placed through both instances) and one dispatcher per instance on the
/// same database: every event reaches the receiver exactly once, each delivery attempted once.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn webhook_events_are_delivered_once_by_two_dispatchers() {
    with_pair(|pair| async move {
        let receiver = Receiver::start().await;
        let endpoint = pair.engines[0]
            .operator()
            .create_webhook(pair.fixture.marketer_a, WebhookInput::url(&receiver.url))
            .await
            .expect("an endpoint");
        let variant = pair.fixture.plain_variant;
        pair.engines[0]
            .operator()
            .adjust_stock(
                NewStockAdjustment::builder()
                    .variant_id(variant)
                    .delta(100_000)
                    .reason(StockReason::Received)
                    .build(),
            )
            .await
            .expect("stock");
        let body = pair.order_body(variant);
        for chunk in 0..25 {
            let placed = race(20, |i| {
                let (pair, body) = (pair.clone(), body.clone());
                async move { pair.post_order(chunk * 20 + i, &body, None).await }
            })
            .await;
            assert!(placed.iter().all(|a| a.status == StatusCode::CREATED));
        }
        let attempts = drain_both(&dispatchers(&pair, DispatcherConfig::default())).await;
        assert_eq!(
            attempts[0] + attempts[1],
            500,
            "attempts by each: {attempts:?}"
        );
        let got = receiver.received();
        let ids: std::collections::HashSet<&str> =
            got.iter().map(|r| r.header("webhook-id")).collect();
        assert_eq!((got.len(), ids.len()), (500, 500), "each event once");
        let delivered = pair.engines[1]
            .operator()
            .webhook_deliveries(
                endpoint.id,
                Some(DeliveryStatus::Delivered),
                PageRequest::new(1, 1).expect("a valid page"),
            )
            .await
            .expect("deliveries");
        assert_eq!(delivered.total, 500);
    })
    .await;
}

/// A dispatcher dropped in the middle of an attempt holds its lease until it runs out; only
/// then does the other instance send the delivery, with the same `webhook-id`.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_delivery_cut_short_is_sent_again_by_the_other_instance() {
    with_pair(|pair| async move {
        let receiver = Receiver::start().await;
        receiver.then_stall(std::time::Duration::from_millis(800));
        let endpoint = pair.engines[0]
            .operator()
            .create_webhook(pair.fixture.marketer_a, WebhookInput::url(&receiver.url))
            .await
            .expect("an endpoint");
        let queued = pair.engines[0]
            .operator()
            .ping_webhook(endpoint.id)
            .await
            .expect("a ping");
        let config = DispatcherConfig::default().with_lease(TimeDelta::seconds(60));
        let [first, second] = dispatchers(&pair, config);
        let cut =
            tokio::time::timeout(std::time::Duration::from_millis(200), first.deliver_due()).await;
        assert!(cut.is_err(), "the first dispatcher was dropped mid-attempt");
        assert_eq!(
            second.deliver_due().await.expect("a pass"),
            0,
            "still leased"
        );
        pair.clock.advance(TimeDelta::seconds(61));
        assert_eq!(
            second.deliver_due().await.expect("a pass"),
            1,
            "the lease ran out"
        );
        let got = receiver.received();
        // The second attempt (and, if the receiver finished it, the cut one): one event.
        assert!(got.iter().any(|r| r.answered.is_success()), "sent again");
        assert!(
            got.iter()
                .all(|r| r.header("webhook-id") == queued.event_id)
        );
        let listed = pair.engines[1]
            .operator()
            .webhook_deliveries(endpoint.id, None, PageRequest::default())
            .await
            .expect("deliveries");
        assert_eq!(listed.items[0].status, DeliveryStatus::Delivered);
        assert_eq!(
            listed.items[0].attempts, 1,
            "the cut attempt was never recorded"
        );
    })
    .await;
}

/// One account's endpoint a tarpit (accepts, never answers) fed 2 pings a second, the other
/// account's events delivered by the first instance's dispatcher alone: p99 <= 2 s.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_receiver_slows_only_its_own_endpoint_with_one_instance() {
    with_pair(|pair| async move {
        let f = &pair.fixture;
        a_dead_receiver_slows_only_its_own_endpoint(&pair.engines[..1], f.marketer_a, f.marketer_b)
            .await;
    })
    .await;
}

/// The same with one dispatcher per instance on the same database (the per-endpoint limit
/// is decided in the claim, across both).
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_dead_receiver_slows_only_its_own_endpoint_with_two_instances() {
    with_pair(|pair| async move {
        let f = &pair.fixture;
        a_dead_receiver_slows_only_its_own_endpoint(&pair.engines, f.marketer_a, f.marketer_b)
            .await;
    })
    .await;
}

/// 20 accounts of 10 endpoints each behind receivers answering 200 after 6 s, every endpoint
/// kept full of pings, the first instance's dispatcher alone: no account holds more than its
/// limit, and a polite account's events arrive with p99 <= 2 s.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_crowd_of_slow_accounts_leaves_room_for_a_polite_one_with_one_instance() {
    with_pair(|pair| async move {
        a_crowd_of_slow_accounts_leaves_room_for_a_polite_one(&pair.engines[..1]).await;
    })
    .await;
}

/// The same with one dispatcher per instance on the same database (the per-account limit
/// and the order of the claim are decided in the claim, across both).
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_crowd_of_slow_accounts_leaves_room_for_a_polite_one_with_two_instances() {
    with_pair(|pair| async move {
        a_crowd_of_slow_accounts_leaves_room_for_a_polite_one(&pair.engines).await;
    })
    .await;
}

/// Two instances whose clocks are 10 minutes apart write one order: the instance behind
/// cancels the order the one ahead placed, and the order's `updated_at` does not go back
/// (the later of its clock and the stored stamp plus 1 µs), so a sync from the stamp it had
/// finds the change, through either instance.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn updated_at_moves_forward_across_instances_with_skewed_clocks() {
    with_skewed_pair(TimeDelta::minutes(10), |p| async move {
        let placed = p
            .post_order(0, &p.order_body(p.fixture.plain_variant), None)
            .await;
        assert_eq!(placed.status, StatusCode::CREATED);
        let order = placed.json()["data"].clone();
        let (id, created) = (order["id"].as_i64().unwrap(), order["updated_at"].clone());
        let cancel = Request::post(format!("/api/v1/orders/{id}/cancel"))
            .header("authorization", format!("Bearer {BENCH}"))
            .header("content-type", "application/json")
            .body(Bytes::from_static(b"{}"))
            .expect("request");
        let cancelled = p.send(1, cancel).await;
        assert_eq!(cancelled.status, StatusCode::OK, "{:?}", cancelled.json());
        let moved = cancelled.json()["data"]["updated_at"].clone();
        let instant = |v: &Value| {
            chrono::DateTime::parse_from_rfc3339(v.as_str().expect("a stamp")).expect("RFC 3339")
        };
        assert!(instant(&moved) >= instant(&created), "{created} -> {moved}");
        for engine in 0..2 {
            let since = created.as_str().unwrap().replace('+', "%2B");
            let sync = Request::get(format!("/api/v1/orders?updated_since={since}"))
                .header("authorization", format!("Bearer {BENCH}"))
                .body(Bytes::new())
                .expect("request");
            let found = p.send(engine, sync).await.json();
            let listed: Vec<_> = found["data"].as_array().expect("a list").iter().collect();
            assert!(
                listed
                    .iter()
                    .any(|o| o["id"] == id && o["status"]["key"] == "rejected_by_Marketer"),
                "engine {engine}: {found}"
            );
        }
    })
    .await;
}

/// A `GET` of `path` with the bench key.
fn get(path: &str) -> Request<Bytes> {
    Request::get(path)
        .header("authorization", format!("Bearer {BENCH}"))
        .body(Bytes::new())
        .expect("request")
}

/// The item of a list answer with this id.
fn item(list: &Value, id: i64) -> Value {
    list["data"]
        .as_array()
        .expect("a list")
        .iter()
        .find(|item| item["id"] == id)
        .cloned()
        .unwrap_or(Value::Null)
}

/// The first instance keeps the JSON of the products, the page and the orders it has shown;
/// the second, its clock 10 minutes behind, changes a variant's price, renames the product's
/// category and cancels an order. The first instance's next answers show every change, as the
/// second's do: its caches answer only for the versions the database lists, whoever wrote them.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kept_json_shows_the_other_instances_writes() {
    with_skewed_pair(TimeDelta::minutes(10), |p| async move {
        let placed = p
            .post_order(0, &p.order_body(p.fixture.plain_variant), None)
            .await;
        assert_eq!(placed.status, StatusCode::CREATED);
        let order = placed.json()["data"]["id"].as_i64().expect("an id");
        let product = p.fixture.featured_product.get();
        let variant = p.fixture.featured_variants[0];
        let list = "/api/v1/products?per_page=100";
        let one = format!("/api/v1/products/{product}");
        let orders = "/api/v1/orders?per_page=100";
        let mut before = Vec::new();
        for path in [list, one.as_str(), orders] {
            let first = p.send(0, get(path)).await;
            assert_eq!(first.status, StatusCode::OK, "{path}");
            let again = p.send(0, get(path)).await;
            assert_eq!(first.body, again.body, "{path}: kept and served again");
            before.push(first.json());
        }
        let operator = p.engines[1].operator();
        let price = rust_decimal::Decimal::new(12_345, 2);
        operator
            .update_variant(variant, VariantPatch::default().set_price(price))
            .await
            .expect("a new price");
        let category = before[1]["data"]["category"]["id"]
            .as_i64()
            .expect("a category");
        operator
            .update_category(
                CategoryId::new(category),
                CategoryPatch::default().set_name("قسم بعد التغيير"),
            )
            .await
            .expect("a new name");
        let cancel = Request::post(format!("/api/v1/orders/{order}/cancel"))
            .header("authorization", format!("Bearer {BENCH}"))
            .header("content-type", "application/json")
            .body(Bytes::from_static(b"{}"))
            .expect("request");
        assert_eq!(p.send(1, cancel).await.status, StatusCode::OK);

        let listed = item(&p.send(0, get(list)).await.json(), product);
        let fresh = item(&p.send(1, get(list)).await.json(), product);
        assert_ne!(
            listed,
            item(&before[0], product),
            "the page shows the writes"
        );
        assert_eq!(listed, fresh, "the page as the other instance shows it");
        assert_eq!(listed["category"]["name"], "قسم بعد التغيير");
        let shown = p.send(0, get(&one)).await.json()["data"].clone();
        assert_eq!(shown, fresh, "the product as the other instance shows it");
        let order = item(&p.send(0, get(orders)).await.json(), order);
        assert_eq!(order["status"]["key"], "rejected_by_Marketer", "{order}");
    })
    .await;
}

/// Reads the change feed through engine `i` from `after` until it is quiet: the product ids
/// named (in feed order) and the last `next_cursor`. A transaction held open elsewhere on the
/// server (another test) holds the feed's head back for a moment: the read waits at the store
/// until `wanted` are all in the feed (`wait_for_changes`, at most a minute), then reads.
async fn feed_until(p: &Pair, i: usize, after: Option<&str>, wanted: &[i64]) -> (Vec<i64>, String) {
    wait_for_changes(&**p.engines[i].store(), after, wanted).await;
    let mut named = Vec::new();
    let mut cursor = after.map(str::to_owned);
    loop {
        let path = match &cursor {
            Some(c) => format!("/api/v1/catalog/changes?after={c}&limit=3"),
            None => "/api/v1/catalog/changes?limit=3".to_owned(),
        };
        let answer = p.send(i, get(&path)).await;
        assert_eq!(answer.status, StatusCode::OK, "{path}");
        let body = answer.json();
        for change in body["data"].as_array().expect("data") {
            named.push(change["product_id"].as_i64().expect("a product"));
        }
        cursor = body["meta"]["next_cursor"].as_str().map(str::to_owned);
        if body["meta"]["has_more"] == json!(false) {
            let done = wanted.iter().all(|w| named.contains(w));
            assert!(done, "engine {i}: {wanted:?} not named, read {named:?}");
            return (named, cursor.expect("a cursor"));
        }
    }
}

/// Changes made through both instances (an order through one, a price through the other, a
/// stock adjustment through the first) are read in the one feed through both, from a cursor
/// either gave: each names the same products in the same order.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_change_feed_is_one_across_instances() {
    with_pair(|p| async move {
        let plain = p.engines[0]
            .store()
            .products_of_variants(&[p.fixture.plain_variant])
            .await
            .expect("owner")[0]
            .id
            .get();
        let featured = p.fixture.featured_product.get();
        // The start: a cursor past every change of the seed. The feed holds back what
        // transactions still open anywhere in the database (other tests' too) may yet commit
        // before, so a read may end before the seed's last change: a marker (a new price of
        // the featured product) is made, and the feed is read from the beginning until the
        // marker is its newest change (each product is named once, at its newest change).
        p.engines[0]
            .operator()
            .update_variant(
                p.fixture.featured_variants[0],
                VariantPatch::default().set_price(rust_decimal::Decimal::new(14_007, 2)),
            )
            .await
            .expect("the marker's price");
        let start = loop {
            let (named, cursor) = feed_until(&p, 0, None, &[featured]).await;
            if named.last() == Some(&featured) {
                break cursor;
            }
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        };
        let placed = p
            .post_order(1, &p.order_body(p.fixture.plain_variant), None)
            .await;
        assert_eq!(placed.status, StatusCode::CREATED);
        let price = rust_decimal::Decimal::new(15_000, 2);
        p.engines[0]
            .operator()
            .update_variant(
                p.fixture.featured_variants[0],
                VariantPatch::default().set_price(price),
            )
            .await
            .expect("a new price");
        let (through_first, at_first) = feed_until(&p, 0, Some(&start), &[plain, featured]).await;
        let (through_second, _) = feed_until(&p, 1, Some(&start), &[plain, featured]).await;
        assert_eq!(
            through_first,
            [plain, featured],
            "in commit order, each once"
        );
        assert_eq!(through_second, through_first, "the same feed");
        let more = NewStockAdjustment::builder()
            .variant_id(p.fixture.plain_variant)
            .delta(3)
            .reason(StockReason::Received)
            .build();
        p.engines[1]
            .operator()
            .adjust_stock(more)
            .await
            .expect("stock");
        let (then, _) = feed_until(&p, 1, Some(&at_first), &[plain]).await;
        assert_eq!(
            then,
            [plain],
            "a cursor of one instance reads on at the other"
        );
    })
    .await;
}
