//! How many SQL statements, transactions and WAL-writing statements each API request costs on
//! PostgreSQL, read from `pg_stat_statements` (the figures in BENCHMARKS.md).
//!
//! ```text
//! COMMERCE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test \
//!   cargo run --release -p commerce-store-sqlx --example statements_per_request
//! ```
//!
//! Needs a server with `shared_preload_libraries = 'pg_stat_statements'` (the example creates
//! the extension) and rights to create a database: it measures in a database of its own
//! (`commerce_statements`, dropped and created anew), so that other clients of the server do
//! not count. The sandbox is seeded, 40 orders are placed, and then each request of the list is
//! sent `REPEAT` (100) times through `Engine::handle`; for each, the statements executed in
//! that database are divided by the repeats. The order writes are then measured again with a
//! webhook endpoint registered for the account ("+ webhook": the outbox's own insert). `BEGIN`/`COMMIT`/`ROLLBACK` are counted apart;
//! "WAL" counts executions of statements that wrote WAL (a durable write at commit unless the
//! statement is on an unlogged table or `synchronous_commit` is off).
//!
//! `STATEMENTS_DETAIL=1` also lists each statement with its executions per request.
//!
//! Pool acquires are not statements: sqlx pings a connection when it goes back to the pool,
//! and before handing out an idle one when `test_before_acquire` is on (see the crate docs).

use std::sync::Arc;

use bytes::Bytes;
use commerce_core::Engine;
use commerce_core::model::{NewStockAdjustment, NewWebhook, StockReason, WebhookSecret};
use commerce_core::sandbox;
use commerce_core::store::{MAX_WEBHOOKS_PER_ACCOUNT, WebhookStore};
use commerce_store_sqlx::PgStore;
use commerce_store_sqlx::sqlx::postgres::PgConnectOptions;
use commerce_store_sqlx::sqlx::{self, Connection, PgConnection};
use http::{Method, Request};
use serde_json::{Value, json};

type AnyError = Box<dyn std::error::Error + Send + Sync>;

const DATABASE: &str = "commerce_statements";
const REPEAT: usize = 100;
const WARM_UP: usize = 5;
const KEY: &str = "sk_demo_bench";

/// One request of the list: a label and how to build it (`i` is the repeat).
struct Probe {
    label: &'static str,
    build: Box<dyn Fn(usize) -> Request<Bytes>>,
}

fn request(
    method: Method,
    path: &str,
    body: Option<&Value>,
    idempotency: Option<String>,
) -> Request<Bytes> {
    let mut builder = Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", format!("Bearer {KEY}"));
    if let Some(key) = idempotency {
        builder = builder.header("idempotency-key", key);
    }
    let body = body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string()));
    if !body.is_empty() {
        builder = builder.header("content-type", "application/json");
    }
    builder.body(body).expect("request")
}

/// Statement counts in the measurement database since the last reset.
#[derive(Debug, Default)]
struct Counts {
    statements: i64,
    transaction_control: i64,
    wal_writing: i64,
}

async fn counts(admin: &mut PgConnection) -> Result<Counts, AnyError> {
    let rows: Vec<(String, i64, i64)> = sqlx::query_as(
        "SELECT s.query, s.calls, s.wal_records FROM pg_stat_statements s \
         JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1",
    )
    .bind(DATABASE)
    .fetch_all(&mut *admin)
    .await?;
    let mut counts = Counts::default();
    for (query, calls, wal) in rows {
        let head = query.trim_start().to_ascii_uppercase();
        if head.starts_with("BEGIN") || head.starts_with("COMMIT") || head.starts_with("ROLLBACK") {
            counts.transaction_control += calls;
        } else {
            counts.statements += calls;
            if wal > 0 {
                counts.wal_writing += calls;
            }
        }
    }
    Ok(counts)
}

