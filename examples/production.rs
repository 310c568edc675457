//! A production `main`: the commerce API on PostgreSQL, nested under `/shop` in an existing
//! axum app with its own routes and state, the webhook dispatcher, scheduled purges, JSON logs,
//! Prometheus metrics, and one shutdown signal that drains everything in order.
//!
//! The dependency lines of such an app (the facade's default features `axum` and `webhooks`
//! included):
//!
//! ```toml
//! [dependencies]
//! commerce = { version = "0.1", features = ["sqlx-postgres", "metrics"] }
//! axum = { version = "0.8", default-features = false, features = ["http1", "tokio"] }
//! tokio = { version = "1", features = ["rt-multi-thread", "macros", "net", "signal", "time"] }
//! tracing = "0.1"
//! tracing-subscriber = { version = "0.3", features = ["env-filter", "json"] }
//! metrics-exporter-prometheus = { version = "0.18", default-features = false }
//! ```
//!
//! Run it (the environment variables are listed in the README, "Environment variables"):
//!
//! ```text
//! export COMMERCE_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test
//! cargo run --example production --features sqlx-postgres,metrics -- setup   # once: prints a key
//! COMMERCE_ADMIN_TOKEN=secret cargo run --example production --features sqlx-postgres,metrics
//!
//! curl -s 127.0.0.1:3000/shop/api/v1/me -H "Authorization: Bearer $KEY"
//! curl -s -X POST 127.0.0.1:3000/admin/orders/1/confirm -H 'Authorization: Bearer secret'
//! curl -s 127.0.0.1:3000/metrics
//! kill -TERM <pid>    # or ctrl-c: drains and exits 0
//! ```
//!
//! On SIGTERM or ctrl-c: the listener closes (no new connection), requests in flight finish
//! (within [`DRAIN`]; the process waits no longer for the others, which end with it), the
//! dispatcher stops claiming and records the attempts it has in flight, the purge task stops,
//! and the pool is closed, so the database sees every session end. `.ci/production.sh` runs all of it against PostgreSQL.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use commerce::model::{Ability, AccountState, ApiStatus, NewAccount, NewCategory, NewProduct};
use commerce::model::{NewVariant, OrderId, OrderStatus, RateTerms};
use commerce::operator::{Conflict, KeySpec};
use commerce::sqlx::sqlx::postgres::{PgConnectOptions, PgPool};
use commerce::sqlx::{PgStore, PoolSettings};
use commerce::store::Unique;
use commerce::{Decimal, Engine, Operator, OperatorError, governorates};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use serde_json::json;
use tokio::sync::watch;
use tracing::{error, info, warn};

/// How long requests in flight may take to finish once the shutdown signal came.
const DRAIN: Duration = Duration::from_secs(10);
/// How long a client may take to send a request head.
const HEADER_READ: Duration = Duration::from_secs(10);
/// How often the idempotency records and the webhook history are purged.
const PURGE_EVERY: Duration = Duration::from_secs(3600);
/// The `application_name` of the app's database sessions (what `pg_stat_activity` shows).
const APPLICATION_NAME: &str = "commerce_production";

type Error = Box<dyn std::error::Error + Send + Sync>;

#[tokio::main]
async fn main() -> Result<(), Error> {
    // JSON logs on stderr, one object per line, filtered by RUST_LOG (default `info`, and
    // `warn` for sqlx, whose notices are not news). The library's spans and events have
    // targets starting with `commerce` (`commerce_core`, `commerce_store_sqlx`, ...), and a
    // directive matches every target it starts: `RUST_LOG=info,commerce=debug` adds the
    // library's debug spans (a line per store call).
    tracing_subscriber::fmt()
        .json()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info,sqlx=warn")),
        )
        .with_writer(std::io::stderr)
        .init();

    let store = connect().await?;
    match std::env::args().nth(1).as_deref() {
        None | Some("serve") => serve(store).await,
        Some("setup") => {
            let engine = Engine::new(Arc::new(store.clone()));
            let outcome = setup(&engine.operator()).await;
            store.pool().close().await;
            outcome
        }
        Some(other) => Err(format!("unknown command {other:?}: expected serve or setup").into()),
    }
}

/// The store, in its own schema of the application's database, migrated.
async fn connect() -> Result<PgStore, Error> {
    let url = std::env::var("COMMERCE_DATABASE_URL")
        .map_err(|_| "COMMERCE_DATABASE_URL is not set (postgres://user@host:port/database)")?;
    let schema = std::env::var("COMMERCE_SCHEMA").unwrap_or_else(|_| "commerce".into());
    let options: PgConnectOptions = url.parse()?;
    // 10 connections per instance (size the total against the server's max_connections), a
    // statement may run or wait for a lock 30 s at most, an operation waits 5 s at most for a
    // free connection.
    let settings = PoolSettings::postgres()
        .with_max_connections(10)
        .with_acquire_timeout(Duration::from_secs(5))
        .with_statement_timeout(Some(Duration::from_secs(30)));
    let options = options.application_name(APPLICATION_NAME);
    let store = PgStore::connect_with_settings(options, &schema, settings).await?;
    store.migrate().await?;
    info!(schema, "store migrated");
    Ok(store)
}

