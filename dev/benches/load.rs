//! A load run over loopback, bounded in time, that stops by itself.
//!
//! ```text
//! cargo bench -p commerce-dev --features axum --bench load
//! ```
//!
//! Each phase serves one axum app on `127.0.0.1:0` from a server runtime and drives it from a
//! client runtime with a raw HTTP/1.1 keep-alive client over tokio TCP (one connection per
//! client task, one request in flight per connection), for the same duration and the same
//! number of connections:
//!
//! - `GET /api/v1/me` and `GET /api/v1/products?per_page=25` through `commerce::axum::router`
//!   over the sandbox `MemoryStore` (key `sk_demo_bench`), each against a bare axum handler
//!   on the same path returning the same pre-serialised bytes with the same content type,
//!   the two sides in turns (`LOAD_TURNS` times each, `LOAD_SECONDS / LOAD_TURNS` a turn), so
//!   that a machine whose speed drifts during the run weighs on both alike;
//! - `POST /api/v1/orders` through the engine on `MemoryStore` with 32 clients;
//! - with `--features sqlx` and `COMMERCE_TEST_POSTGRES_URL`: `POST /api/v1/orders` through
//!   the engine on `PgStore` (32 clients) against 32 tasks running the raw-insert transaction
//!   of `common::sql::raw_place_pg` on the same pool (10 connections), for the same time;
//! - with `--features sqlx`: the same pair on `SqliteStore` (a file database), with
//!   `common::sql::raw_place_sqlite`, reported beside PostgreSQL's.
//!
//! What the PostgreSQL comparison measures. Every order of both sides is a one-line order of
//! the sandbox's plain variant (one key, one account, one variant), so both queue on that
//! variant's row lock: the conditional `UPDATE variants SET available = available - 1 WHERE
//! id = $1 AND available >= 1` is the same statement on both sides and holds the row until
//! commit. That is deliberate (it is what a flash sale of one product does), and it is why the
//! figure depends on how long each side holds the lock, not only on how much work it does:
//!
//! - raw side, one transaction: `INSERT` order (its timeline a column of it), the stock
//!   `UPDATE`, `INSERT` line, `COMMIT` (the lock is held over 2 round trips and the commit);
//! - engine side, per request: the key looked up by hash (for this high-volume key, its row's
//!   and its account's versions only, the records kept from their first read; the request
//!   counted from the process's lease of its rate window), the shipping
//!   options with their rates (one statement; the products are priced from the records the
//!   engine keeps, not read: the version-checked checkout), then `place_order`: on PostgreSQL
//!   an order of one variant is one statement outside a transaction block (the order, its
//!   line, the stock `UPDATE` (which compares the variant's price with the one priced) with
//!   its history entry, the product's change in the catalogue change feed (which carries the
//!   product's `updated_at` and compares its revision; the product's own, wide row is not
//!   written), the account's order counters, its meter, any webhook deliveries and the
//!   supplier's totals, in one data-modifying `WITH`), which the server commits as it ends:
//!   the variant lock is held for no round trip at all (the raw side holds it over 2 and the
//!   commit); the feed, counter and meter rows are as contended as the variant, since every
//!   order shares them. 3 statements a request in all (and one per 64 orders that draws ids), against
//!   the raw side's 5, on a pool of 10 connections.
//!
//! Settings (environment): `LOAD_SECONDS` per phase (default 5), `LOAD_CONNECTIONS` for the GET
//! comparison (default 32), `LOAD_TURNS` for the GET pairs (default 10; 1 runs each side
//! once, the engine first), `LOAD_SERVER_THREADS` and `LOAD_CLIENT_THREADS` (default 1 each: on
//! a 2-core machine each side gets about one core; their threads are named `bench-server` and
//! `bench-client`, so a profile tells them apart), `LOAD_PHASES` (default
//! `gets,orders,postgres,sqlite`: the GET pairs, the memory `POST /orders`, the PostgreSQL pair,
//! the SQLite pair; `LOAD_PHASES=postgres` runs that pair alone, for a profile).
//!
//! Goals (BENCHMARKS.md): each GET through axum ≥ 70% of the bare handler's requests per
//! second; `POST /orders` on PostgreSQL ≥ 80% of the raw
//! transactions per second (issue 24; it was 50%). Each prints a `ratio` line with its goal.

mod common;

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::routing::get;
use commerce::store::MemoryStore;
use commerce::{Engine, sandbox};
use common::http::{drive, drive_in_turns, engine_body, raw_request, ready_json, report, serve};
use common::report::{self, Goal, Unit};
use common::{env_or, order_body, runtime};