/// A cancel of each order of `orders` in turn (`i` is the repeat).
fn cancel_probe(label: &'static str, orders: Vec<i64>) -> Probe {
    Probe {
        label,
        build: Box::new(move |i| {
            request(
                Method::POST,
                &format!("/api/v1/orders/{}/cancel", orders[i]),
                None,
                None,
            )
        }),
    }
}

/// Sends `probe`'s request `REPEAT` times (after a warm-up) and prints its statements per
/// request.
async fn measure(engine: &Engine, admin: &mut PgConnection, probe: &Probe) -> Result<(), AnyError> {
    // Warm the connections and statement caches first.
    for i in 0..WARM_UP {
        let _ = engine.handle((probe.build)(REPEAT + i)).await;
    }
    sqlx::raw_sql("SELECT pg_stat_statements_reset()")
        .execute(&mut *admin)
        .await?;
    for i in 0..REPEAT {
        let r = engine.handle((probe.build)(i)).await;
        if !r.status().is_success() {
            return Err(format!("{}: {}", probe.label, r.status()).into());
        }
    }
    if std::env::var_os("STATEMENTS_DETAIL").is_some() {
        let rows: Vec<(String, i64)> = sqlx::query_as(
            "SELECT s.query, s.calls FROM pg_stat_statements s \
             JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = $1 ORDER BY s.calls DESC",
        )
        .bind(DATABASE)
        .fetch_all(&mut *admin)
        .await?;
        for (query, calls) in rows {
            let query: String = query.split_whitespace().collect::<Vec<_>>().join(" ");
            println!(
                "    {:>6.2}  {}",
                calls as f64 / REPEAT as f64,
                &query[..query.len().min(150)]
            );
        }
    }
    let c = counts(&mut *admin).await?;
    let per = |n: i64| n as f64 / REPEAT as f64;
    println!(
        "{:<36} {:>11.2} {:>13.2} {:>12.2}",
        probe.label,
        per(c.statements),
        per(c.transaction_control),
        per(c.wal_writing)
    );
    Ok(())
}

