//! Mount the commerce API engine in an axum application.
//!
//! ```no_run
//! use std::sync::Arc;
//! use axum::{Router, routing::get};
//! use commerce_core::{Engine, store::MemoryStore};
//!
//! # async fn run() {
//! let engine = Engine::new(Arc::new(MemoryStore::new()));
//! let app: Router = Router::new()
//!     .route("/", get(|| async { "my shop" }))
//!     .merge(commerce_axum::router(engine)); // serves /api/v1/...
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await.unwrap();
//! axum::serve(listener, app).await.unwrap();
//! # }
//! ```
//!
//! Under a prefix, nest the service: `Router::new().nest_service("/shop", commerce_axum::service(engine))`
//! answers `/shop/api/v1/...`.
//!
//! The adapter holds no business logic: it collects the body under the engine's body limit
//! (413 `payload_too_large` beyond it, after the engine's own 404 and 405, as the bare engine
//! orders them), keeps the request's extensions, and hands the request to [`Engine::handle`].

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::Router;
use axum::body::Body;
use axum::extract::NestedPath;
use bytes::Bytes;
use commerce_core::MountPrefix;
use commerce_core::{ApiError, Engine, ErrorCode};
use http::{Request, Response};
use http_body_util::{BodyExt, Limited};

/// A router serving `/api/v1/...`, mergeable into an app's router whatever its state type.
pub fn router<S>(engine: Engine) -> Router<S>
where
    S: Clone + Send + Sync + 'static,
{
    let service = service(engine);
    Router::new()
        .route_service("/api/v1", service.clone())
        .route_service("/api/v1/{*rest}", service)
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

/// Collects a framework body under `limit` bytes; `Err` is the ready 413 response.
pub async fn collect_limited(body: Body, limit: usize) -> Result<Bytes, Response<Bytes>> {
    match Limited::new(body, limit).collect().await {
        Ok(collected) => Ok(collected.to_bytes()),
        Err(_) => Err(ApiError::new(ErrorCode::PayloadTooLarge).into_response()),
    }
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
            let response = match collect_limited(body, engine.config().body_limit).await {
                Ok(bytes) => engine.handle(Request::from_parts(parts, bytes)).await,
                // The engine answers an unknown path or a wrong method before the body size.
                Err(_) => engine.body_too_large(&parts.method, parts.uri.path()),
            };
            Ok(response.map(Body::from))
        })
    }
}
