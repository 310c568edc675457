//! Webhooks: what the outbox costs `POST /orders`, and how fast one dispatcher delivers.
//!
//! ```text
//! COMMERCE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo bench -p commerce-dev --features sqlx --bench webhooks
//! ```
//!
//! For each store (`WEBHOOKS_STORES`, default `postgres,memory`; PostgreSQL in a database
//! `commerce_webhooks_bench` it creates and drops, when `COMMERCE_TEST_POSTGRES_URL` is set)
//! the run seeds the sandbox, gives the plain variant endless stock, then:
//!
//! 1. **Outbox cost.** `WEBHOOKS_CLIENTS` tasks (default 16) send `POST /api/v1/orders`
//!    through `Engine::handle` for `WEBHOOKS_SECONDS` (default 2) per phase, in phases that
//!    alternate `WEBHOOKS_ROUNDS` times (default 6) between without an enabled endpoint and
//!    with one endpoint of the account subscribed to every event (each order then also writes
//!    its delivery in its transaction), starting and ending without. The ratio is the mean
//!    orders per second with the endpoint over the mean without.
//!    Goal: >= 90% (the outbox costs at most 10% of `POST /orders` throughput).
//! 2. **Delivery.** Up to `WEBHOOKS_DELIVER` (default 3000) of the deliveries queued in
//!    phase 2 are sent by one dispatcher (batch 64, up to 64 in flight to the one endpoint)
//!    to a local receiver answering 204: events per second. Baseline, same run: as many of
//!    the same bodies posted to the same receiver by a plain reqwest client, 64 at a time, no
//!    store. Reported only.
//! 3. **Fairness.** The product's dispatcher settings (attempt timeout 15 s, 4 in flight per
//!    endpoint), one dispatcher running: for `WEBHOOKS_FAIR_SECONDS` (default 60) the second
//!    sandbox account's endpoint is a tarpit (accepts connections, never answers) fed 2 pings
//!    a second while the first account's endpoint (a prompt receiver) gets 4 events a second;
//!    then as long without the tarpit. The first account's delivery latency (queued to
//!    received) p50 / p99 of each. Goal: p99 <= 2 s beside the tarpit.
//! 4. **Fairness across accounts.** The product's dispatcher settings (16 in flight per
//!    account, the last 64 of 256 slots for accounts with fewer than 4 in flight), one
//!    dispatcher running: 20 accounts with 10 endpoints each behind a receiver that answers
//!    200 after 14 s (never a timeout), every endpoint kept full of pings, while a polite
//!    account's endpoint (a prompt receiver) gets 4 events a second, for
//!    `WEBHOOKS_CROWD_SECONDS` (default 60; 0 skips the phase). The polite account's delivery
//!    latency p50 / p99, and the most attempts of one crowd account held at once.
//!    Goal: p99 <= 2 s.
//!
//! The goal applies on PostgreSQL; in memory (where an order costs tens of microseconds and
//! rendering the event is a visible share of it) the ratio is reported only.

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use commerce::Engine;
use commerce::domain::webhooks::WebhookInput;
use commerce::model::{DeliveryStatus, PageRequest};
use commerce::sandbox;
use commerce::store::{MemoryStore, Store};
use commerce::webhooks::{DispatcherConfig, render_event};
use commerce_core::testing::crowd::{self, Crowd};
use commerce_core::testing::fairness::{Flood, Latencies, prompt_latencies};
use commerce_core::testing::http::receiver::Receiver;
use common::report::{self, Goal, Unit};
use futures_util::future::join_all;

const KEY: &str = "sk_demo_bench";

