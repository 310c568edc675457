//! Mount the commerce API engine in a warp application.
//!
//! [`api`] is a [`Filter`] serving `/api/v1/...`; combine it with the app's own routes with
//! `.or()`. [`api_under`] serves it under a path prefix, and [`api`] also composes after the
//! app's own path filters (`warp::path("shop").and(api(engine))`): it matches on the part of
//! the path earlier filters left unmatched.
//!
//! ```no_run
//! # mod commerce { pub use commerce_core::*; pub mod warp { pub use commerce_warp::*; } }
//! use std::sync::Arc;
//! use commerce::{Engine, store::MemoryStore};
//! use warp::Filter;
//!
//! # async fn run() {
//! let engine = Engine::new(Arc::new(MemoryStore::new()));
//! let home = warp::path::end().map(|| "my shop"); // the app's own routes
//! let app = home
//!     .or(commerce::warp::api(engine.clone())) // /api/v1/...
//!     .or(commerce::warp::api_under("/shop", engine.clone())) // /shop/api/v1/...
//!     .or(warp::path("eu").and(commerce::warp::api(engine))); // /eu/api/v1/...
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8080").await.unwrap();
//! // A request head within 10 s; on shutdown, 10 s for the requests in flight.
//! let options = commerce::http_server::ServeOptions::default();
//! commerce::warp::serve(listener, app, options, std::future::pending()).await.unwrap();
//! // or `warp::serve(app).run(([127, 0, 0, 1], 8080))`: no header-read timeout, no drain bound
//! # }
//! ```
//!
//! A request outside the prefix or outside `/api/v1` is a warp rejection (`not_found`), so
//! it falls through to the app's other routes; inside `/api/v1` every answer, errors
//! included, is the engine's.
//!
//! The adapter holds no business logic: it strips the prefix and hands method, path, query,
//! headers and extensions to [`Engine::serve`], which checks the head first (so a request
//! refused on its head is answered before its body is read, without `100 Continue`) and then
//! reads the body under the engine's body limit and body timeout (413, 408; a broken body is
//! a 400), as `commerce-axum` does. Warp 0.4 exposes no filter for the request's whole
//! `http::Extensions` map, only one type at a time ([`warp::ext::get`]); [`api`] and
//! [`api_under`] pass an empty map, and [`api_with_extensions`] takes a filter that builds
//! the map the engine receives (from [`warp::ext::optional`], [`warp::addr::remote`], ...).
//!
//! `warp::serve` has no header-read timeout and waits for its connections without a bound on
//! shutdown: [`serve`] serves a filter over HTTP/1.1 with both ([`ServeOptions`]), for
//! servers facing the internet.

// docs.rs builds with every feature and `--cfg docsrs`: each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

use std::convert::Infallible;

use bytes::Buf;
use commerce_core::Engine;
use commerce_core::{API_PREFIX, MountPrefix};
use futures_util::{Stream, TryStreamExt};
use http::request::Parts;
use http::{Extensions, HeaderMap, Method, Request, Uri};
use http_body::Frame;
use http_body_util::StreamBody;
use warp::path::{FullPath, Peek};
use warp::{Filter, Rejection, Reply};

mod pages;
mod serve;
pub use commerce_core::http_server::ServeOptions;
pub use pages::owner_pages;
pub use serve::serve;

/// The response type every filter here extracts (warp's own, so it combines with `.or()`).
pub type WarpResponse = warp::reply::Response;

/// A filter serving `/api/v1/...`, relative to whatever earlier filters matched.
///
/// Anything else is rejected with `not_found`, so it falls through to the app's routes.
pub fn api(
    engine: Engine,
) -> impl Filter<Extract = (WarpResponse,), Error = Rejection> + Clone + Send + Sync + 'static {
    api_under("", engine)
}

/// A filter serving `{prefix}/api/v1/...`; `prefix` is one or more plain path segments
/// (`"shop"`, `"/shop/eg/"`; surrounding slashes are ignored, `""` is no prefix).
///
/// The engine sees the path without the prefix, as `commerce-axum`'s `nest_service` does.
pub fn api_under(
    prefix: &str,
    engine: Engine,
) -> impl Filter<Extract = (WarpResponse,), Error = Rejection> + Clone + Send + Sync + 'static {
    api_with_extensions(prefix, engine, warp::any().map(Extensions::new))
}

/// [`api_under`], with the request extensions the engine receives built by `extensions`.
///
/// ```
/// # mod commerce { pub use commerce_core::*; pub mod warp { pub use commerce_warp::*; } }
/// use std::net::SocketAddr;
/// use std::sync::Arc;
/// use commerce::{Engine, store::MemoryStore};
/// use warp::Filter;
///
/// let engine = Engine::new(Arc::new(MemoryStore::new()));
/// // Hand the peer address to the engine as an `Option<SocketAddr>` extension.
/// let api = commerce::warp::api_with_extensions(
///     "",
///     engine,
///     warp::addr::remote().map(|peer: Option<SocketAddr>| {
///         let mut extensions = http::Extensions::new();
///         extensions.insert(peer);
///         extensions
///     }),
/// );
/// # let _ = api;
/// ```
pub fn api_with_extensions<X>(
    prefix: &str,
    engine: Engine,
    extensions: X,
) -> impl Filter<Extract = (WarpResponse,), Error = Rejection> + Clone + Send + Sync + 'static
where
    X: Filter<Extract = (Extensions,), Error = Infallible> + Clone + Send + Sync + 'static,
{
    let prefix = normalize_prefix(prefix);
    let engine = warp::any().map(move || engine.clone());
    warp::path::full()
        .and(warp::path::peek())
        .and_then(move |full: FullPath, rest: Peek| {
            let target = engine_path(&prefix, rest.as_str()).map(|path| {
                // What precedes the engine's `/api/v1...`: earlier filters' segments and the prefix.
                let mount = full
                    .as_str()
                    .strip_suffix(path.as_str())
                    .unwrap_or_default();
                (path, MountPrefix::new(mount))
            });
            async move { target.ok_or_else(warp::reject::not_found) }
        })
        .and(warp::method())
        .and(raw_query())
        .and(warp::header::headers_cloned())
        .and(extensions)
        .and_then(request_parts)
        .and(warp::body::stream())
        .and(engine)
        .then(answer)
}

