//! The HTTP conformance suite through the axum router, merged at the root and nested under a
//! prefix next to the app's own routes, and the fall-through of everything else to them.

use std::sync::Arc;

use async_trait::async_trait;
use axum::Router;
use axum::body::Body;
use axum::routing::get;
use bytes::Bytes;
use commerce_core::Engine;
use commerce_core::store::MemoryStore;
use commerce_core::testing::http::adapters::{
    assert_mounted_beside_the_apps_routes, json, order_location, seeded_engine, send, with_prefix,
};
use commerce_core::testing::http::{Harness, HttpIntegration};
use http::{Request, Response};
use http_body_util::BodyExt;
use tower::ServiceExt;

/// An axum router, called as `axum::serve` calls it.
struct AxumIntegration {
    router: Router,
    /// Prepended to every request path (the suite sends `/api/v1/...`).
    prefix: &'static str,
}

#[async_trait]
impl HttpIntegration for AxumIntegration {
    async fn send(&self, request: Request<Bytes>) -> Response<Bytes> {
        let request = with_prefix(self.prefix, request);
        let response = self
            .router
            .clone()
            .oneshot(request.map(Body::from))
            .await
            .unwrap_or_else(|never| match never {});
        let (parts, body) = response.into_parts();
        let body = body.collect().await.expect("body").to_bytes();
        Response::from_parts(parts, body)
    }
}

/// The app's own routes: `GET /` and `GET /shop/hello`.
fn app_routes() -> Router {
    Router::new()
        .route("/", get(|| async { "home" }))
        .route("/shop/hello", get(|| async { "hello" }))
}

fn at_root(engine: Engine) -> Arc<dyn HttpIntegration> {
    let router = app_routes().merge(commerce_axum::router(engine));
    Arc::new(AxumIntegration { router, prefix: "" })
}

fn under_shop(engine: Engine) -> Arc<dyn HttpIntegration> {
    let router = app_routes().nest("/shop", commerce_axum::router(engine));
    Arc::new(AxumIntegration {
        router,
        prefix: "/shop",
    })
}

async fn axum_at_root() -> Harness {
    Harness::new(Arc::new(MemoryStore::new()), at_root).await
}

async fn axum_under_shop() -> Harness {
    Harness::new(Arc::new(MemoryStore::new()), under_shop)
        .await
        .with_mount("/shop")
}

/// Every case with the API merged at `/api/v1`, next to the app's own routes.
mod root {
    commerce_core::http_conformance_tests!(super::axum_at_root());
}

/// Every case with the API nested at `/shop/api/v1`.
mod under_prefix {
    commerce_core::http_conformance_tests!(super::axum_under_shop());
}

// ---------------------------------------------------------------- mounting and fall-through

#[tokio::test]
async fn requests_outside_the_api_fall_through_to_the_apps_routes() {
    let engine = seeded_engine().await;
    let app = AxumIntegration {
        router: app_routes()
            .merge(commerce_axum::router(engine.clone()))
            .nest("/shop", commerce_axum::router(engine)),
        prefix: "",
    };
    assert_mounted_beside_the_apps_routes(&app).await;
}

#[tokio::test]
async fn nest_service_hands_the_whole_prefix_to_the_engine() {
    // `nest_service` is the other way to mount under a prefix: everything below it is the
    // engine's, so its 404s are the engine's JSON.
    let engine = seeded_engine().await;
    let app = AxumIntegration {
        router: app_routes().nest_service("/eu", commerce_axum::service(engine)),
        prefix: "",
    };
    assert_eq!(send(&app, "GET", "/eu/api/v1/me").await.status(), 200);
    let other = send(&app, "GET", "/eu/other").await;
    assert_eq!(other.status(), 404);
    assert_eq!(json(other.body())["error"]["code"], "not_found");
    // `Location` names the order where the client can fetch it: under the mount path.
    assert_eq!(
        order_location(&app, "/eu/api/v1/orders").await,
        "/eu/api/v1/orders/5"
    );
}

#[tokio::test]
async fn bodies_beyond_the_limit_are_413_after_404_and_405() {
    let engine = seeded_engine().await;
    let limit = engine.config().order_body_limit;
    let app = AxumIntegration {
        router: Router::new().nest("/shop", commerce_axum::router(engine)),
        prefix: "",
    };
    // As through the bare engine: 404 and 405 first, then the size, then the key.
    for (method, path, status, code) in [
        ("POST", "/shop/api/v1/orders", 413, "payload_too_large"),
        ("POST", "/shop/api/v1/nothing", 404, "not_found"),
        ("DELETE", "/shop/api/v1/orders", 405, "method_not_allowed"),
    ] {
        let request = Request::builder()
            .method(method)
            .uri(path)
            .body(Bytes::from(vec![b' '; limit + 1]))
            .expect("request");
        let r = app.send(request).await;
        assert_eq!(r.status(), status, "{method} {path}");
        assert_eq!(json(r.body())["error"]["code"], code, "{method} {path}");
    }
    // Exactly at the limit the body reaches the engine (a 422 on blank JSON).
    let request = Request::post("/shop/api/v1/orders")
        .header("authorization", "Bearer sk_demo_marketer")
        .header("content-type", "application/json")
        .body(Bytes::from(vec![b' '; limit]))
        .expect("request");
    assert_eq!(app.send(request).await.status(), 422);
}

/// The owner pages nested at `/account` beside the API and the app's routes: the whole
/// onboarding through the router (demo login, access, a key shown once, `GET /me` with it).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn owner_pages_nested_in_an_axum_app() {
    use commerce_core::testing::http::pages_client::Browser;
    let h = Harness::bare(Arc::new(MemoryStore::new())).await;
    let pages = commerce_core::sandbox::account_pages(&h.engine, "/api/v1");
    let router = app_routes()
        .merge(commerce_axum::router(h.engine.clone()))
        .nest_service("/account", commerce_axum::owner_pages(pages));
    let integration = Arc::new(AxumIntegration {
        router: router.clone(),
        prefix: "",
    });
    Browser::through(integration, "/account").onboard(&h).await;
    let home = router
        .oneshot(Request::get("/").body(Body::empty()).expect("request"))
        .await
        .expect("infallible");
    assert_eq!(home.status(), 200, "the app's own routes are untouched");
}
