//! Serving a router over HTTP/1.1 with a header-read timeout.

use std::future::Future;
use std::time::Duration;

use axum::Router;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;

/// Serves `app` on `listener` over HTTP/1.1 until `shutdown` completes, then waits for the
/// connections in flight to finish their requests.
///
/// Unlike `axum::serve`, each connection gets `header_read_timeout`: a client that has not
/// sent a request's whole head within it is disconnected, so that slow or stalled clients
/// (a connection opened and left mid-headers) cannot hold connections for ever. The body's
/// own time is the engine's [`Config::body_timeout`](commerce_core::Config::body_timeout).
///
/// ```no_run
/// # mod commerce { pub use commerce_core::*; pub mod axum { pub use commerce_axum::*; } }
/// use std::sync::Arc;
/// use std::time::Duration;
/// use commerce::{Engine, store::MemoryStore};
///
/// # async fn run() -> std::io::Result<()> {
/// let engine = Engine::new(Arc::new(MemoryStore::new()));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// let shutdown = std::future::pending::<()>(); // or a signal
/// commerce::axum::serve(listener, commerce::axum::app(engine), Duration::from_secs(10), shutdown)
///     .await
/// # }
/// ```
pub async fn serve(
    listener: TcpListener,
    app: Router,
    header_read_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let graceful = GracefulShutdown::new();
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
            () = &mut shutdown => break,
        };
        let connection = http1::Builder::new()
            .timer(TokioTimer::new())
            .header_read_timeout(header_read_timeout)
            .serve_connection(TokioIo::new(stream), TowerToHyperService::new(app.clone()));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, "connection closed");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
    Ok(())
}
