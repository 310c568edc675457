//! A production `main`: the commerce API on PostgreSQL, nested under `/shop` in an existing
//! axum app with its own routes and state, the owner pages under `/account`, the webhook
//! dispatcher, scheduled purges, JSON logs, Prometheus metrics behind the back office's token,
//! and one shutdown signal that drains everything in order. What every example shares (the
//! admin token, the dispatcher and purges, the drain) is in `examples/support/mod.rs`.
//!
//! The dependency lines of such an app (the facade's default features `axum` and `webhooks`
//! included; `http`, `hyper`, `hyper-util`, `serde_json` and `rand` for `support/mod.rs`):
//!
//! ```toml
//! [dependencies]
//! commerce = { version = "0.1", features = ["sqlx-postgres", "metrics"] }
//! axum = { version = "0.8", default-features = false, features = ["http1", "tokio"] }
//! async-trait = "0.1"
//! tokio = { version = "1", features = ["rt-multi-thread", "macros", "net", "signal", "time"] }
//! serde = { version = "1", features = ["derive"] }
//! figment = { version = "0.10", features = ["env"] }
//! tracing = "0.1"
//! tracing-subscriber = { version = "0.3", features = ["env-filter", "json"] }
//! metrics-exporter-prometheus = { version = "0.18", default-features = false }
//! ```
//!
//! Its settings are [`Settings`], loaded with figment from the `COMMERCE_*` environment
//! variables (listed in the README, "Environment variables"): `COMMERCE_ADDR`, ..., and the
//! engine's, the pool's and the webhook dispatcher's own settings under `COMMERCE_ENGINE__`,
//! `COMMERCE_POOL__` and `COMMERCE_DISPATCHER__` (`COMMERCE_ENGINE__HOLD_DAYS=7`,
//! `COMMERCE_POOL__MAX_CONNECTIONS=20`, `COMMERCE_POOL__STATEMENT_TIMEOUT=10s`,
//! `COMMERCE_DISPATCHER__TIMEOUT=10s`: any field of `Config`, `PoolSettings` and
//! `DispatcherConfig`). Run it:
//!
//! ```text
//! export COMMERCE_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test
//! cargo run --example production --features sqlx-postgres,metrics -- setup   # once: prints a key
//! export COMMERCE_ADMIN_TOKEN="$(openssl rand -hex 32)"   # at least 32 characters
//! cargo run --example production --features sqlx-postgres,metrics
//!
//! curl -s 127.0.0.1:3000/shop/api/v1/me -H "Authorization: Bearer $KEY"
//! curl -s 127.0.0.1:3000/shop/api/v1/orders -H "Authorization: Bearer $KEY" \
//!   -H 'Content-Type: application/json' -d '{"full_name":"سارة حسن","phone":"01112223334",
//!   "address":"12 شارع النصر","governorate_id":1,"shipping_option_id":1,
//!   "lines":[{"variant_id":1,"quantity":1,"profit":"40.00"}]}'   # order 1 (setup placed none)
//! curl -s -X POST 127.0.0.1:3000/admin/orders/1/confirm -H "Authorization: Bearer $COMMERCE_ADMIN_TOKEN"
//! curl -s 127.0.0.1:3000/metrics -H "Authorization: Bearer $COMMERCE_ADMIN_TOKEN"
//! kill -TERM <pid>    # or ctrl-c: drains and exits 0
//! ```
//!
//! The back office's routes (`POST /admin/orders/{id}/confirm`, `GET /metrics`) answer 401
//! without the token, and exist only when `COMMERCE_ADMIN_TOKEN` is set; a token shorter than
//! 32 characters stops the start. The app listens on `127.0.0.1:3000` unless `COMMERCE_ADDR`
//! names another address and `--public` is given (behind a reverse proxy, loopback is what it
//! needs). The owner pages are served for `https` (their cookies are `Secure`), behind the
//! app's own login: here none is wired, so every visitor gets 401. The `/slow/{ms}` route
//! exists only when `COMMERCE_SLOW_ROUTE=1` (`.ci/production.sh` sets it to test the drain).
//!
//! On SIGTERM or ctrl-c: the listener closes (no new connection), requests in flight finish
//! (within `support::DRAIN`, 10 s; the process waits no longer for the others, which end with
//! it), the dispatcher stops claiming and records the attempts it has in flight (each bounded
//! by its attempt timeout, 15 s by default), the purge task stops, and the pool is closed, so
//! the database sees every session end. `.ci/production.sh` runs all of it against PostgreSQL.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use axum::Router;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, StatusCode, header, request::Parts};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use commerce::domain::keys::KeySpec;
use commerce::model::{Ability, AccountId, AccountState, ApiStatus, NewAccount, NewCategory};
use commerce::model::{NewProduct, NewVariant, RateTerms};
use commerce::operator::Conflict;
use commerce::owner_pages::{OwnerLogin, OwnerPages};
use commerce::sqlx::sqlx::postgres::{PgConnectOptions, PgPool};
use commerce::sqlx::{PgStore, PoolSettings};
use commerce::store::Unique;
use commerce::webhooks::DispatcherConfig;
use commerce::{
    Decimal, Engine, config::Config, governorates, operator::Operator, operator::OperatorError,
};
use figment::Figment;
use figment::providers::{Env, Serialized};
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use serde::Deserialize;
use tracing::info;

