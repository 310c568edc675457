//! The HTTP conformance suite through the warp filter, mounted at the root and under a
//! prefix next to the app's own routes, and the fall-through of everything else to them.

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use commerce_core::Engine;
use commerce_core::store::MemoryStore;
use commerce_core::testing::http::adapters::{
    assert_mounted_beside_the_apps_routes, json, order_location, seeded_engine, send, with_prefix,
};
use commerce_core::testing::http::{Harness, HttpIntegration};
use commerce_warp::WarpResponse;
use http::{Request, Response};
use http_body_util::{BodyExt, Full};
use tower::ServiceExt;
use warp::{Filter, Rejection, Reply};

/// A warp filter served the way `warp::serve` serves it: through `warp::service`.
struct WarpIntegration<F> {
    filter: F,
    /// Prepended to every request path (the suite sends `/api/v1/...`).
    prefix: &'static str,
}

#[async_trait]
impl<F> HttpIntegration for WarpIntegration<F>
where
    F: Filter<Extract = (WarpResponse,), Error = Rejection> + Clone + Send + Sync + 'static,
{
    async fn send(&self, request: Request<Bytes>) -> Response<Bytes> {
        let request = with_prefix(self.prefix, request);
        let response = warp::service(self.filter.clone())
            .oneshot(request.map(Full::new))
            .await
            .unwrap_or_else(|never| match never {});
        let (parts, body) = response.into_parts();
        let body = body.collect().await.expect("body").to_bytes();
        Response::from_parts(parts, body)
    }
}

/// The app's own routes: `GET /` and `GET /shop/hello`.
fn app_routes() -> impl Filter<Extract = (WarpResponse,), Error = Rejection> + Clone + Send + Sync {
    let home = warp::path::end().map(|| "home".into_response());
    let hello = warp::path!("shop" / "hello").map(|| "hello".into_response());
    home.or(hello).unify()
}

fn at_root(engine: Engine) -> Arc<dyn HttpIntegration> {
    let filter = app_routes().or(commerce_warp::api(engine)).unify();
    Arc::new(WarpIntegration { filter, prefix: "" })
}

fn under_shop(engine: Engine) -> Arc<dyn HttpIntegration> {
    let filter = app_routes()
        .or(commerce_warp::api_under("/shop", engine))
        .unify();
    Arc::new(WarpIntegration {
        filter,
        prefix: "/shop",
    })
}

async fn warp_at_root() -> Harness {
    Harness::new(Arc::new(MemoryStore::new()), at_root).await
}

async fn warp_under_shop() -> Harness {
    Harness::new(Arc::new(MemoryStore::new()), under_shop)
        .await
        .with_mount("/shop")
}

/// Every case with the API at `/api/v1`, next to the app's own routes.
mod root {
    commerce_core::http_conformance_tests!(super::warp_at_root());
}

/// Every case with the API at `/shop/api/v1`.
mod under_prefix {
    commerce_core::http_conformance_tests!(super::warp_under_shop());
}

// ---------------------------------------------------------------- mounting and fall-through

#[tokio::test]
async fn requests_outside_the_api_fall_through_to_the_apps_routes() {
    let engine = seeded_engine().await;
    let app = WarpIntegration {
        filter: app_routes()
            .or(commerce_warp::api(engine.clone()))
            .unify()
            .or(commerce_warp::api_under("shop", engine))
            .unify(),
        prefix: "",
    };
    assert_mounted_beside_the_apps_routes(&app).await;
}

#[tokio::test]
async fn a_prefixed_mount_does_not_answer_at_the_root() {
    let engine = seeded_engine().await;
    let api = commerce_warp::api_under("/shop/", engine);
    for path in ["/api/v1/me", "/shop/api/v2/me", "/shop", "/shop/api"] {
        let rejected = warp::test::request().path(path).filter(&api).await;
        assert!(
            rejected.as_ref().is_err_and(Rejection::is_not_found),
            "{path} is a not_found rejection"
        );
    }
}

#[tokio::test]
async fn the_api_composes_after_the_apps_own_path_filters() {
    let engine = seeded_engine().await;
    let app = WarpIntegration {
        filter: warp::path("eu")
            .and(warp::path("shop"))
            .and(commerce_warp::api(engine)),
        prefix: "",
    };
    let r = send(&app, "GET", "/eu/shop/api/v1/me").await;
    assert_eq!(r.status(), 200);
    assert_eq!(r.headers()["x-ratelimit-remaining"], "119");
    assert_eq!(send(&app, "GET", "/eu/api/v1/me").await.status(), 404);
    // `Location` names the order where the client can fetch it: under the matched segments.
    assert_eq!(
        order_location(&app, "/eu/shop/api/v1/orders").await,
        "/eu/shop/api/v1/orders/5"
    );
}

#[tokio::test]
async fn bodies_beyond_the_limit_are_413_after_404_and_405() {
    let engine = seeded_engine().await;
    let limit = engine.config().order_body_limit;
    let app = WarpIntegration {
        filter: commerce_warp::api_under("shop", engine),
        prefix: "",
    };
    // As through the bare engine: 404 and 405 first, then the declared size, then the key.
    for (method, path, status, code) in [
        ("POST", "/shop/api/v1/orders", 413, "payload_too_large"),
        ("POST", "/shop/api/v1/nothing", 404, "not_found"),
        ("DELETE", "/shop/api/v1/orders", 405, "method_not_allowed"),
    ] {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .header("content-length", limit + 1)
            .body(Bytes::from(vec![b' '; limit + 1]))
            .expect("request");
        let r = app.send(request).await;
        assert_eq!(r.status(), status, "{method} {path}");
        assert_eq!(json(r.body())["error"]["code"], code, "{method} {path}");
    }
    // A body of undeclared length (warp hands it on as a stream) is measured while it is
    // read, which only an admitted request gets to: a 401 without a key, else the 413.
    for (key, status, code) in [
        (None, 401, "unauthenticated"),
        (Some("Bearer sk_demo_marketer"), 413, "payload_too_large"),
    ] {
        let mut request = Request::post("/shop/api/v1/orders");
        if let Some(key) = key {
            request = request.header("authorization", key);
        }
        let r = app
            .send(
                request
                    .body(Bytes::from(vec![b' '; limit + 1]))
                    .expect("request"),
            )
            .await;
        assert_eq!(r.status(), status);
        assert_eq!(json(r.body())["error"]["code"], code);
    }
    // Exactly at the limit the body reaches the engine (a 422 on blank JSON).
    let request = Request::post("/shop/api/v1/orders")
        .header("authorization", "Bearer sk_demo_marketer")
        .header("content-type", "application/json")
        .body(Bytes::from(vec![b' '; limit]))
        .expect("request");
    assert_eq!(app.send(request).await.status(), 422);
}

/// The owner pages under `warp::path("account")` beside the API and the app's routes: the
/// whole onboarding through the filter (demo login, access, a key shown once, `GET /me`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_pages_under_a_warp_path() {
    use commerce_core::testing::http::pages_client::Browser;
    let h = Harness::bare(Arc::new(MemoryStore::new())).await;
    let pages = commerce_core::sandbox::account_pages(&h.engine, "/api/v1");
    let filter = app_routes()
        .or(commerce_warp::api(h.engine.clone()))
        .unify()
        .or(warp::path("account").and(commerce_warp::owner_pages(pages)))
        .unify();
    let integration = Arc::new(WarpIntegration { filter, prefix: "" });
    Browser::through(integration, "/account").onboard(&h).await;
}