/// `"/shop/eg/"` -> `"shop/eg/"`; `""` or `"/"` -> `""`.
fn normalize_prefix(prefix: &str) -> String {
    let trimmed = prefix.trim_matches('/');
    if trimmed.is_empty() {
        String::new()
    } else {
        format!("{trimmed}/")
    }
}

/// The path the engine sees, when `rest` (the unmatched path, no leading slash) is
/// `{prefix}api/v1` or below it; `None` falls through.
fn engine_path(prefix: &str, rest: &str) -> Option<String> {
    let api = API_PREFIX.trim_start_matches('/');
    let below = rest.strip_prefix(prefix)?;
    let tail = below.strip_prefix(api)?;
    (tail.is_empty() || tail.starts_with('/')).then(|| format!("/{below}"))
}

/// The raw query string, `None` when the URI has none.
fn raw_query() -> impl Filter<Extract = (Option<String>,), Error = Infallible> + Clone {
    warp::query::raw()
        .map(Some)
        .or(warp::any().map(|| None))
        .unify()
}

/// The engine request's head: the path without the prefix, everything else as received.
async fn request_parts(
    (path, mount): (String, MountPrefix),
    method: Method,
    query: Option<String>,
    headers: HeaderMap,
    extensions: Extensions,
) -> Result<Parts, Rejection> {
    let target = match query {
        Some(query) => format!("{path}?{query}"),
        None => path,
    };
    // The path and query came from a valid URI, so they parse again.
    let uri: Uri = target.parse().map_err(|_| warp::reject::not_found())?;
    let (mut parts, ()) = Request::builder()
        .method(method)
        .uri(uri)
        .body(())
        .map_err(|_| warp::reject::not_found())?
        .into_parts();
    parts.headers = headers;
    parts.extensions = extensions;
    if parts.extensions.get::<MountPrefix>().is_none() {
        parts.extensions.insert(mount);
    }
    Ok(parts)
}

/// Answers one request: the engine checks the head, then reads the body stream.
async fn answer<S, B>(parts: Parts, body: S, engine: Engine) -> WarpResponse
where
    S: Stream<Item = Result<B, warp::Error>> + Send,
    B: Buf,
{
    let frames = StreamBody::new(body.map_ok(|mut chunk| {
        let bytes = chunk.copy_to_bytes(chunk.remaining());
        Frame::data(bytes)
    }));
    engine
        .serve(Request::from_parts(parts, frames))
        .await
        .into_response()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_normalized() {
        assert_eq!(normalize_prefix(""), "");
        assert_eq!(normalize_prefix("/"), "");
        assert_eq!(normalize_prefix("shop"), "shop/");
        assert_eq!(normalize_prefix("/shop/eg/"), "shop/eg/");
    }

    #[test]
    fn only_paths_at_or_below_the_api_reach_the_engine() {
        assert_eq!(engine_path("", "api/v1/me").as_deref(), Some("/api/v1/me"));
        assert_eq!(engine_path("", "api/v1").as_deref(), Some("/api/v1"));
        assert_eq!(engine_path("", "api/v1/").as_deref(), Some("/api/v1/"));
        assert_eq!(
            engine_path("shop/", "shop/api/v1/orders/3/cancel").as_deref(),
            Some("/api/v1/orders/3/cancel")
        );
        for (prefix, rest) in [
            ("", ""),
            ("", "api/v10/me"),
            ("", "api/v2/me"),
            ("", "shop/api/v1/me"),
            ("shop/", "api/v1/me"),
            ("shop/", "shopping/api/v1/me"),
            ("shop/", "shop/api"),
        ] {
            assert_eq!(engine_path(prefix, rest), None, "{prefix:?} {rest:?}");
        }
    }

    #[tokio::test]
    async fn the_engine_gets_path_query_headers_and_extensions() {
        #[derive(Clone, Debug, PartialEq)]
        struct Tag(&'static str);
        let mut headers = HeaderMap::new();
        headers.insert("authorization", "Bearer x".parse().unwrap());
        let mut extensions = Extensions::new();
        extensions.insert(Tag("kept"));
        let parts = request_parts(
            ("/api/v1/products".into(), MountPrefix::new("/shop")),
            Method::GET,
            Some("page=2&q=%D8%B3".into()),
            headers,
            extensions,
        )
        .await
        .unwrap();
        assert_eq!(parts.uri, "/api/v1/products?page=2&q=%D8%B3");
        assert_eq!(parts.method, Method::GET);
        assert_eq!(parts.headers["authorization"], "Bearer x");
        assert_eq!(parts.extensions.get::<Tag>(), Some(&Tag("kept")));
        assert_eq!(
            parts.extensions.get::<MountPrefix>(),
            Some(&MountPrefix::new("shop"))
        );
    }
}
