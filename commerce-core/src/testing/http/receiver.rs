//! A webhook receiver on 127.0.0.1 for the webhook cases: answers each request with the next
//! scripted answer (status and delay) and records what it received.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use http::{HeaderMap, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tokio::net::TcpListener;
use tokio::task::JoinHandle;

/// One request the receiver got.
#[derive(Debug, Clone, bon::Builder)]
#[non_exhaustive]
pub struct Received {
    /// Its path.
    pub path: String,
    /// Its headers.
    pub headers: HeaderMap,
    /// Its body.
    pub body: Bytes,
    /// The status it was answered with.
    pub answered: StatusCode,
    /// When it arrived (its head and body read).
    pub arrived: std::time::Instant,
}

impl Received {
    /// The body as JSON.
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or(Value::Null)
    }

    /// A header as text.
    pub fn header(&self, name: &str) -> &str {
        self.headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .unwrap_or_default()
    }
}

#[derive(Default)]
struct Script {
    /// Answers to give, in order; then `otherwise`.
    next: VecDeque<(StatusCode, Duration)>,
    otherwise: Option<StatusCode>,
    received: Vec<Received>,
}

/// A local HTTP server standing in for an integrator's webhook endpoint.
#[non_exhaustive]
pub struct Receiver {
    /// `http://127.0.0.1:<port>/hooks`.
    pub url: String,
    script: Arc<Mutex<Script>>,
    server: JoinHandle<()>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Receiver {
    /// Starts a receiver answering 204 to everything.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a local port");
        let url = format!("http://{}/hooks", listener.local_addr().expect("bound"));
        let script = Arc::new(Mutex::new(Script::default()));
        let shared = script.clone();
        let server = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let script = shared.clone();
                tokio::spawn(async move {
                    let service = service_fn(move |request: Request<Incoming>| {
                        let script = script.clone();
                        async move { Ok::<_, Infallible>(answer(&script, request).await) }
                    });
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        });
        Self {
            url,
            script,
            server,
        }
    }

    fn script(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Answers the next requests with these statuses, then as before.
    pub fn then_answer(&self, statuses: &[u16]) {
        let mut script = self.script();
        for status in statuses {
            let status = StatusCode::from_u16(*status).expect("a valid status");
            script.next.push_back((status, Duration::ZERO));
        }
    }

    /// Answers the next request after `delay`.
    pub fn then_stall(&self, delay: Duration) {
        self.script()
            .next
            .push_back((StatusCode::NO_CONTENT, delay));
    }

    /// Answers every request (after the scripted ones) with `status`.
    pub fn always_answer(&self, status: u16) {
        self.script().otherwise = Some(StatusCode::from_u16(status).expect("a valid status"));
    }

    /// What it received so far, in order.
    pub fn received(&self) -> Vec<Received> {
        self.script().received.clone()
    }
}

async fn answer(script: &Mutex<Script>, request: Request<Incoming>) -> Response<Full<Bytes>> {
    let (parts, body) = request.into_parts();
    let body = body
        .collect()
        .await
        .map(|b| b.to_bytes())
        .unwrap_or_default();
    let arrived = std::time::Instant::now();
    let (status, delay) = {
        let mut script = script.lock().unwrap_or_else(|e| e.into_inner());
        let fallback = (
            script.otherwise.unwrap_or(StatusCode::NO_CONTENT),
            Duration::ZERO,
        );
        script.next.pop_front().unwrap_or(fallback)
    };
    if !delay.is_zero() {
        tokio::time::sleep(delay).await;
    }
    script
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .received
        .push(Received {
            path: parts.uri.path().to_owned(),
            headers: parts.headers,
            body,
            answered: status,
            arrived,
        });
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = status;
    if status.is_redirection() {
        // Somewhere a sender that follows redirects would go next.
        response.headers_mut().insert(
            http::header::LOCATION,
            http::HeaderValue::from_static("/hooks/moved"),
        );
    }
    response
}