/// Orders per second over one phase.
async fn orders_per_second(engine: &Engine, body: &Bytes, clients: usize, seconds: u64) -> f64 {
    let placed = Arc::new(AtomicU64::new(0));
    let until = Instant::now() + Duration::from_secs(seconds);
    let tasks: Vec<_> = (0..clients)
        .map(|_| {
            let (engine, body, placed) = (engine.clone(), body.clone(), placed.clone());
            tokio::spawn(async move {
                while Instant::now() < until {
                    let request = http::Request::post("/api/v1/orders")
                        .header("authorization", format!("Bearer {KEY}"))
                        .header("content-type", "application/json")
                        .body(body.clone())
                        .expect("a request");
                    let response = engine.handle(request).await;
                    assert_eq!(response.status(), 201, "{:?}", response.body());
                    placed.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    let started = Instant::now();
    for task in tasks {
        task.await.expect("a client task");
    }
    placed.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64()
}

async fn run(label: &str, store: Arc<dyn Store>, goal: Goal) {
    let clients: usize = common::env_or("WEBHOOKS_CLIENTS", 16);
    let most: usize = common::env_or("WEBHOOKS_DELIVER", 3000);
    let seconds: u64 = common::env_or("WEBHOOKS_SECONDS", 2);
    let rounds: usize = common::env_or("WEBHOOKS_ROUNDS", 6);
    let engine = Engine::builder(store)
        .config(sandbox::config())
        .build()
        .expect("valid settings");
    let fixture = sandbox::seed(&engine).await.expect("seeded");
    common::endless_stock(&engine, fixture.plain_variant).await;
    let body = Bytes::from(common::order_body(&fixture));
    let receiver = Receiver::start().await;

    // Alternating phases (without, with, without, ..., without): the drift of a shared
    // machine (checkpoints, autovacuum, tables growing) falls on both sides alike.
    let operator = engine.operator();
    let endpoint = operator
        .create_webhook(fixture.marketer_a, WebhookInput::url(&receiver.url))
        .await
        .expect("an endpoint");
    let (mut without, mut with) = (Vec::new(), Vec::new());
    for round in 0..=rounds {
        let subscribed = round % 2 == 1;
        operator
            .update_webhook(
                endpoint.id,
                WebhookInput::default().with_enabled(subscribed),
            )
            .await
            .expect("the endpoint switched");
        let rate = orders_per_second(&engine, &body, clients, seconds).await;
        if subscribed { &mut with } else { &mut without }.push(rate);
    }
    let mean = |rates: &[f64]| rates.iter().sum::<f64>() / rates.len() as f64;
    let show = |rates: &[f64]| {
        let shown: Vec<String> = rates.iter().map(|r| format!("{r:.0}")).collect();
        shown.join(" ")
    };
    println!(
        "{label} POST /orders/s: without {} (mean {:.0}), with an endpoint {} (mean {:.0})",
        show(&without),
        mean(&without),
        show(&with),
        mean(&with)
    );
    report::ratio(
        &format!("with/without an endpoint POST /orders {label} ({clients} clients)"),
        mean(&with) / mean(&without),
        Unit::Percent,
        goal,
    );

    // Delivery: the deliveries queued while the endpoint was subscribed.
    operator
        .update_webhook(endpoint.id, WebhookInput::default().with_enabled(true))
        .await
        .expect("enabled");
    let page = PageRequest::new(1, 100).expect("a valid page");
    let queued = operator
        .webhook_deliveries(endpoint.id, Some(DeliveryStatus::Pending), page)
        .await
        .expect("deliveries");
    let sample: Vec<String> = queued
        .items
        .iter()
        .map(|d| render_event(&d.event_id, d.event_type, &d.snapshot))
        .collect();
    let dispatcher = engine.dispatcher().with_config(
        DispatcherConfig::default()
            .with_batch(64)
            .with_per_endpoint_in_flight(64)
            .with_per_account_in_flight(64),
    );
    let started = Instant::now();
    let mut delivered = 0usize;
    while delivered < most {
        match dispatcher.deliver_due().await.expect("a pass") {
            0 => break,
            n => delivered += n,
        }
    }
    let dispatched = delivered as f64 / started.elapsed().as_secs_f64();
    assert!(
        delivered as u64 <= queued.total,
        "no delivery sent twice: {delivered} of {}",
        queued.total
    );

    let client = reqwest::Client::new();
    let started = Instant::now();
    let mut posted = 0usize;
    while posted < delivered {
        let batch = (delivered - posted).min(64);
        let sends = (0..batch).map(|i| {
            client
                .post(&receiver.url)
                .header("content-type", "application/json")
                .body(sample[(posted + i) % sample.len().max(1)].clone())
                .send()
        });
        for result in join_all(sends).await {
            assert!(result.expect("the receiver answers").status().is_success());
        }
        posted += batch;
    }
    let raw = posted as f64 / started.elapsed().as_secs_f64();
    println!(
        "{label} delivery: {delivered} events, dispatcher {dispatched:.0}/s, plain client {raw:.0}/s"
    );
    report::ratio(
        &format!("dispatcher/plain client events per second {label}"),
        dispatched / raw,
        Unit::Percent,
        Goal::None,
    );

    // Fairness: the outbox's endpoint and its backlog go first.
    operator
        .delete_webhook(endpoint.id)
        .await
        .expect("endpoint deleted");
    let fair_seconds: u64 = common::env_or("WEBHOOKS_FAIR_SECONDS", 60);
    let flood = Flood::tarpit(Duration::from_secs(fair_seconds), Duration::from_secs(15))
        .with_config(DispatcherConfig::default());
    for (phase, flood) in [
        ("beside a tarpit", flood.clone()),
        ("alone", flood.without_tarpit()),
    ] {
        let latencies = prompt_latencies(
            std::slice::from_ref(&engine),
            fixture.marketer_a,
            fixture.marketer_b,
            &flood,
        )
        .await;
        let p99 = latencies.quantile(0.99);
        println!("{label} fairness, {phase}: {}", shown(&latencies));
        if phase == "beside a tarpit" {
            report::ratio(
                &format!("p99 latency beside a tarpit / 2 s {label}"),
                p99.as_secs_f64() / 2.0,
                Unit::Times,
                Goal::AtMost(1.0),
            );
        }
    }

    // Fairness across accounts: the issue's crowd of slow accounts beside a polite one.
    let crowd_seconds: u64 = common::env_or("WEBHOOKS_CROWD_SECONDS", 60);
    if crowd_seconds > 0 {
        let run = crowd::polite_latencies(
            std::slice::from_ref(&engine),
            &Crowd::issue(Duration::from_secs(crowd_seconds)),
        )
        .await;
        let p99 = run.polite.quantile(0.99);
        println!(
            "{label} fairness across accounts: {}, {} refused; at most {} of one crowd account at once, {} crowd attempts answered",
            shown(&run.polite),
            run.refused,
            run.most_per_account,
            run.crowd_answered,
        );
        report::ratio(
            &format!("p99 latency beside 20 slow accounts / 2 s {label}"),
            p99.as_secs_f64() / 2.0,
            Unit::Times,
            Goal::AtMost(1.0),
        );
    }
}

/// Events, missing ones and the latency's p50, p99 and max, as the fairness lines show them.
fn shown(latencies: &Latencies) -> String {
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    format!(
        "{} events, {} missing, latency p50 {:.0} ms, p99 {:.0} ms, max {:.0} ms",
        latencies.sorted.len(),
        latencies.missing,
        ms(latencies.quantile(0.5)),
        ms(latencies.quantile(0.99)),
        ms(latencies.sorted.last().copied().unwrap_or_default()),
    )
}

fn main() {
    let stores = std::env::var("WEBHOOKS_STORES").unwrap_or_else(|_| "postgres,memory".into());
    let runtime = common::runtime("webhooks", 2);
    runtime.block_on(async {
        for store in stores.split(',') {
            match store.trim() {
                "memory" => run("memory", Arc::new(MemoryStore::new()), Goal::None).await,
                #[cfg(feature = "sqlx-postgres")]
                "postgres" => {
                    let Some(url) = common::sql::postgres_url("webhooks bench") else {
                        continue;
                    };
                    let name = "commerce_webhooks_bench";
                    let pg = common::sql::fresh_pg(&url, name).await;
                    run("postgres", Arc::new(pg), Goal::AtLeast(90.0)).await;
                    common::sql::drop_pg(&url, name).await;
                }
                other => eprintln!("store {other} not built into this bench: skipped"),
            }
        }
    });
}
