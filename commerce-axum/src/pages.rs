//! The owner pages ([`OwnerPages`]) as a tower `Service`, to nest where the app wants them.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use axum::body::Body;
use commerce_core::owner_pages::{MAX_FORM_BYTES, OwnerPages};
use http::{Request, Response, StatusCode};

/// The owner pages as a tower `Service<Request<Body>>`: nest it under the path the pages were
/// [mounted at](OwnerPages::mounted_at), behind the app's session layer:
///
/// ```no_run
/// # use commerce_core::{Engine, owner_pages::{OwnerLogin, OwnerPages}};
/// # fn demo(engine: Engine, login: impl OwnerLogin) {
/// let pages = OwnerPages::new(engine.clone(), login).mounted_at("/account");
/// let app: axum::Router = axum::Router::new()
///     .merge(commerce_axum::router(engine))
///     .nest_service("/account", commerce_axum::owner_pages(pages));
/// # }
/// ```
///
/// The request keeps its extensions (what a session middleware put there, for the
/// [`OwnerLogin`](commerce_core::owner_pages::OwnerLogin)); a form body over
/// [`MAX_FORM_BYTES`] is refused with 413.
pub fn owner_pages(pages: OwnerPages) -> OwnerPagesService {
    OwnerPagesService { pages }
}

/// The owner pages as a tower `Service` ([`owner_pages`]).
#[derive(Debug, Clone)]
pub struct OwnerPagesService {
    pages: OwnerPages,
}

impl tower::Service<Request<Body>> for OwnerPagesService {
    type Response = Response<Body>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<Body>, Infallible>> + Send>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<Body>) -> Self::Future {
        let pages = self.pages.clone();
        Box::pin(async move {
            let (parts, body) = request.into_parts();
            let Ok(body) = axum::body::to_bytes(body, MAX_FORM_BYTES).await else {
                let mut response = Response::new(Body::empty());
                *response.status_mut() = StatusCode::PAYLOAD_TOO_LARGE;
                return Ok(response);
            };
            let response = pages.serve(Request::from_parts(parts, body)).await;
            Ok(response.map(Body::from))
        })
    }
}
