//! The sandbox server (`commerce-sandbox`): the whole API on 127.0.0.1:8080, seeded with the
//! demo platform (docs/sandbox.md). By default the store is in memory; with the `sqlx`
//! feature, `--database-url` (or `COMMERCE_DATABASE_URL`) keeps everything in SQLite or PostgreSQL:
//! migrations run on start, the sandbox is seeded only into an empty database, and data
//! survives restarts.
//!
//! ```text
//! cargo install --path . --features sandbox-server --bin commerce-sandbox   # once; then:
//! commerce-sandbox                                # 127.0.0.1:8080, in memory
//! cargo run --example server                      # the same from a checkout (examples/server.rs)
//! cargo run --example server -- --help           # the options (and --version)
//! cargo run --example server -- --addr 0.0.0.0:9000 --public   # reachable from other machines
//! COMMERCE_ADDR=127.0.0.1:9000 cargo run --example server
//! cargo run --example server --features sqlx -- --database-url 'sqlite://commerce.db?mode=rwc'
//! cargo run --example server --features sqlx -- --database-url postgres://postgres@127.0.0.1:5432/test
//! cargo run --example server --features metrics   # and Prometheus text at GET /metrics
//! RUST_LOG=info cargo run --example server          # a log line per request, the engine's events, purges
//! RUST_LOG=info,commerce=debug cargo run --example server   # plus the engine's line per request, with its span's fields
//! ```
//!
//! Every path answers with the engine's JSON (`commerce::axum::app`: its 404 for paths outside
//! the API too). Slow clients are cut off: a request's head must arrive within
//! [`HEADER_READ_TIMEOUT`] (else the connection is closed) and its body within the engine's
//! `Config::body_timeout`, [`BODY_TIMEOUT`] here (else a `408 request_timeout`).
//!
//! The demo keys are fixed and published, so the server binds a loopback address only, unless
//! started with `--public`, which says so on start: anyone who reaches the address can use them.
//!
//! The command line is [`Options`] (clap: `--help`, `--version`, an unknown argument is an
//! error, exit status 2). SIGTERM (what `docker stop` and systemd send) or ctrl-c stops it:
//! no new connection, the requests in flight get [`DRAIN`] to finish, then the webhook
//! dispatcher records its attempts in flight and the store is closed; the exit status is 0.
//!
//! `examples/server.rs` runs this file's [`main`], so that `cargo run --example server` works
//! in a checkout without naming the feature.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::extract::Request;
use axum::middleware::{self, Next};
use axum::response::Response;
use clap::{CommandFactory, Parser};
use commerce::store::{MemoryStore, Store};
use commerce::{Engine, sandbox};

/// How long a client may take to send a request's head.
const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(10);
/// How long a client may take to send a request's body once its head was admitted.
const BODY_TIMEOUT: Duration = Duration::from_secs(20);
/// How long the requests in flight get to finish on SIGTERM or ctrl-c.
const DRAIN: Duration = Duration::from_secs(10);

/// The sandbox server: the whole commerce API, in memory (or in SQLite or PostgreSQL),
/// seeded with the demo platform and its fixed, public demo keys. Never for real data.
#[derive(Debug, Parser)]
#[command(name = "commerce-sandbox", version)]
struct Options {
    /// The address to listen on: a loopback address, unless --public is given
    #[arg(
        long,
        env = "COMMERCE_ADDR",
        value_name = "HOST:PORT",
        default_value = "127.0.0.1:8080"
    )]
    addr: SocketAddr,
    /// Listen on a non-loopback --addr too (the demo keys are public: anyone who reaches the
    /// server can use them)
    #[arg(long)]
    public: bool,
    /// Keep the data in a database (feature `sqlx`), seeded only when empty:
    /// sqlite://commerce.db?mode=rwc or postgres://user@host:port/database
    #[arg(long, env = "COMMERCE_DATABASE_URL", value_name = "URL")]
    database_url: Option<String>,
}

/// The command line, with its environment fallbacks; a non-loopback address without
/// `--public` is refused like a bad argument (exit status 2).
fn options() -> Options {
    let mut options = Options::parse();
    // An empty COMMERCE_DATABASE_URL (or --database-url '') is no database: in memory.
    options.database_url = options.database_url.filter(|url| !url.is_empty());
    if !options.addr.ip().is_loopback() && !options.public {
        Options::command()
            .error(
                clap::error::ErrorKind::ArgumentConflict,
                format!(
                    "refusing to listen on {}: it is not a loopback address, and the sandbox's \
                     demo keys are public (anyone who reaches the server can use them). Use \
                     127.0.0.1, or add --public to listen there anyway.",
                    options.addr
                ),
            )
            .exit();
    }
    if options.public && !options.addr.ip().is_loopback() {
        eprintln!(
            "WARNING: listening on {}, reachable from other machines. The demo keys printed \
             below are public (they are in the docs): anyone who reaches this address can use \
             them. Keep no real data in this sandbox.",
            options.addr
        );
    }
    options
}

