//! What the example apps share (`embed_axum`, `embed_warp`, `hyper_service`, `production`):
//! where they listen (loopback unless told otherwise), the back office's token and its one
//! route, and what an app runs besides the API ([`Engine::run_background`]: the webhook
//! dispatcher and the hourly purges), with one shutdown that stops accepting, lets requests in
//! flight finish (for [`DRAIN`] at most), then stops the background work and closes the store.
//!
//! An app copied from an example copies this file with it (`#[path = "support/mod.rs"] mod
//! support;`); it needs `commerce`, `tokio`, `http`, `serde_json`,
//! `rand` and `tracing`.

// Each example uses the part it needs.
#![allow(dead_code)]

pub mod args;

use std::future::Future;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use commerce::model::{OrderId, OrderStatus};
use commerce::{Engine, operator::OperatorError};
use http::{HeaderMap, StatusCode};
use serde_json::{Value, json};
use tokio::sync::{oneshot, watch};
use tokio::task::JoinHandle;
use tracing::{error, info, warn};

/// Fewest characters of the back office's token (`COMMERCE_ADMIN_TOKEN`): a shorter one is
/// refused on start.
pub const MIN_ADMIN_TOKEN: usize = 32;
/// How long requests in flight may take to finish once the shutdown signal came.
pub const DRAIN: Duration = Duration::from_secs(10);

/// `text` as the address to listen on: a loopback address, or any with `public` (the
/// examples serve the sandbox's published demo keys and a back-office route: reachable from
/// other machines only when asked for, as the sandbox server does).
pub fn listen_on(text: &str, public: bool) -> Result<SocketAddr, String> {
    let addr: SocketAddr = text
        .parse()
        .map_err(|e| format!("bad address {text}: {e}"))?;
    if !addr.ip().is_loopback() && !public {
        return Err(format!(
            "refusing to listen on {addr}: it is not a loopback address, and this example serves \
             public demo keys. Use 127.0.0.1, or add --public to listen there anyway."
        ));
    }
    if !addr.ip().is_loopback() {
        warn!(%addr, "listening on a non-loopback address: reachable from other machines");
        eprintln!("WARNING: {addr} is reachable from other machines.");
    }
    Ok(addr)
}

/// The address from `COMMERCE_ADDR` (else `default`), loopback unless the command line says
/// `--public` ([`listen_on`]), its only argument (any other is refused).
pub fn listen_addr(default: &str) -> Result<SocketAddr, String> {
    let public = args::arguments(&["--public"], 0)?
        .iter()
        .any(|arg| arg == "--public");
    let text = std::env::var("COMMERCE_ADDR").unwrap_or_else(|_| default.to_owned());
    listen_on(&text, public)
}

/// The back office's bearer token (at least [`MIN_ADMIN_TOKEN`] characters).
#[derive(Clone)]
pub struct AdminToken(Arc<str>);

impl std::fmt::Debug for AdminToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AdminToken(<redacted>)")
    }
}

impl AdminToken {
    /// `token`, when it has at least [`MIN_ADMIN_TOKEN`] characters.
    pub fn new(token: &str) -> Result<Self, String> {
        if token.chars().count() < MIN_ADMIN_TOKEN {
            return Err(format!(
                "COMMERCE_ADMIN_TOKEN has {} characters: at least {MIN_ADMIN_TOKEN} are needed \
                 (e.g. `openssl rand -hex 32`)",
                token.chars().count()
            ));
        }
        Ok(Self(token.into()))
    }

    /// `COMMERCE_ADMIN_TOKEN`: `None` when unset or empty, an error when too short.
    pub fn from_env() -> Result<Option<Self>, String> {
        match std::env::var("COMMERCE_ADMIN_TOKEN") {
            Ok(token) if !token.is_empty() => Self::new(&token).map(Some),
            _ => Ok(None),
        }
    }

