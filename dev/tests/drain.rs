//! The integrations' `serve` (`commerce_axum::serve`, `commerce_warp::serve`, one server loop
//! underneath) on shutdown: requests in flight finish within the drain bound, and a request
//! still running when the bound passes does not keep `serve` from returning. Each test runs
//! through each integration built (features `axum`, `warp`).
#![cfg(any(feature = "axum", feature = "warp"))]

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

#[cfg(feature = "axum")]
use axum::{Router, routing::get};
use commerce::http_server::ServeOptions;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{Notify, oneshot};
use tokio::task::JoinHandle;
#[cfg(feature = "warp")]
use warp::Filter;

/// Which integration serves.
#[derive(Debug, Clone, Copy)]
enum Integration {
    #[cfg(feature = "axum")]
    Axum,
    #[cfg(feature = "warp")]
    Warp,
}

/// The integrations this build has.
const BOTH: &[Integration] = &[
    #[cfg(feature = "axum")]
    Integration::Axum,
    #[cfg(feature = "warp")]
    Integration::Warp,
];

/// A server whose `GET /slow` tells `started` it began, then answers once `release` is
/// notified (never, if it is not); stopped when `stop` is sent.
struct Server {
    addr: SocketAddr,
    started: Arc<Notify>,
    release: Arc<Notify>,
    stop: oneshot::Sender<()>,
    served: JoinHandle<std::io::Result<()>>,
}

async fn start(integration: Integration, drain: Option<Duration>) -> Server {
    let started = Arc::new(Notify::new());
    let release = Arc::new(Notify::new());
    let (on_start, on_release) = (started.clone(), release.clone());
    // `GET /slow`: tells `started`, then waits for `release`.
    let slow = move || {
        let (on_start, on_release) = (on_start.clone(), on_release.clone());
        async move {
            on_start.notify_one();
            on_release.notified().await;
            "done"
        }
    };
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("a port");
    let addr = listener.local_addr().expect("an address");
    let (stop, stopped) = oneshot::channel::<()>();
    let options = ServeOptions::default().with_drain_timeout(drain);
    let shutdown = async {
        let _ = stopped.await;
    };
    let served = match integration {
        #[cfg(feature = "axum")]
        Integration::Axum => {
            let app = Router::new().route("/slow", get(slow));
            tokio::spawn(commerce::axum::serve(listener, app, options, shutdown))
        }
        #[cfg(feature = "warp")]
        Integration::Warp => {
            let app = warp::path("slow").and(warp::get()).then(slow);
            tokio::spawn(commerce::warp::serve(listener, app, options, shutdown))
        }
    };
    Server {
        addr,
        started,
        release,
        stop,
        served,
    }
}

/// A connection with `GET /slow` sent, once the handler has started.
async fn slow_request(server: &Server) -> TcpStream {
    let mut client = TcpStream::connect(server.addr).await.expect("a connection");
    client
        .write_all(b"GET /slow HTTP/1.1\r\nHost: test\r\n\r\n")
        .await
        .expect("the request is sent");
    server.started.notified().await;
    client
}

/// Everything the server sends until it closes the connection.
async fn read_to_close(client: &mut TcpStream) -> String {
    let mut answer = Vec::new();
    // A reset counts as a close.
    let _ = tokio::time::timeout(Duration::from_secs(10), client.read_to_end(&mut answer))
        .await
        .expect("the server closes the connection");
    String::from_utf8_lossy(&answer).into_owned()
}

#[tokio::test]
async fn a_request_in_flight_finishes_during_the_drain() {
    for &integration in BOTH {
        let server = start(integration, Some(Duration::from_secs(30))).await;
        let mut client = slow_request(&server).await;
        server.stop.send(()).expect("the server runs");
        server.release.notify_one();
        let answer = read_to_close(&mut client).await;
        assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
        assert!(answer.ends_with("done"), "{answer}");
        // Done before its bound: serve returns once the last connection closed.
        tokio::time::timeout(Duration::from_secs(10), server.served)
            .await
            .expect("serve returns once its connections are done")
            .expect("the task ran")
            .expect("serve succeeded");
    }
}

#[tokio::test]
async fn a_request_still_running_at_the_drain_bound_does_not_hold_the_server() {
    for &integration in BOTH {
        let bound = Duration::from_millis(300);
        let server = start(integration, Some(bound)).await;
        let mut client = slow_request(&server).await;
        let signalled = Instant::now();
        server.stop.send(()).expect("the server runs");
        tokio::time::timeout(Duration::from_secs(10), server.served)
            .await
            .expect("serve returns after its drain bound, with a request still running")
            .expect("the task ran")
            .expect("serve succeeded");
        assert!(
            signalled.elapsed() >= bound,
            "serve waited for the drain bound ({:?})",
            signalled.elapsed()
        );
        // The held connection was closed, with no answer.
        assert_eq!(read_to_close(&mut client).await, "");
        drop(server.release);
    }
}

#[tokio::test]
async fn without_a_bound_the_drain_waits_for_the_request() {
    for &integration in BOTH {
        let server = start(integration, None).await;
        let mut client = slow_request(&server).await;
        server.stop.send(()).expect("the server runs");
        let mut served = server.served;
        // Still draining: the request has not been released.
        assert!(
            tokio::time::timeout(Duration::from_millis(500), &mut served)
                .await
                .is_err(),
            "serve returned with a request in flight and no bound"
        );
        server.release.notify_one();
        let answer = read_to_close(&mut client).await;
        assert!(answer.ends_with("done"), "{answer}");
        served
            .await
            .expect("the task ran")
            .expect("serve succeeded");
    }
}