fn main() {
    // `cargo bench` passes `--bench`; this program takes its settings from the environment.
    const PHASES: [&str; 4] = ["gets", "orders", "postgres", "sqlite"];
    let phases = env_or("LOAD_PHASES", PHASES.join(","));
    // A misspelt phase would otherwise run nothing of what was asked, silently: checked
    // before the sandbox is seeded (an empty name between commas is passed over).
    let asked = || phases.split(',').map(str::trim).filter(|p| !p.is_empty());
    if let Some(unknown) = asked().find(|p| !PHASES.contains(p)) {
        panic!("LOAD_PHASES names an unknown phase {unknown:?}; the phases: {PHASES:?}");
    }
    let phase = |name: &str| asked().any(|p| p == name);
    let seconds: f64 = env_or("LOAD_SECONDS", 5.0);
    let duration = Duration::from_secs_f64(seconds);
    let connections: usize = env_or("LOAD_CONNECTIONS", 32);
    let turns: u32 = env_or("LOAD_TURNS", 10);
    let server = runtime("bench-server", env_or("LOAD_SERVER_THREADS", 1));
    let client = runtime("bench-client", env_or("LOAD_CLIENT_THREADS", 1));

    let engine = Engine::new(Arc::new(MemoryStore::new()));
    let fixture = server
        .block_on(sandbox::seed(&engine))
        .expect("sandbox seeds");
    server.block_on(common::endless_stock(&engine, fixture.plain_variant));
    let engine_addr = serve(&server, commerce::axum::router(engine.clone()));

    println!(
        "load run: {seconds} s per phase, server threads {}, client threads {}, loopback",
        env_or("LOAD_SERVER_THREADS", 1usize),
        env_or("LOAD_CLIENT_THREADS", 1usize)
    );
    let paths = ["/api/v1/me", "/api/v1/products?per_page=25"];
    for path in paths.into_iter().filter(|_| phase("gets")) {
        let request = raw_request("GET", path, b"");
        // The bare handler returns exactly the bytes the engine answers with.
        let body = server.block_on(engine_body(&engine, path));
        let route = path.split('?').next().expect("path");
        let bare = Router::new().route(
            route,
            get(move || {
                let body = body.clone();
                async move { ready_json(body) }
            }),
        );
        let bare_addr = serve(&server, bare);
        let [through, baseline] = drive_in_turns(
            &client,
            [engine_addr, bare_addr],
            request,
            200,
            connections,
            duration,
            turns,
        );
        report(
            &format!("GET {path} engine via axum"),
            connections,
            &through,
        );
        report(
            &format!("GET {path} bare axum handler"),
            connections,
            &baseline,
        );
        report::ratio(
            &format!("engine/bare GET {path} ({connections} conns)"),
            through.rps() / baseline.rps(),
            Unit::Percent,
            Goal::AtLeast(70.0),
        );
    }

    if phase("orders") {
        let body = order_body(&fixture);
        let request = raw_request("POST", "/api/v1/orders", &body);
        let orders = drive(&client, engine_addr, request, 201, 32, duration);
        report("POST /api/v1/orders engine via axum (memory)", 32, &orders);
    }
    #[cfg(feature = "sqlx")]
    if phase("postgres") {
        postgres_orders(&server, &client, duration);
    }
    #[cfg(feature = "sqlx")]
    if phase("sqlite") {
        sqlite_orders(&server, &client, duration);
    }
    #[cfg(not(feature = "sqlx"))]
    println!("POST /api/v1/orders on PostgreSQL and SQLite: skipped (run with --features sqlx)");
    server.shutdown_background();
    client.shutdown_background();
}

/// The raw-insert transaction of `common::sql` on a database's pool.
#[cfg(feature = "sqlx")]
type RawPlace = Arc<
    dyn Fn(
            commerce::model::NewOrder,
        ) -> std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>
        + Send
        + Sync,
>;

/// [`sql_orders`] on `PgStore` (database `commerce_load`, made afresh).
#[cfg(feature = "sqlx")]
fn postgres_orders(
    server: &tokio::runtime::Runtime,
    client: &tokio::runtime::Runtime,
    duration: Duration,
) {
    let Some(url) = common::sql::postgres_url("POST /api/v1/orders on PostgreSQL") else {
        return;
    };
    let store = server.block_on(common::sql::fresh_pg(&url, "commerce_load"));
    let pool = store.pool().clone();
    let raw: RawPlace = Arc::new(move |new| {
        let pool = pool.clone();
        Box::pin(async move { common::sql::raw_place_pg(&pool, &new).await })
    });
    sql_orders(server, client, duration, "postgres", Arc::new(store), raw);
}