/// The app's own state: its handle on the engine and its metrics.
#[derive(Clone)]
struct AppState {
    engine: Engine,
    /// The store's pool, for the health check.
    pool: PgPool,
    metrics: PrometheusHandle,
    /// The back office's bearer token (`COMMERCE_ADMIN_TOKEN`); `None`: no back-office route.
    admin_token: Option<Arc<str>>,
}

async fn serve(store: PgStore) -> Result<(), Error> {
    let pool = store.pool().clone();
    // The production settings (`Config::default()`): webhooks to `https` on public hosts only.
    let engine = Engine::builder(Arc::new(store))
        .configure(|c| c.body_timeout = Some(Duration::from_secs(20)))
        .build()?;
    let metrics = PrometheusBuilder::new().install_recorder()?;
    commerce::observe::describe_metrics();

    // The one shutdown signal, watched by the server, the dispatcher and the purge task.
    let (trigger, stopping) = watch::channel(false);
    let shutdown = move || {
        let mut stopping = stopping.clone();
        async move {
            // An error means the sender is gone, which is a shutdown as well.
            let _ = stopping.wait_for(|stop| *stop).await;
        }
    };
    tokio::spawn(async move {
        signal().await;
        info!("shutdown signal: draining");
        let _ = trigger.send(true);
    });

    // An app must run the dispatcher (one per instance), or registered webhooks never leave
    // the outbox. It stops claiming on the signal and records the attempts it has in flight.
    let dispatcher = tokio::spawn(engine.dispatcher().run(shutdown()));
    let housekeeping = tokio::spawn(purge_periodically(engine.operator(), shutdown()));

    let state = AppState {
        engine: engine.clone(),
        pool: pool.clone(),
        metrics,
        admin_token: std::env::var("COMMERCE_ADMIN_TOKEN")
            .ok()
            .filter(|t| !t.is_empty())
            .map(Arc::from),
    };
    let app = Router::new()
        .route(
            "/",
            get(|| async { "my shop; the API is under /shop/api/v1\n" }),
        )
        .route("/healthz", get(health))
        .route("/metrics", get(render_metrics))
        .route("/slow/{ms}", get(slow))
        .route("/admin/orders/{id}/confirm", post(confirm_order))
        .with_state(state)
        .nest("/shop", commerce::axum::router(engine));

    let addr = std::env::var("COMMERCE_ADDR").unwrap_or_else(|_| "127.0.0.1:3000".into());
    let listener = tokio::net::TcpListener::bind(&addr).await?;
    info!(addr = %listener.local_addr()?, "listening");

    // The server stops accepting on the signal and waits for its connections, for DRAIN at
    // most after the signal.
    let server = commerce::axum::serve(listener, app, HEADER_READ, shutdown());
    let drained = tokio::select! {
        served = server => { served?; true }
        () = async { shutdown().await; tokio::time::sleep(DRAIN).await } => false,
    };
    if drained {
        info!("requests drained");
    } else {
        warn!(
            seconds = DRAIN.as_secs(),
            "requests still running after the drain time: not waited for"
        );
    }
    // The dispatcher's attempts are bounded by their timeout (10 s by default).
    if let Err(error) = dispatcher.await {
        error!(%error, "dispatcher task failed");
    }
    if let Err(error) = housekeeping.await {
        error!(%error, "purge task failed");
    }
    // Closing waits for the pool's connections to come back (a store operation still running
    // ends within the statement timeout, committed or rolled back) and ends every session.
    pool.close().await;
    info!("stopped");
    Ok(())
}

/// SIGTERM (what a container runtime sends) or ctrl-c.
async fn signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut term) => {
                term.recv().await;
            }
            Err(error) => {
                error!(%error, "no SIGTERM handler; ctrl-c only");
                std::future::pending::<()>().await;
            }
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}

/// Hourly (and once at start): idempotency records past their 24 hours, webhook history past
/// its 30 days. Stops on the shutdown signal, between two purges.
async fn purge_periodically(operator: Operator, shutdown: impl Future<Output = ()>) {
    let mut every = tokio::time::interval(PURGE_EVERY);
    every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            _ = every.tick() => {}
            () = &mut shutdown => return,
        }
        match operator.purge_idempotency().await {
            Ok(count) => info!(count, "idempotency records purged"),
            Err(error) => error!(%error, "idempotency purge failed"),
        }
        match operator.purge_webhook_deliveries().await {
            Ok(count) => info!(count, "webhook deliveries purged"),
            Err(error) => error!(%error, "webhook history purge failed"),
        }
    }
}