#[tokio::main]
async fn main() -> Result<(), AnyError> {
    let Ok(url) = std::env::var("COMMERCE_TEST_POSTGRES_URL") else {
        println!("statements_per_request: set COMMERCE_TEST_POSTGRES_URL");
        return Ok(());
    };
    let mut admin = PgConnection::connect(&url).await?;
    sqlx::raw_sql("CREATE EXTENSION IF NOT EXISTS pg_stat_statements")
        .execute(&mut admin)
        .await?;
    sqlx::raw_sql("DROP DATABASE IF EXISTS commerce_statements WITH (FORCE)")
        .execute(&mut admin)
        .await?;
    sqlx::raw_sql("CREATE DATABASE commerce_statements")
        .execute(&mut admin)
        .await?;
    let options: PgConnectOptions = url.parse::<PgConnectOptions>()?.database(DATABASE);
    let store = PgStore::connect_with(options).await?;
    store.migrate().await?;
    let engine = Engine::new(Arc::new(store.clone()));
    let fixture = sandbox::seed(&engine).await?;
    engine
        .operator()
        .adjust_stock(
            NewStockAdjustment::builder()
                .variant_id(fixture.plain_variant)
                .delta(1_000_000)
                .reason(StockReason::Received)
                .build(),
        )
        .await?;
    let order = json!({
        "full_name": "سارة حسن",
        "phone": "+201112223334",
        "address": "12 شارع النصر، مدينة نصر",
        "governorate_id": fixture.cairo,
        "shipping_option_id": fixture.standard_shipping,
        "lines": [{"variant_id": fixture.plain_variant, "quantity": 1, "profit": "10"}],
    });
    // Orders to cancel: one per request of each cancel probe and its warm-up.
    let mut placed = Vec::new();
    for _ in 0..40 + 2 * (REPEAT + WARM_UP) {
        let r = engine
            .handle(request(Method::POST, "/api/v1/orders", Some(&order), None))
            .await;
        let body: Value = serde_json::from_slice(r.body())?;
        placed.push(body["data"]["id"].as_i64().ok_or("order not created")?);
    }
    let quote = json!({
        "governorate_id": fixture.cairo,
        "shipping_option_id": fixture.standard_shipping,
        "lines": [{"variant_id": fixture.plain_variant, "quantity": 2, "profit": "10"}],
    });
    let product = fixture.featured_product;
    let (order_body, quote_body) = (order.clone(), quote.clone());
    let order_body2 = order.clone();
    let probes = vec![
        Probe {
            label: "GET /me",
            build: Box::new(|_| request(Method::GET, "/api/v1/me", None, None)),
        },
        Probe {
            label: "GET /categories",
            build: Box::new(|_| request(Method::GET, "/api/v1/categories", None, None)),
        },
        Probe {
            label: "GET /products?per_page=25",
            build: Box::new(|_| request(Method::GET, "/api/v1/products?per_page=25", None, None)),
        },
        Probe {
            label: "GET /products/{id}",
            build: Box::new(move |_| {
                request(
                    Method::GET,
                    &format!("/api/v1/products/{product}"),
                    None,
                    None,
                )
            }),
        },
        Probe {
            label: "GET /shipping/options",
            build: Box::new(|_| request(Method::GET, "/api/v1/shipping/options", None, None)),
        },
        Probe {
            label: "POST /shipping/quote",
            build: Box::new(move |_| {
                request(
                    Method::POST,
                    "/api/v1/shipping/quote",
                    Some(&quote_body),
                    None,
                )
            }),
        },
        Probe {
            label: "GET /orders?per_page=25",
            build: Box::new(|_| request(Method::GET, "/api/v1/orders?per_page=25", None, None)),
        },
        Probe {
            label: "GET /wallet",
            build: Box::new(|_| request(Method::GET, "/api/v1/wallet", None, None)),
        },
        Probe {
            label: "POST /orders",
            build: Box::new(move |_| {
                request(Method::POST, "/api/v1/orders", Some(&order_body), None)
            }),
        },
        Probe {
            label: "POST /orders + Idempotency-Key",
            build: Box::new(move |i| {
                request(
                    Method::POST,
                    "/api/v1/orders",
                    Some(&order_body2),
                    Some(format!("probe-{i}")),
                )
            }),
        },
        cancel_probe(
            "POST /orders/{id}/cancel",
            placed[..REPEAT + WARM_UP].to_vec(),
        ),
    ];
    println!(
        "{:<36} {:>11} {:>13} {:>12}",
        "request (per request)", "statements", "BEGIN/COMMIT", "WAL-writing"
    );
    for probe in &probes {
        measure(&engine, &mut admin, probe).await?;
    }
    // The same order writes for an account with a webhook endpoint: the outbox's insert.
    store
        .insert_webhook(
            NewWebhook::builder()
                .account_id(fixture.marketer_a)
                .url("https://hooks.example/bench".to_owned())
                .secret(WebhookSecret::new("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"))
                .created_at(chrono::Utc::now())
                .build(),
            MAX_WEBHOOKS_PER_ACCOUNT,
        )
        .await?;
    let order_body = order.clone();
    let hooked = [
        Probe {
            label: "POST /orders + webhook",
            build: Box::new(move |_| {
                request(Method::POST, "/api/v1/orders", Some(&order_body), None)
            }),
        },
        cancel_probe(
            "POST /orders/{id}/cancel + webhook",
            placed[REPEAT + WARM_UP..].to_vec(),
        ),
    ];
    for probe in &hooked {
        measure(&engine, &mut admin, probe).await?;
    }
    store.pool().close().await;
    sqlx::raw_sql("DROP DATABASE IF EXISTS commerce_statements WITH (FORCE)")
        .execute(&mut admin)
        .await?;
    Ok(())
}
