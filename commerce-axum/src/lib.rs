//! Mount the commerce API engine in an axum application.
//!
//! ```no_run
//! # mod commerce { pub use commerce_core::*; pub mod axum { pub use commerce_axum::*; } }
//! use std::sync::Arc;
//! use axum::{Router, routing::get};
//! use commerce::{Engine, store::MemoryStore};
//!
//! # async fn run() {
//! let engine = Engine::new(Arc::new(MemoryStore::new()));
//! let app: Router = Router::new()
//!     .route("/", get(|| async { "my shop" }))
//!     .merge(commerce::axum::router(engine)); // serves /api/v1/...
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await.unwrap();
//! // `axum::serve(listener, app)` works too, without a header-read timeout or a drain bound.
//! // The defaults: a request head within 10 s; on shutdown, 10 s for the requests in flight.
//! let options = commerce::http_server::ServeOptions::default();
//! commerce::axum::serve(listener, app, options, std::future::pending())
//!     .await
//!     .unwrap();
//! # }
//! ```
//!
//! Under a prefix, nest the service: `Router::new().nest_service("/shop", commerce_axum::service(engine))`
//! answers `/shop/api/v1/...`.
//!
//! [`router`] owns `/api/v1` and everything below it: every answer there, errors included, is
//! the engine's JSON. Other paths stay the app's (its own fallback answers them). A server
//! that serves nothing but the API uses [`app`], whose fallback is the engine too, so that
//! `/`, `/API/v1/me` or `/api/v2/me` get the engine's JSON 404 rather than an empty one.
//!
//! The adapter holds no business logic: it hands the request's head to the engine first
//! ([`Engine::serve`]), so a request the engine refuses on its head (404, 405, a declared
//! length over the body limit, a missing key, 429, 403) is answered before its body is read,
//! and `Expect: 100-continue` gets no `100 Continue` then; an admitted request's body is read
//! under the engine's body limit and body timeout (413, 408; a broken body is a 400), keeping
//! the request's extensions.
//!
//! The owner pages (`commerce_core::owner_pages`: API access, keys, wallet) are a service to
//! nest behind the app's own login: [`owner_pages`].
//!
//! `axum::serve` has no header-read timeout and waits for its connections without a bound on
//! shutdown: [`serve`] serves a router over HTTP/1.1 with both ([`ServeOptions`]: hyper's
//! `http1::Builder::header_read_timeout`, and a drain that closes the connections still busy
//! once its time is up), for servers facing the internet.

// docs.rs builds with every feature and `--cfg docsrs`: each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::Router;
use axum::body::Body;
use axum::extract::NestedPath;
use commerce_core::Engine;
use commerce_core::MountPrefix;
use http::{Request, Response};

mod pages;
mod serve;
pub use commerce_core::http_server::ServeOptions;
pub use pages::{OwnerPagesService, owner_pages};
pub use serve::serve;

/// A router serving `/api/v1/...`, mergeable into an app's router whatever its state type.
pub fn router<S>(engine: Engine) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let service = service(engine);
    Router::new()
        .route_service("/api/v1", service.clone())
        .route_service("/api/v1/", service.clone())
        .route_service("/api/v1/{*rest}", service)
}

/// A router for a server that serves only the API: [`router`], with the engine as the
/// fallback for every other path (its JSON 404).
pub fn app<S>(engine: Engine) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    router(engine.clone()).fallback_service(service(engine))
}

/// The engine as a tower `Service` over axum bodies, for `nest_service` and `fallback_service`.
pub fn service(engine: Engine) -> CommerceService {
    CommerceService { engine }
}

/// The engine as a tower `Service<Request<Body>>`.
#[derive(Debug, Clone)]
pub struct CommerceService {
    engine: Engine,
}

impl tower::Service<Request<Body>> for CommerceService {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let engine = self.engine.clone();
        Box::pin(async move {
            let (mut parts, body) = request.into_parts();
            // Under `nest` or `nest_service`, tell the engine where it is mounted (for `Location`).
            if parts.extensions.get::<MountPrefix>().is_none()
                && let Some(nested) = parts.extensions.get::<NestedPath>()
            {
                let mount = MountPrefix::new(nested.as_str());
                parts.extensions.insert(mount);
            }
            let response = engine.serve(Request::from_parts(parts, body)).await;
            Ok(response.map(Body::from))
        })
    }
}