/// A JSON response (the app builds axum without its `json` feature).
fn json_response(status: StatusCode, body: serde_json::Value) -> Response {
    let headers = [(header::CONTENT_TYPE, "application/json")];
    (status, headers, body.to_string()).into_response()
}

/// The load balancer's health check: the store answers.
async fn health(State(app): State<AppState>) -> StatusCode {
    match commerce::sqlx::sqlx::query("SELECT 1")
        .execute(&app.pool)
        .await
    {
        Ok(_) => StatusCode::OK,
        Err(_) => StatusCode::SERVICE_UNAVAILABLE,
    }
}

async fn render_metrics(State(app): State<AppState>) -> String {
    app.metrics.render()
}

/// A deliberately slow route of the app (standing for a report, an export): `/slow/{ms}`
/// answers after that many milliseconds (30 s at most). The drain lets it finish.
async fn slow(Path(ms): Path<u64>) -> String {
    let ms = ms.min(30_000);
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("slow request done after {ms} ms\n")
}

/// The back office confirms an order (an operator move), behind the app's own admin token.
async fn confirm_order(
    State(app): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<i64>,
) -> Response {
    let Some(expected) = &app.admin_token else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or_default();
    // Hashes compared, so the comparison's time says nothing about the token.
    if commerce::hash_key(given) != commerce::hash_key(expected) {
        return StatusCode::UNAUTHORIZED.into_response();
    }
    let moved = app
        .engine
        .operator()
        .move_order(OrderId::new(id), OrderStatus::Confirmed, None)
        .await;
    match moved {
        Ok(order) => json_response(
            StatusCode::OK,
            json!({"id": order.id, "number": order.number, "status": order.status.as_str()}),
        ),
        Err(error) => {
            let (status, reason) = match &error {
                OperatorError::NotFound => (StatusCode::NOT_FOUND, None),
                OperatorError::Conflict(conflict) => {
                    (StatusCode::CONFLICT, conflict.reason().map(|r| r.as_str()))
                }
                OperatorError::Invalid(_) => (StatusCode::UNPROCESSABLE_ENTITY, None),
                _ => (StatusCode::INTERNAL_SERVER_ERROR, None),
            };
            json_response(
                status,
                json!({"error": error.to_string(), "reason": reason}),
            )
        }
    }
}

/// The platform's first set-up: shipping to every governorate, one category, product and
/// variant, one approved marketer and a key (printed on stdout: shown once). Run twice, it
/// stops at the category its first run made: slugs, emails and governorate names are unique,
/// and a repeat is refused with `Conflict::Duplicate`.
async fn setup(op: &Operator) -> Result<(), Error> {
    let home = match op
        .create_category(NewCategory::new("أدوات منزلية", "home"))
        .await
    {
        Ok(home) => home,
        Err(OperatorError::Conflict(Conflict::Duplicate(Unique::CategorySlug))) => {
            println!("already set up (category `home` exists); nothing created");
            return Ok(());
        }
        Err(error) => return Err(error.into()),
    };
    let standard = op.create_shipping_option("شحن عادي").await?;
    for name in governorates::EGYPT {
        let governorate = op.create_governorate(name.arabic).await?;
        let charge = RateTerms::charge(Decimal::new(4500, 2));
        op.set_shipping_rate(standard.id, governorate.id, charge)
            .await?;
    }
    let kettle = op
        .create_product(NewProduct::new(
            home.id,
            "غلاية",
            "kettle",
            "https://shop.example.com/kettle",
        ))
        .await?;
    let variant = op
        .add_variant(
            kettle.id,
            NewVariant::new("أبيض", Decimal::new(25000, 2), 40),
        )
        .await?;
    let account = op
        .create_account(NewAccount::marketer(
            "أحمد",
            "متجر أحمد",
            "ahmed@example.com",
            "01012345678",
        ))
        .await?;
    op.set_account_state(account.id, AccountState::Active)
        .await?;
    op.set_api_status(account.id, ApiStatus::Approved).await?;
    let abilities = [
        Ability::CatalogRead,
        Ability::OrdersRead,
        Ability::OrdersWrite,
        Ability::WalletRead,
    ];
    let key = op
        .create_key(account.id, KeySpec::new("متجري", abilities))
        .await?;
    println!(
        "shipping_option_id={} variant_id={}",
        standard.id, variant.id
    );
    println!("key={}", key.plaintext);
    Ok(())
}