#[path = "support/mod.rs"]
mod support;

use support::AdminToken;

/// How long a client may take to send a request head.
const HEADER_READ: Duration = Duration::from_secs(10);
/// The `application_name` of the app's database sessions (what `pg_stat_activity` shows).
const APPLICATION_NAME: &str = "commerce_production";

type Error = Box<dyn std::error::Error + Send + Sync>;

/// The app's settings: every `COMMERCE_*` variable, read by figment (`COMMERCE_ADDR` is
/// `addr`, `COMMERCE_POOL__MAX_CONNECTIONS` is `pool.max_connections`); what is not set keeps
/// its default. Other `COMMERCE_*` variables (the tests' own) are ignored; a misspelt field
/// of `engine`, `pool` or `dispatcher` is an error.
#[derive(Debug, Deserialize)]
struct Settings {
    /// `COMMERCE_ADDR`: where to listen (a loopback address unless `--public`).
    addr: String,
    /// `COMMERCE_DATABASE_URL`: the PostgreSQL database (required).
    database_url: Option<String>,
    /// `COMMERCE_SCHEMA`: the store's own schema in it.
    schema: String,
    /// `COMMERCE_ADMIN_TOKEN`: the back office's bearer token (none: no back-office route).
    admin_token: Option<String>,
    /// `COMMERCE_SLOW_ROUTE=1`: the `/slow/{ms}` route `.ci/production.sh` tests the drain with.
    slow_route: bool,
    /// `COMMERCE_ENGINE__*`: the engine's settings (`commerce::config::Config`).
    engine: Config,
    /// `COMMERCE_POOL__*`: the store's pool (`commerce::sqlx::PoolSettings`).
    pool: PoolSettings,
    /// `COMMERCE_DISPATCHER__*`: the webhook dispatcher's (`commerce::webhooks::DispatcherConfig`;
    /// none named: the defaults).
    #[serde(default)]
    dispatcher: DispatcherConfig,
}