/// SIGTERM (what `docker stop` and systemd send) or ctrl-c, whichever comes first.
async fn shutdown_signal() {
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
                tracing::error!(%error, "no SIGTERM handler; ctrl-c only");
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

/// The store: in memory, or the database named by the URL (migrated on open).
async fn open_store(
    database_url: Option<&str>,
) -> Result<(Arc<dyn Store>, String), Box<dyn std::error::Error>> {
    let Some(url) = database_url else {
        return Ok((
            Arc::new(MemoryStore::new()),
            "in-memory store; data is lost on exit".into(),
        ));
    };
    #[cfg(feature = "sqlx")]
    {
        let store: Arc<dyn Store> = if url.starts_with("sqlite:") {
            let store = commerce::sqlx::SqliteStore::connect(url).await?;
            store.migrate().await?;
            Arc::new(store)
        } else if url.starts_with("postgres:") || url.starts_with("postgresql:") {
            let store = commerce::sqlx::PgStore::connect(url).await?;
            store.migrate().await?;
            Arc::new(store)
        } else {
            return Err(
                format!("unsupported database URL {url}: use sqlite:// or postgres://").into(),
            );
        };
        let scheme = url.split(':').next().unwrap_or_default();
        Ok((
            store,
            format!("{scheme} database; data is kept across restarts"),
        ))
    }
    #[cfg(not(feature = "sqlx"))]
    {
        Err(format!(
            "--database-url {url} needs the sqlx feature: cargo run --example server --features sqlx -- --database-url ..."
        )
        .into())
    }
}

/// Ids as plain numbers: `1, 2, 3`.
fn list<T: std::fmt::Display>(ids: &[T]) -> String {
    let ids: Vec<String> = ids.iter().map(ToString::to_string).collect();
    ids.join(", ")
}

/// Logs method, path, status and time of each request; never headers, so never a key.
async fn log_request(request: Request, next: Next) -> Response {
    let method = request.method().clone();
    let path = request.uri().path().to_owned();
    let started = Instant::now();
    let response = next.run(request).await;
    tracing::info!(
        %method,
        %path,
        status = response.status().as_u16(),
        elapsed_ms = started.elapsed().as_secs_f64() * 1000.0,
        "request"
    );
    response
}

/// `GET /metrics`: the engine's metrics (feature `metrics`) in Prometheus text, from a
/// recorder installed for the whole process; the exporter runs no listener of its own.
#[cfg(feature = "metrics")]
fn metrics_route() -> Result<axum::Router, Box<dyn std::error::Error>> {
    let handle = metrics_exporter_prometheus::PrometheusBuilder::new().install_recorder()?;
    commerce::observe::describe_metrics();
    // Without the exporter's own listener nothing else drains its histograms: do it here.
    let upkeep = handle.clone();
    tokio::spawn(async move {
        let mut every = tokio::time::interval(std::time::Duration::from_secs(5));
        loop {
            every.tick().await;
            upkeep.run_upkeep();
        }
    });
    Ok(axum::Router::new().route(
        "/metrics",
        axum::routing::get(move || std::future::ready(handle.render())),
    ))
}

/// Starts the server; returns when it is stopped (SIGTERM or ctrl-c, after its drain) or
/// cannot start.
#[tokio::main]
pub async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // Before anything else: `--help`, `--version` and a bad argument print and exit here.
    let Options {
        addr,
        database_url,
        public: _,
    } = options();
    // Quiet by default (warnings only; RUST_LOG=info for a line per request), on stderr, in
    // colour only on a terminal: the banner below is the last thing printed on start.
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "warn".into()),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let (store, storage) = open_store(database_url.as_deref()).await?;
    let engine = Engine::builder(store)
        .config(sandbox::config())
        .configure(|c| c.body_timeout = Some(BODY_TIMEOUT))
        .build()?;
    let fixture = sandbox::seed_if_empty(&engine).await?;
    let listener = tokio::net::TcpListener::bind(addr).await?;
    // The address bound (a port 0 asked for is the one the system chose).
    let addr = listener.local_addr()?;
    // Beside the API, until the server has drained: the webhook dispatcher (http and loopback
    // receivers are allowed in the sandbox) and the hourly purges of `Idempotency-Key` records
    // and old webhook deliveries; then the store is closed.
    let (stop_background, background_stopped) = tokio::sync::oneshot::channel::<()>();
    let background = tokio::spawn(engine.clone().run_background(async {
        let _ = background_stopped.await;
    }));

    // The owner pages (API access, keys, wallet) with the sandbox's demo login.
    let pages = sandbox::account_pages(&engine, &format!("http://{addr}/api/v1"));
    let app =
        commerce::axum::app(engine).nest_service("/account", commerce::axum::owner_pages(pages));
    #[cfg(feature = "metrics")]
    let app = app.merge(metrics_route()?);
    let app = app.layer(middleware::from_fn(log_request));

    println!("Sandbox API on http://{addr}/api/v1 ({storage})");
    println!("API reference: http://{addr}/api/v1/docs (every operation, one page)\n");
    println!("Demo keys:");
    for (key, what) in sandbox::DEMO_KEYS {
        println!("  {key:<22} {what}");
    }
    match fixture {
        Some(f) => println!(
            "\nSeeded: featured product {} (variants {}, warranties {}); standard shipping {}, Cairo {}.",
            f.featured_product,
            list(&f.featured_variants),
            list(&f.featured_warranties),
            f.standard_shipping,
            f.cairo
        ),
        None => println!("\nThe database already holds data: not seeded again."),
    }
    println!(
        "\nTry:\n  curl -s http://{addr}/api/v1/me -H 'Authorization: Bearer sk_demo_marketer'\n"
    );
    println!("Owner pages (demo login, marked as a demo): http://{addr}/account/login\n");
    #[cfg(feature = "metrics")]
    println!("Metrics: curl -s http://{addr}/metrics\n");

    // On SIGTERM or ctrl-c: no new connection, the requests in flight get `DRAIN` to finish,
    // then the dispatcher records its attempts in flight and the store is closed.
    let options = commerce::http_server::ServeOptions::default()
        .with_header_read_timeout(HEADER_READ_TIMEOUT)
        .with_drain_timeout(Some(DRAIN));
    commerce::axum::serve(listener, app, options, async {
        shutdown_signal().await;
        tracing::info!("shutting down");
    })
    .await?;
    let _ = stop_background.send(());
    background.await?;
    println!("Sandbox stopped.");
    Ok(())
}
