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
/// A form body over [`MAX_FORM_BYTES`] (or a broken one) is refused with 413.
pub fn owner_pages(
    pages: OwnerPages,
) -> impl Filter<Extract = (WarpResponse,), Error = Rejection> + Clone + Send + Sync + 'static {
    let pages = warp::any().map(move || pages.clone());
    warp::path::tail()
        .and(warp::method())
        .and(crate::raw_query())
        .and(warp::header::headers_cloned())
        .and(warp::body::stream())
        .and(pages)
        .then(
            |tail: warp::path::Tail,
             method: Method,
             query: Option<String>,
             headers: HeaderMap,
             body,
             pages: OwnerPages| async move {
                let Some(body) = read_form(body).await else {
                    return warp::http::StatusCode::PAYLOAD_TOO_LARGE.into_response();
                };
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

/// The whole body, `None` when it is over [`MAX_FORM_BYTES`] or broken.
async fn read_form<S, B>(body: S) -> Option<Bytes>
where
    S: futures_util::Stream<Item = Result<B, warp::Error>>,
    B: bytes::Buf,
{
    use futures_util::StreamExt;
    let mut body = std::pin::pin!(body);
    let mut whole = Vec::new();
    while let Some(chunk) = body.next().await {
        let mut chunk = chunk.ok()?;
        if whole.len() + chunk.remaining() > MAX_FORM_BYTES {
            return None;
        }
        while chunk.has_remaining() {
            let part = chunk.chunk();
            whole.extend_from_slice(part);
            let read = part.len();
            chunk.advance(read);
        }
    }
    Some(Bytes::from(whole))
}