    /// `COMMERCE_ADMIN_TOKEN`, or a random token printed on start when it is unset (the
    /// demo apps: their back-office route is never open).
    pub fn from_env_or_random() -> Result<Self, String> {
        if let Some(token) = Self::from_env()? {
            return Ok(token);
        }
        let random: [u8; 24] = rand::random();
        let text: String = random.iter().map(|b| format!("{b:02x}")).collect();
        println!("admin token (set COMMERCE_ADMIN_TOKEN to choose one): {text}");
        Self::new(&text)
    }

    /// The token itself.
    pub fn expose(&self) -> &str {
        &self.0
    }

    /// Whether the request's `Authorization: Bearer` is this token. Hashes are compared, so
    /// the comparison's time says nothing about the token.
    pub fn allows(&self, headers: &HeaderMap) -> bool {
        let given = commerce::bearer_token(headers).unwrap_or_default();
        commerce::hash_key(given) == commerce::hash_key(&self.0)
    }
}

/// The answer of a back-office route behind `token`: `401` without it, else `answer`'s.
pub async fn behind<F>(token: &AdminToken, headers: &HeaderMap, answer: F) -> (StatusCode, Value)
where
    F: Future<Output = (StatusCode, Value)>,
{
    if token.allows(headers) {
        answer.await
    } else {
        (
            StatusCode::UNAUTHORIZED,
            json!({"error": "the back office's bearer token is required"}),
        )
    }
}

/// `POST /admin/orders/{id}/confirm`: the back office confirms an order (an operator move),
/// behind the admin token. A 409 names its reason, as the API's do (`move_not_allowed`).
pub async fn confirm_order(
    engine: &Engine,
    token: &AdminToken,
    headers: &HeaderMap,
    id: i64,
) -> (StatusCode, Value) {
    behind(token, headers, async {
        let moved = engine
            .operator()
            .move_order(OrderId::new(id), OrderStatus::Confirmed, None)
            .await;
        match moved {
            Ok(order) => (
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
                (
                    status,
                    json!({"error": error.to_string(), "reason": reason}),
                )
            }
        }
    })
    .await
}

/// SIGTERM (what a container runtime sends) or ctrl-c.
pub async fn signal() {
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

/// What an app runs besides the API, once per instance: [`Engine::run_background`] (the
/// webhook dispatcher and the hourly purges, then the store closed), and the one shutdown
/// signal ([`signal`]) that stops the server first and the background once its requests are done.
pub struct Background {
    stop: watch::Sender<bool>,
    drained: oneshot::Sender<()>,
    task: JoinHandle<()>,
}

impl Background {
    /// Starts `engine`'s background work, and waits for the signal.
    pub fn start(engine: &Engine) -> Self {
        let (stop, _) = watch::channel(false);
        let trigger = stop.clone();
        tokio::spawn(async move {
            signal().await;
            info!("shutdown signal: draining");
            let _ = trigger.send(true);
        });
        // Without it, order events stay in the outbox and no receiver hears of them. It runs
        // until the server's requests are done (they need the store), then the dispatcher
        // records the attempts it has in flight (each bounded by its attempt timeout, 15 s by
        // default) and the store is closed.
        let (drained, when_drained) = oneshot::channel::<()>();
        let task = tokio::spawn(engine.clone().run_background(async {
            let _ = when_drained.await;
        }));
        Self {
            stop,
            drained,
            task,
        }
    }

    /// Completes when the shutdown signal came.
    pub fn shutdown(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut stopping = self.stop.subscribe();
        async move {
            // An error means the sender is gone, which is a shutdown as well.
            let _ = stopping.wait_for(|stop| *stop).await;
        }
    }

    /// Runs `server` (which stops accepting on [`shutdown`](Self::shutdown), then waits for
    /// its requests in flight for [`DRAIN`] at most: `commerce::axum::serve` and
    /// `commerce::warp::serve` with `commerce::http_server::ServeOptions`, or `commerce::http_server::serve_connections`), then stops the
    /// background work and closes the store.
    pub async fn serve(
        self,
        server: impl Future<Output = std::io::Result<()>>,
    ) -> std::io::Result<()> {
        server.await?;
        info!("server stopped");
        let _ = self.drained.send(());
        if let Err(error) = self.task.await {
            error!(%error, "background work failed");
        }
        Ok(())
    }
}
