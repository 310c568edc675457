//! Serving a filter over HTTP/1.1 with a header-read timeout and a bounded drain: the engine's
//! own server loop ([`commerce_core::http_server`]), given this crate's service.

use std::future::Future;

use commerce_core::http_server::{ServeOptions, serve_connections};
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use warp::{Filter, Rejection, Reply};

/// Serves `filter` on `listener` over HTTP/1.1 until `shutdown` completes, then stops
/// accepting and lets the connections finish their requests in flight (idle ones are closed at
/// once), for [`ServeOptions::drain_timeout`](commerce_core::http_server::ServeOptions::drain_timeout) at most: the connections still open then are
/// closed and `serve` returns, so a client that never finishes cannot hold a shutdown. The
/// engine runs each request's store work to its end even when its connection is closed
/// ([`Engine::handle`](commerce_core::Engine::handle)), so no order is cut in half.
///
/// Unlike `warp::serve`, each connection gets [`ServeOptions::header_read_timeout`](commerce_core::http_server::ServeOptions::header_read_timeout): a client
/// that has not sent a request's whole head within it is disconnected, so that slow or
/// stalled clients (a connection opened and left mid-headers) cannot hold connections for
/// ever. The body's own time is the engine's
/// [`Config::body_timeout`](commerce_core::config::Config::body_timeout).
///
/// ```no_run
/// # mod commerce { pub use commerce_core::*; pub mod warp { pub use commerce_warp::*; } }
/// use std::sync::Arc;
/// use std::time::Duration;
/// use commerce::{Engine, store::MemoryStore};
/// use commerce::http_server::ServeOptions;
/// use warp::Filter;
///
/// # async fn run() -> std::io::Result<()> {
/// let engine = Engine::new(Arc::new(MemoryStore::new()));
/// let app = warp::path::end().map(|| "my shop").or(commerce::warp::api(engine));
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await?;
/// let shutdown = std::future::pending::<()>(); // or a signal
/// // A request head within 10 s; on shutdown, 5 s for the requests in flight.
/// let options = ServeOptions::default().with_drain_timeout(Some(Duration::from_secs(5)));
/// commerce::warp::serve(listener, app, options, shutdown).await
/// # }
/// ```
pub async fn serve<F, R>(
    listener: TcpListener,
    filter: F,
    options: ServeOptions,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()>
where
    F: Filter<Extract = (R,), Error = Rejection> + Clone + Send + Sync + 'static,
    F::Future: Send,
    R: Reply,
{
    let service = TowerToHyperService::new(warp::service(filter));
    serve_connections(listener, service, options, shutdown).await
}