impl Settings {
    /// The defaults, then the `COMMERCE_*` variables over them.
    fn load() -> Result<Self, String> {
        let settings = Figment::new()
            .merge(Serialized::default("addr", "127.0.0.1:3000"))
            .merge(Serialized::default("schema", "commerce"))
            .merge(Serialized::default("slow_route", false))
            // A body must arrive within 20 s (the engine's default is 30 s).
            .merge(Serialized::default("engine.body_timeout", "20s"))
            // An operation waits 5 s at most for a free connection (the default is 30 s);
            // 10 connections per instance (size the total against the server's
            // max_connections), a statement may run or wait for a lock 30 s at most.
            .merge(Serialized::default("pool.acquire_timeout", "5s"))
            .merge(Env::prefixed("COMMERCE_").split("__"))
            // `COMMERCE_SLOW_ROUTE=1` (and `true`, `yes`, `on`) for a flag.
            .extract_lossy()
            // figment's message names the variable's key and what was expected.
            .map_err(|error| error.to_string())?;
        Ok(settings)
    }
}

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

    // `serve` (the default) or `setup`, and `--public`; anything else is refused.
    let arguments = support::args::arguments(&["serve", "setup", "--public"], 0)?;
    let public = arguments.iter().any(|a| a == "--public");
    let setting_up = arguments.iter().any(|a| a == "setup");
    let settings = Settings::load()?;
    let store = connect(&settings).await?;
    if setting_up {
        let engine = Engine::new(Arc::new(store.clone()));
        let outcome = setup(&engine.operator()).await;
        store.pool().close().await;
        outcome
    } else {
        serve(store, settings, public).await
    }
}

/// The store, in its own schema of the application's database, migrated.
async fn connect(settings: &Settings) -> Result<PgStore, Error> {
    let url = settings
        .database_url
        .as_deref()
        .ok_or("COMMERCE_DATABASE_URL is not set (postgres://user@host:port/database)")?;
    let options: PgConnectOptions = url.parse()?;
    let options = options.application_name(APPLICATION_NAME);
    let schema = &settings.schema;
    let store = PgStore::connect_with_settings(options, schema, settings.pool.clone()).await?;
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
    /// The back office's bearer token (`COMMERCE_ADMIN_TOKEN`); `None`: no back-office
    /// route, no metrics.
    admin: Option<AdminToken>,
}

/// Who is logged in on the owner pages: the account the app's own session middleware put in
/// the request's extensions after its login. This app wires no login, so nobody is (401).
struct AppSession;

#[async_trait]
impl OwnerLogin for AppSession {
    async fn logged_in(&self, request: &Parts) -> Option<AccountId> {
        request.extensions.get::<AccountId>().copied()
    }
}

