//! Serving a hyper service over HTTP/1.1 with a header-read timeout and a bounded drain: the
//! loop under `commerce_axum::serve` and `commerce_warp::serve` (feature `http-server`).
//!
//! The integrations turn their router or filter into a hyper service and hand it here, so
//! both accept, time out slow heads and drain on shutdown the same way.

use std::error::Error as StdError;
use std::future::Future;
use std::time::Duration;

use hyper::body::{Body, Incoming};
use hyper::server::conn::http1;
use hyper::service::Service;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tokio::task::JoinSet;

/// How [`serve_connections`] treats slow clients and its shutdown. `ServeOptions::default()`:
/// a 10 s header-read timeout and a 10 s drain.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct ServeOptions {
    /// How long a client may take to send a request's whole head; past it the connection is
    /// closed (default 10 s).
    pub header_read_timeout: Duration,
    /// How long the connections get to finish their requests in flight once the shutdown
    /// future completed (default 10 s); then the ones still open are closed and the server
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

/// Serves `service` on `listener` over HTTP/1.1 until `shutdown` completes, then stops
/// accepting and lets the connections finish their requests in flight (idle ones are closed
/// at once), for [`ServeOptions::drain_timeout`] at most: the connections still open then are
/// closed and the function returns, so a client that never finishes cannot hold a shutdown.
/// Each connection gets [`ServeOptions::header_read_timeout`]: a client that has not sent a
/// request's whole head within it is disconnected.
pub async fn serve_connections<S, B>(
    listener: TcpListener,
    service: S,
    options: ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()>
where
    S: Service<http::Request<Incoming>, Response = http::Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<Box<dyn StdError + Send + Sync>>,
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<Box<dyn StdError + Send + Sync>>,
{
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
            .serve_connection(TokioIo::new(stream), service.clone());
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
