//! The headers of every HTML page the crate serves (the owner pages and the API reference at
//! `GET /api/v1/docs`): no script, no source outside the page itself, never framed.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};

/// The pages' Content-Security-Policy: nothing loads but the page's own inline style (and
/// images of its own origin); forms post to the origin only; no framing.
const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

/// An HTML response (`text/html; charset=utf-8`) with the pages' headers:
/// `Content-Security-Policy` ([`CONTENT_SECURITY_POLICY`]), `X-Content-Type-Options: nosniff`,
/// `X-Frame-Options: DENY`, `Referrer-Policy: no-referrer` and `Cache-Control: private,
/// no-cache`.
pub(crate) fn page(status: StatusCode, body: impl Into<Bytes>) -> Response<Bytes> {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    headers.insert(
        header::CACHE_CONTROL,
        HeaderValue::from_static("private, no-cache"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CONTENT_SECURITY_POLICY),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    headers.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    response
}
