//! Serving a router over HTTP/1.1 with a header-read timeout and a bounded drain.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// How [`serve`] treats slow clients and its shutdown. `ServeOptions::default()`: a 10 s
/// header-read timeout and a 10 s drain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServeOptions {
    /// How long a client may take to send a request's whole head; past it the connection is
    /// closed (default 10 s).
    pub header_read_timeout: Duration,
    /// How long the connections get to finish their requests in flight once the shutdown
    /// future completed (default 10 s); then the ones still open are closed and [`serve`]
    /// returns. `None` waits for them as long as they last.
    pub drain_timeout: Option<Duration>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            header_read_timeout: Duration::from_secs(10),
            drain_timeout: Some(Duration::from_secs(10)),
        }
    }
}

impl ServeOptions {
    /// With this header-read timeout.
    pub fn with_header_read_timeout(mut self, timeout: Duration) -> Self {
        self.header_read_timeout = timeout;
        self
    }

    /// With this drain bound (`None`: no bound).
    pub fn with_drain_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.drain_timeout = timeout;
        self
    }
}

/// Serves `app` on `listener` over HTTP/1.1 until `shutdown` completes, then stops accepting
/// and lets the connections finish their requests in flight (idle ones are closed at once),
/// for [`ServeOptions::drain_timeout`] at most: the connections still open then are closed
/// and `serve` returns, so a client that never finishes cannot hold a shutdown. The engine
/// runs each request's store work to its end even when its connection is closed
/// ([`Engine::handle`](commerce_core::Engine::handle)), so no order is cut in half.
///
/// Unlike `axum::serve`, each connection gets [`ServeOptions::header_read_timeout`]: a client
/// that has not sent a request's whole head within it is disconnected, so that slow or
/// stalled clients (a connection opened and left mid-headers) cannot hold connections for
/// ever. The body's own time is the engine's
/// [`Config::body_timeout`](commerce_core::Config::body_timeout).
///
/// ```no_run
/// # mod commerce { pub use commerce_core::*; pub mod axum { pub use commerce_axum::*; } }
/// use std::sync::Arc;
/// use std::time::Duration;
/// use commerce::{Engine, store::MemoryStore};
/// use commerce::axum::ServeOptions;
///
/// # async fn run() -> std::io::Result<()> {
/// let engine = Engine::new(Arc::new(MemoryStore::new()));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// let shutdown = std::future::pending::<()>(); // or a signal
/// // A request head within 10 s; on shutdown, 5 s for the requests in flight.
/// let options = ServeOptions::default().with_drain_timeout(Some(Duration::from_secs(5)));
/// commerce::axum::serve(listener, commerce::axum::app(engine), options, shutdown).await
/// # }
/// ```
pub async fn serve(
    listener: TcpListener,
    app: Router,
    options: ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
    let mut connections = JoinSet::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => stream,
                Err(error) => {
                    // Out of file descriptors and the like: pause rather than spin.
                    tracing::warn!(%error, "accept failed");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            },
            // Connections that ended leave the set.
            Some(_) = connections.join_next(), if !connections.is_empty() => continue,
            () = &mut shutdown => break,
        };
        let connection = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(options.header_read_timeout)
            .serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let connection = graceful.watch(connection);
        connections.spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection closed");
            }
        });
    }
    drop(listener);
    drain(graceful, connections, options.drain_timeout).await;
    Ok(())
}

/// Asks every connection to finish (hyper's graceful shutdown: idle ones close, busy ones
/// after their request), waits for them for `bound` at most, then closes the others.
async fn drain(graceful: GracefulShutdown, mut connections: JoinSet<()>, bound: Option<Duration>) {
    let finished = graceful.shutdown();
    let Some(bound) = bound else {
        finished.await;
        return;
    };
    if tokio::time::timeout(bound, finished).await.is_err() {
        tracing::warn!(
            connections = connections.len(),
            drain_ms = bound.as_millis() as u64,
            "connections still busy after the drain timeout: closed"
        );
    }
    // Closes the connections still open (none once the drain completed) and waits until
    // they are.
    connections.shutdown().await;
}
