//! The owner pages ([`OwnerPages`]) as a warp filter.

use bytes::Bytes;
use commerce_core::owner_pages::{MAX_FORM_BYTES, OwnerPages};
use http::{HeaderMap, Method, Request, Uri};
use warp::{Filter, Rejection, Reply};

use crate::WarpResponse;

/// A filter serving the owner pages at whatever path earlier filters matched (the path the
/// pages were [mounted at](OwnerPages::mounted_at)); it serves every path below it:
///
/// ```
/// # use commerce_core::{Engine, owner_pages::{OwnerLogin, OwnerPages}};
/// # use warp::Filter;
/// # fn demo(engine: Engine, login: impl OwnerLogin) {
/// let pages = OwnerPages::new(engine.clone(), login).mounted_at("/account");
/// let routes = commerce_warp::api(engine)
///     .or(warp::path("account").and(commerce_warp::owner_pages(pages)));
/// # let _ = routes;
/// # }
/// ```
///
/// A form body over [`MAX_FORM_BYTES`] is refused with 413 (warp's rejection).
pub fn owner_pages(
    pages: OwnerPages,
) -> impl Filter<Extract = (WarpResponse,), Error = Rejection> + Clone + Send + Sync + 'static {
    let pages = warp::any().map(move || pages.clone());
    warp::path::tail()
        .and(warp::method())
        .and(crate::raw_query())
        .and(warp::header::headers_cloned())
        .and(warp::body::content_length_limit(MAX_FORM_BYTES as u64))
        .and(warp::body::bytes())
        .and(pages)
        .then(
            |tail: warp::path::Tail,
             method: Method,
             query: Option<String>,
             headers: HeaderMap,
             body: Bytes,
             pages: OwnerPages| async move {
                let target = match query {
                    Some(query) => format!("/{}?{query}", tail.as_str()),
                    None => format!("/{}", tail.as_str()),
                };
                let Ok(uri) = target.parse::<Uri>() else {
                    return warp::http::StatusCode::BAD_REQUEST.into_response();
                };
                let mut request = Request::new(body);
                *request.method_mut() = method;
                *request.uri_mut() = uri;
                *request.headers_mut() = headers;
                pages.serve(request).await.into_response()
            },
        )
}