async fn serve(store: PgStore, settings: Settings, public: bool) -> Result<(), Error> {
    // Refused before anything starts: a back-office token that is too short, an address that
    // is not loopback without `--public`.
    let admin = match settings.admin_token.as_deref() {
        Some(token) if !token.is_empty() => Some(AdminToken::new(token)?),
        _ => None,
    };
    let addr = support::listen_on(&settings.addr, public)?;
    let pool = store.pool().clone();
    // The production settings (`Config::default()`, and `COMMERCE_ENGINE__*`): webhooks to
    // `https` on public hosts only. The settings are checked here.
    let engine = Engine::builder(Arc::new(store))
        .config(settings.engine)
        .dispatcher_config(settings.dispatcher)
        .build()?;
    let metrics = PrometheusBuilder::new().install_recorder()?;
    commerce::observe::describe_metrics();

    // An app must run the dispatcher (one per instance), or registered webhooks never leave
    // the outbox; and the purges. Both stop on the one shutdown signal (SIGTERM or ctrl-c).
    let background = support::Background::start(&engine);

    // The owner pages, served over https by the proxy in front: their cookies are `Secure`.
    // (Several instances share one CSRF secret: `with_csrf_secret`.)
    let pages = OwnerPages::new(engine.clone(), AppSession)
        .mounted_at("/account")
        .with_api_url("/shop/api/v1")
        .with_secure_cookies(true);
    if admin.is_none() {
        info!("COMMERCE_ADMIN_TOKEN unset: no back-office route, no /metrics");
    }
    let state = AppState {
        engine: engine.clone(),
        pool: pool.clone(),
        metrics,
        admin,
    };
    let mut app = Router::new()
        .route(
            "/",
            get(|| async { "my shop; the API is under /shop/api/v1\n" }),
        )
        .route("/healthz", get(health))
        .route("/metrics", get(render_metrics))
        .route("/admin/orders/{id}/confirm", post(confirm_order));
    if settings.slow_route {
        app = app.route("/slow/{ms}", get(slow));
    }
    let app = app
        .with_state(state)
        .nest("/shop", commerce::axum::router(engine))
        .nest_service("/account", commerce::axum::owner_pages(pages));

    let listener = tokio::net::TcpListener::bind(addr).await?;
    info!(addr = %listener.local_addr()?, "listening");

    // The server stops accepting on the signal and waits for its connections, for
    // `support::DRAIN` at most after the signal; then the dispatcher and purges stop and the
    // store is closed (`Engine::run_background`): closing its pool waits for the connections to
    // come back (a store operation still running ends within the statement timeout, committed
    // or rolled back) and ends every session.
    let options = commerce::http_server::ServeOptions::default()
        .with_header_read_timeout(HEADER_READ)
        .with_drain_timeout(Some(support::DRAIN));
    let server = commerce::axum::serve(listener, app, options, background.shutdown());
    background.serve(server).await?;
    info!("stopped");
    Ok(())
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

/// Prometheus text, for the back office's scraper (its token).
async fn render_metrics(State(app): State<AppState>, headers: HeaderMap) -> Response {
    match &app.admin {
        None => StatusCode::NOT_FOUND.into_response(),
        Some(admin) if admin.allows(&headers) => app.metrics.render().into_response(),
        Some(_) => StatusCode::UNAUTHORIZED.into_response(),
    }
}

/// A deliberately slow route of the app (standing for a report, an export), which CI uses to
/// test the drain: `/slow/{ms}` answers after that many milliseconds (30 s at most).
async fn slow(Path(ms): Path<u64>) -> String {
    let ms = ms.min(30_000);
    // CI waits for this line before it sends SIGTERM: the request is then surely in flight.
    info!(ms, "slow request started");
    tokio::time::sleep(Duration::from_millis(ms)).await;
    format!("slow request done after {ms} ms\n")
}

/// The back office confirms an order (an operator move), behind the admin token.
async fn confirm_order(
    State(app): State<AppState>,
    headers: HeaderMap,
    Path(id): Path<i64>,
) -> Response {
    let Some(admin) = &app.admin else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let (status, body) = support::confirm_order(&app.engine, admin, &headers, id).await;
    json_response(status, body)
}

/// The platform's first set-up: shipping to every governorate, one category, product and
/// variant, one approved marketer and a key (printed on stdout: shown once). Run twice, it
/// stops at the category its first run made: slugs, emails and governorate names are unique,
/// and a repeat is refused with `Conflict::Duplicate`.
async fn setup(op: &Operator) -> Result<(), Error> {
    let home = match op
        .create_category(NewCategory::new(
            "أدوات منزلية".to_owned(),
            "home".to_owned(),
            None,
        ))
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
        .create_product(
            NewProduct::builder()
                .category_id(home.id)
                .title("غلاية".to_owned())
                .slug("kettle".to_owned())
                .url("https://shop.example.com/kettle".to_owned())
                .build(),
        )
        .await?;
    let variant = op
        .add_variant(
            kettle.id,
            NewVariant::builder()
                .label("أبيض".to_owned())
                .price(Decimal::new(25000, 2))
                .available(40)
                .build(),
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
    let abilities = vec![
        Ability::CatalogRead,
        Ability::OrdersRead,
        Ability::OrdersWrite,
        Ability::WalletRead,
    ];
    let key = op
        .create_key(
            account.id,
            KeySpec::new("متجري".to_owned(), abilities, None, None),
        )
        .await?;
    println!(
        "shipping_option_id={} variant_id={}",
        standard.id, variant.id
    );
    println!("key={}", key.plaintext);
    Ok(())
}