/// [`sql_orders`] on `SqliteStore` (a file database in the temporary directory, made afresh
/// and removed after), reported beside PostgreSQL's with no goal of its own.
#[cfg(feature = "sqlx")]
fn sqlite_orders(
    server: &tokio::runtime::Runtime,
    client: &tokio::runtime::Runtime,
    duration: Duration,
) {
    let path = std::env::temp_dir().join(format!("commerce-load-{}.db", std::process::id()));
    let path = path.to_str().expect("a UTF-8 temporary path").to_owned();
    let store = server.block_on(common::sql::fresh_sqlite(&path));
    let pool = store.pool().clone();
    let raw: RawPlace = Arc::new(move |new| {
        let pool = pool.clone();
        Box::pin(async move { common::sql::raw_place_sqlite(&pool, &new).await })
    });
    sql_orders(server, client, duration, "sqlite", Arc::new(store), raw);
    common::sql::remove_sqlite(&path);
}

/// `POST /api/v1/orders` through axum and the engine on `store`, 32 clients, against 32 tasks
/// running the raw-insert transaction of `common::sql` (`raw`) on the same pool for the same
/// time (what each side does per order: see the module docs).
#[cfg(feature = "sqlx")]
fn sql_orders(
    server: &tokio::runtime::Runtime,
    client: &tokio::runtime::Runtime,
    duration: Duration,
    database: &str,
    store: Arc<dyn commerce::store::Store>,
    raw: RawPlace,
) {
    use std::sync::atomic::{AtomicU64, Ordering};
    use std::time::Instant;

    let engine = Engine::new(store.clone());
    let (fixture, template) = server.block_on(common::seeded_template(store));
    let addr = serve(server, commerce::axum::router(engine.clone()));
    let body = order_body(&fixture);
    let through = drive(
        client,
        addr,
        raw_request("POST", "/api/v1/orders", &body),
        201,
        32,
        duration,
    );
    report(
        &format!("POST /api/v1/orders engine via axum ({database})"),
        32,
        &through,
    );

    static NEXT: AtomicU64 = AtomicU64::new(0);
    let template = Arc::new(template);
    let next_order = {
        let template = template.clone();
        move || {
            let mut new = (*template).clone();
            new.number = format!("EG-L{:07}", NEXT.fetch_add(1, Ordering::Relaxed));
            new
        }
    };

    // The raw transaction behind a bare axum handler: the same HTTP as the engine's side and
    // an answer of the same bytes (an order the engine placed), none of the engine's work (no
    // key, no checkout's reads, no pricing, no rendering).
    let answer = server.block_on(common::http::engine_answer(
        &engine,
        "POST",
        "/api/v1/orders",
        bytes::Bytes::from(body.clone()),
        201,
    ));
    let bare = {
        let (raw, next_order) = (raw.clone(), next_order.clone());
        Router::new().route(
            "/api/v1/orders",
            axum::routing::post(move |_body: bytes::Bytes| {
                let (raw, new, answer) = (raw.clone(), next_order(), answer.clone());
                async move {
                    raw(new).await;
                    let mut response = ready_json(answer);
                    *response.status_mut() = axum::http::StatusCode::CREATED;
                    response
                }
            }),
        )
    };
    let bare_addr = serve(server, bare);
    let over_http = drive(
        client,
        bare_addr,
        raw_request("POST", "/api/v1/orders", &body),
        201,
        32,
        duration,
    );
    report(
        &format!("raw transaction via bare axum handler ({database})"),
        32,
        &over_http,
    );

    let (count, seconds) = client.block_on(async move {
        let started = Instant::now();
        let deadline = started + duration;
        let tasks: Vec<_> = (0..32)
            .map(|_| {
                let (raw, next_order) = (raw.clone(), next_order.clone());
                tokio::spawn(async move {
                    let mut done = 0u64;
                    while Instant::now() < deadline {
                        raw(next_order()).await;
                        done += 1;
                    }
                    done
                })
            })
            .collect();
        let mut count = 0;
        for task in tasks {
            count += task.await.expect("raw task");
        }
        (count, started.elapsed().as_secs_f64())
    });
    let raw_rps = count as f64 / seconds;
    println!(
        "{:<44} tasks  32  {raw_rps:>9.0} tx/s   ({count} transactions, {seconds:.1} s)",
        format!("raw insert transaction ({database})")
    );
    report::ratio(
        &format!("engine/raw transaction POST /api/v1/orders {database} (32 clients)"),
        through.rps() / raw_rps,
        Unit::Percent,
        if database.starts_with("postgres") {
            Goal::AtLeast(80.0)
        } else {
            Goal::None
        },
    );
    report::ratio(
        &format!(
            "engine/bare handler's raw transaction POST /api/v1/orders {database} (32 clients)"
        ),
        through.rps() / over_http.rps(),
        Unit::Percent,
        Goal::None,
    );
}
