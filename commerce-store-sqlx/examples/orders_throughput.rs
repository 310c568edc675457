//! A quick throughput figure (not a criterion bench): `POST /api/v1/orders` through
//! `Engine::handle`, 16 concurrent client tasks for about 5 seconds, on each store.
//!
//! ```text
//! cargo run --release -p commerce-store-sqlx --example orders_throughput [seconds] [tasks]
//! ```
//!
//! MemoryStore and SQLite (a temporary file) always run; PostgreSQL runs in a fresh schema
//! (dropped afterwards) when `COMMERCE_TEST_POSTGRES_URL` or `DATABASE_URL` is set. Every store
//! is seeded with the sandbox; orders use the key `sk_demo_bench` (1,000,000 a minute) and one
//! piece of the plain variant, whose stock is raised first.

use std::str::FromStr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use commerce_core::Engine;
use commerce_core::model::{NewStockAdjustment, StockReason};
use commerce_core::sandbox;
use commerce_core::store::{MemoryStore, prelude::*};
use commerce_store_sqlx::sqlx::postgres::PgConnectOptions;
use commerce_store_sqlx::sqlx::sqlite::SqliteConnectOptions;
use commerce_store_sqlx::sqlx::{self, AssertSqlSafe, Connection, PgConnection};
use commerce_store_sqlx::{PgStore, SqliteStore};
use serde_json::json;

type AnyError = Box<dyn std::error::Error + Send + Sync>;

/// What one run measured.
struct Figures {
    created: u64,
    other: u64,
    elapsed: Duration,
    worst: Duration,
}

async fn measure(store: Arc<dyn Store>, seconds: u64, tasks: usize) -> Result<Figures, AnyError> {
    let engine = Engine::new(store);
    let fixture = sandbox::seed(&engine).await?;
    engine
        .operator()
        .adjust_stock(
            NewStockAdjustment::builder()
                .variant_id(fixture.plain_variant)
                .delta(100_000_000)
                .reason(StockReason::Received)
                .build(),
        )
        .await?;
    let body = Bytes::from(
        json!({
            "full_name": "سارة حسن",
            "phone": "+201112223334",
            "address": "12 شارع النصر، مدينة نصر",
            "governorate_id": fixture.cairo,
            "shipping_option_id": fixture.standard_shipping,
            "lines": [{"variant_id": fixture.plain_variant, "quantity": 1, "profit": "10"}],
        })
        .to_string(),
    );
    let created = Arc::new(AtomicU64::new(0));
    let other = Arc::new(AtomicU64::new(0));
    let worst_us = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    // Each task checks the deadline itself: on MemoryStore `handle` never waits, so a timer
    // might not get a turn on busy workers.
    let deadline = started + Duration::from_secs(seconds);
    let workers: Vec<_> = (0..tasks)
        .map(|_| {
            let (engine, body) = (engine.clone(), body.clone());
            let (created, other, worst_us) = (created.clone(), other.clone(), worst_us.clone());
            tokio::spawn(async move {
                while Instant::now() < deadline {
                    let request = http::Request::post("/api/v1/orders")
                        .header("authorization", "Bearer sk_demo_bench")
                        .header("content-type", "application/json")
                        .body(body.clone())
                        .expect("request");
                    let sent = Instant::now();
                    let response = engine.handle(request).await;
                    worst_us.fetch_max(sent.elapsed().as_micros() as u64, Ordering::Relaxed);
                    if response.status() == 201 {
                        created.fetch_add(1, Ordering::Relaxed);
                    } else if other.fetch_add(1, Ordering::Relaxed) == 0 {
                        eprintln!(
                            "  first non-201: {} {}",
                            response.status(),
                            String::from_utf8_lossy(response.body())
                        );
                    }
                    // Let the other clients in, as a server's socket reads would.
                    tokio::task::yield_now().await;
                }
            })
        })
        .collect();
    for worker in workers {
        worker.await?;
    }
    Ok(Figures {
        created: created.load(Ordering::Relaxed),
        other: other.load(Ordering::Relaxed),
        elapsed: started.elapsed(),
        worst: Duration::from_micros(worst_us.load(Ordering::Relaxed)),
    })
}

fn report(name: &str, f: &Figures) {
    let secs = f.elapsed.as_secs_f64();
    println!(
        "{name:<12} {:>9.0} orders/s  ({} created, {} other, {:.1} s, worst {:.1} ms)",
        f.created as f64 / secs,
        f.created,
        f.other,
        secs,
        f.worst.as_secs_f64() * 1000.0
    );
}

fn remove_sqlite_files(path: &std::path::Path) {
    for suffix in ["", "-wal", "-shm"] {
        let mut p = path.as_os_str().to_owned();
        p.push(suffix);
        let _ = std::fs::remove_file(p);
    }
}

#[tokio::main]
async fn main() -> Result<(), AnyError> {
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(5);
    let tasks: usize = args.next().map(|s| s.parse()).transpose()?.unwrap_or(16);
    println!(
        "POST /api/v1/orders through Engine::handle, {tasks} tasks, {seconds} s per store, \
         {} worker threads",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    );

    let memory = measure(Arc::new(MemoryStore::new()), seconds, tasks).await?;
    report("MemoryStore", &memory);

    let path = std::env::temp_dir().join(format!("orders-throughput-{}.db", std::process::id()));
    remove_sqlite_files(&path);
    let sqlite = SqliteStore::connect_with(SqliteConnectOptions::new().filename(&path)).await?;
    sqlite.migrate().await?;
    let pool = sqlite.pool().clone();
    let figures = measure(Arc::new(sqlite), seconds, tasks).await;
    pool.close().await;
    remove_sqlite_files(&path);
    report("SQLite file", &figures?);

    let url = std::env::var("COMMERCE_TEST_POSTGRES_URL")
        .ok()
        .filter(|u| !u.trim().is_empty());
    let Some(url) = url else {
        println!("PostgreSQL   not run: set COMMERCE_TEST_POSTGRES_URL (or DATABASE_URL)");
        return Ok(());
    };
    let schema = format!("commerce_throughput_{}", std::process::id());
    let mut admin = PgConnection::connect(&url).await?;
    sqlx::raw_sql(AssertSqlSafe(format!("CREATE SCHEMA {schema}")))
        .execute(&mut admin)
        .await?;
    let options = PgConnectOptions::from_str(&url)?;
    let figures = async {
        let pg = PgStore::connect_with_schema(options, &schema).await?;
        pg.migrate().await?;
        let pool = pg.pool().clone();
        let figures = measure(Arc::new(pg), seconds, tasks).await;
        pool.close().await;
        figures
    }
    .await;
    sqlx::raw_sql(AssertSqlSafe(format!("DROP SCHEMA {schema} CASCADE")))
        .execute(&mut admin)
        .await?;
    admin.close().await?;
    report("PostgreSQL", &figures?);
    Ok(())
}
