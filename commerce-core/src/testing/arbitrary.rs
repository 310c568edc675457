//! Arbitrary requests and the property every answer holds, shared by the fuzz target
//! (`fuzz/`) and the proptest in `cargo test` (`tests/arbitrary_requests.rs`).
//!
//! A request is drawn as plain data ([`RequestSpec`]) from vocabularies of what the API knows
//! and what an attacker tries (odd path segments, blank and overflowing query values, the demo
//! keys and broken `Authorization` headers, JSON fragments that are wrong in type, range,
//! encoding or syntax), and [`check_answer`] states the property: no 5xx, and every error is
//! the engine's JSON error shape with a code and an Arabic message.

use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};
use serde_json::Value;

use crate::clock::ManualClock;
use crate::engine::Engine;
use crate::sandbox;
use crate::store::MemoryStore;

/// Methods, the API's and others.
pub const METHODS: &[&str] = &[
    "GET", "POST", "HEAD", "PUT", "DELETE", "PATCH", "OPTIONS", "get", "BREW",
];

/// The API's endpoints (method, path); `{id}` is filled from [`IDS`].
pub const ROUTES: &[(&str, &str)] = &[
    ("GET", "/api/v1/me"),
    ("GET", "/api/v1/categories"),
    ("GET", "/api/v1/products"),
    ("GET", "/api/v1/products/{id}"),
    ("GET", "/api/v1/shipping/options"),
    ("POST", "/api/v1/shipping/quote"),
    ("GET", "/api/v1/orders"),
    ("POST", "/api/v1/orders"),
    ("POST", "/api/v1/orders"),
    ("GET", "/api/v1/orders/{id}"),
    ("POST", "/api/v1/orders/{id}/cancel"),
    ("GET", "/api/v1/wallet"),
];

/// Ids for the `{id}` of [`ROUTES`]: the sandbox's, absent ones and malformed ones.
pub const IDS: &[&str] = &[
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "0",
    "-1",
    "007",
    "9223372036854775807",
    "99999999999999999999",
    "1e3",
    "%31",
    "abc",
];

/// Path segments: the API's own, ids, and odd ones.
pub const SEGMENTS: &[&str] = &[
    "api",
    "v1",
    "me",
    "categories",
    "products",
    "shipping",
    "options",
    "quote",
    "orders",
    "cancel",
    "wallet",
    "1",
    "3",
    "5",
    "0",
    "-1",
    "007",
    "99999999999999999999",
    "abc",
    "",
    ".",
    "..",
    "API",
    "v2",
    "%00",
    "%2F",
    "%D8%B3",
    "%ZZ",
    "1e3",
    "me;x",
];

/// Query parameter names the endpoints read, and one they do not.
pub const QUERY_NAMES: &[&str] = &[
    "page",
    "per_page",
    "q",
    "category_id",
    "updated_since",
    "family",
    "status",
    "number",
    "external_reference",
    "unknown",
];

/// Query values: valid, blank, out of range, malformed and oddly encoded.
pub const QUERY_VALUES: &[&str] = &[
    "",
    "1",
    "2",
    "0",
    "-1",
    "100",
    "101",
    "abc",
    "99999999999999999999999",
    "2026-01-01T00:00:00Z",
    "2026-01-01T00:00:00%2B03:00",
    "2026-01-01T00:00:00+03",
    "0000-01-01T00:00:00Z",
    "9999-12-31T23:59:59Z",
    "pending",
    "order_pending",
    "%00",
    "%ZZ",
    "%D8%B3%D9%85",
    "%E2%80%AE",
    "+",
    "a%20b",
];

/// `Authorization` values: the sandbox's demo keys and broken headers.
pub const AUTHORIZATIONS: &[&str] = &[
    "Bearer sk_demo_marketer",
    "Bearer sk_demo_marketer_b",
    "Bearer sk_demo_catalog_only",
    "Bearer sk_demo_expired",
    "Bearer sk_demo_revoked",
    "Bearer sk_demo_limited",
    "Bearer sk_demo_supplier",
    "Bearer sk_demo_inactive",
    "Bearer sk_demo_api_pending",
    "bearer sk_demo_marketer",
    "Bearer  sk_demo_marketer ",
    "Bearer",
    "Bearer ",
    "Basic c2s6",
    "sk_demo_marketer",
    "Bearer sk_live_0000000000000000000000000000000000000000",
];

/// Other header names a client may send.
pub const HEADER_NAMES: &[&str] = &[
    "idempotency-key",
    "content-type",
    "accept",
    "accept-encoding",
    "content-encoding",
    "x-forwarded-for",
    "cookie",
];

/// Header values (as bytes, some of them not UTF-8).
pub const HEADER_VALUES: &[&[u8]] = &[
    b"",
    b"order-1001",
    b"order 1001",
    b"application/json",
    b"text/plain",
    b"gzip",
    b"\xd8\xb3",
    b"\xff\xfe",
    b"x\ty",
    b"Bearer sk_demo_marketer",
];

/// Body field names (`POST /orders`, `POST /shipping/quote`, `POST /orders/{id}/cancel`).
pub const FIELDS: &[&str] = &[
    "full_name",
    "phone",
    "phone2",
    "address",
    "governorate_id",
    "shipping_option_id",
    "lines",
    "variant_id",
    "quantity",
    "profit",
    "warranty_ids",
    "note",
    "external_reference",
    "store_link",
    "reason_note",
    "city",
];

/// JSON value fragments: right, wrong in type or range, blank, control characters, and some
/// not JSON at all.
pub const VALUES: &[&str] = &[
    "null",
    "true",
    "0",
    "1",
    "3",
    "-1",
    "1.5",
    "1e400",
    "-0",
    "99999999999999999999",
    "\"\"",
    "\"   \"",
    "\"سارة\"",
    "\"01112223334\"",
    "\"0111222333444455556666777788889999\"",
    "\"10\"",
    "\"10.005\"",
    "\"1_000\"",
    "\"1e3\"",
    "\"1000000000.01\"",
    "\"http:///nohost\"",
    "\"https://shop.example/p\"",
    "\"a\\u0000b\"",
    "\"a\\u0007b\"",
    "\"\\u202e\"",
    "\"a\\nb\"",
    "\"\\ud800\"",
    "[]",
    "{}",
    "[1, 1]",
    "[{\"variant_id\": 3, \"quantity\": 1, \"profit\": \"10\"}]",
    "[{\"variant_id\": 3, \"quantity\": 99999, \"profit\": 10, \"warranty_ids\": [1]}]",
    "[{\"variant_id\": \"3\", \"quantity\": 1.5}]",
    "[null]",
    "'x'",
    "nul",
    "{",
];

/// A whole order body that passes validation with the sandbox seed, for bodies that start
/// from a valid request and break one field.
pub const VALID_ORDER: &str = r#"{"full_name": "سارة", "phone": "01112223334", "address": "عنوان", "governorate_id": 1, "shipping_option_id": 1, "lines": [{"variant_id": 3, "quantity": 1, "profit": "10"}]}"#;

/// One request as plain data.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
pub struct RequestSpec {
    /// The method (any token).
    pub method: String,
    /// The path and query, as sent on the request line.
    pub target: String,
    /// Headers, in order (repeats kept).
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body.
    pub body: Vec<u8>,
}

impl RequestSpec {
    /// A `RequestSpec` of its fields, in their order.
    pub fn new(
        method: String,
        target: String,
        headers: Vec<(String, Vec<u8>)>,
        body: Vec<u8>,
    ) -> Self {
        Self {
            method,
            target,
            headers,
            body,
        }
    }
}

impl RequestSpec {
    /// The path `/seg/seg/...` from segment indices (wrapping into [`SEGMENTS`]), with
    /// `/api/v1` in front when `under_api`.
    pub fn path_from(under_api: bool, segments: &[usize]) -> String {
        let mut path = String::from(if under_api { "/api/v1" } else { "" });
        for &i in segments {
            path.push('/');
            path.push_str(SEGMENTS[i % SEGMENTS.len()]);
        }
        if path.is_empty() {
            path.push('/');
        }
        path
    }

    /// The method and path of route `route` with its `{id}` set to id `id` (indices wrap
    /// into [`ROUTES`] and [`IDS`]).
    pub fn route(route: usize, id: usize) -> (&'static str, String) {
        let (method, path) = ROUTES[route % ROUTES.len()];
        (method, path.replace("{id}", IDS[id % IDS.len()]))
    }

    /// A query string from (name, value) index pairs, wrapping into [`QUERY_NAMES`] and
    /// [`QUERY_VALUES`]; `None` for no pairs.
    pub fn query_from(pairs: &[(usize, usize)]) -> Option<String> {
        (!pairs.is_empty()).then(|| {
            pairs
                .iter()
                .map(|&(n, v)| {
                    format!(
                        "{}={}",
                        QUERY_NAMES[n % QUERY_NAMES.len()],
                        QUERY_VALUES[v % QUERY_VALUES.len()]
                    )
                })
                .collect::<Vec<_>>()
                .join("&")
        })
    }

    /// A JSON-ish object from (field, value) index pairs, wrapping into [`FIELDS`] and
    /// [`VALUES`] (repeated fields kept: the text is spliced, not serialised).
    pub fn object_from(pairs: &[(usize, usize)]) -> String {
        let members: Vec<String> = pairs
            .iter()
            .map(|&(f, v)| {
                format!(
                    "\"{}\": {}",
                    FIELDS[f % FIELDS.len()],
                    VALUES[v % VALUES.len()]
                )
            })
            .collect();
        format!("{{{}}}", members.join(", "))
    }

    /// [`VALID_ORDER`] with its field `field` set to value `value` (indices wrap).
    pub fn order_with(field: usize, value: usize) -> String {
        let mut order: serde_json::Map<String, Value> =
            serde_json::from_str(VALID_ORDER).expect("a valid order");
        let name = FIELDS[field % FIELDS.len()];
        match serde_json::from_str::<Value>(VALUES[value % VALUES.len()]) {
            Ok(value) => {
                order.insert(name.to_owned(), value);
                Value::Object(order).to_string()
            }
            // Not JSON: splice it in as text.
            Err(_) => {
                let raw = VALUES[value % VALUES.len()];
                let mut text = Value::Object(order).to_string();
                text.insert_str(1, &format!("\"{name}\": {raw}, "));
                text
            }
        }
    }

    /// The `http::Request`, or `None` when `http` refuses the method, target or a header (a
    /// server refuses those before any engine sees them).
    pub fn build(&self) -> Option<Request<Bytes>> {
        let mut builder = Request::builder()
            .method(self.method.as_bytes())
            .uri(self.target.as_str());
        for (name, value) in &self.headers {
            let name = http::HeaderName::from_bytes(name.as_bytes()).ok()?;
            let value = http::HeaderValue::from_bytes(value).ok()?;
            builder = builder.header(name, value);
        }
        builder.body(Bytes::from(self.body.clone())).ok()
    }
}

/// An engine over a fresh [`MemoryStore`] seeded with the sandbox, on a manual clock at
/// [`start_instant`](super::http::start_instant) (so runs repeat); advance the clock a
/// minute between requests to keep the demo keys under their rate limits.
pub async fn sandbox_engine() -> (Engine, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(super::http::start_instant()));
    let engine = Engine::builder(Arc::new(MemoryStore::new()))
        .clock(clock.clone())
        .build()
        .expect("valid settings");
    sandbox::seed(&engine).await.expect("the sandbox seeds");
    (engine, clock)
}

/// The property of every answer: not a 5xx; an error (4xx) is JSON
/// `{"error": {"code": <string>, "message": <non-empty string>, ...}}` with a JSON
/// content type; a success with a body has a JSON body. `Err` says what is wrong.
pub fn check_answer(response: &Response<Bytes>) -> Result<(), String> {
    let status = response.status();
    if status.is_server_error() || status.is_informational() {
        return Err(format!("status {status}"));
    }
    let json_type = response
        .headers()
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if status.is_client_error() {
        let body: Value = serde_json::from_slice(response.body())
            .map_err(|e| format!("{status}: the body is not JSON ({e})"))?;
        let error = &body["error"];
        let code_ok = error["code"].as_str().is_some_and(|c| !c.is_empty());
        let message_ok = error["message"].as_str().is_some_and(|m| !m.is_empty());
        if !(json_type && code_ok && message_ok && body.as_object().is_some_and(|o| o.len() == 1)) {
            return Err(format!("{status}: not the error shape: {body}"));
        }
    } else if !response.body().is_empty() {
        serde_json::from_slice::<Value>(response.body())
            .map_err(|e| format!("{status}: the body is not JSON ({e})"))?;
        if !json_type {
            return Err(format!("{status}: no JSON content type"));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{ApiError, ErrorCode};

    fn response(status: u16, content_type: &str, body: &str) -> Response<Bytes> {
        Response::builder()
            .status(status)
            .header("content-type", content_type)
            .body(Bytes::from(body.to_owned()))
            .expect("response")
    }

    #[test]
    fn the_property_refuses_what_it_should() {
        let json = "application/json; charset=utf-8";
        assert!(
            check_answer(
                &ApiError::not_found().render(&crate::render::request_id::RequestId::generate())
            )
            .is_ok()
        );
        assert!(check_answer(&response(200, json, r#"{"data": 1}"#)).is_ok());
        assert!(check_answer(&response(204, json, "")).is_ok());
        // axum's empty 404, a 5xx (even in the error shape), a 4xx of another shape.
        assert!(check_answer(&response(404, "text/plain", "")).is_err());
        assert!(
            check_answer(
                &ApiError::new(ErrorCode::ServerError)
                    .render(&crate::render::request_id::RequestId::generate())
            )
            .is_err()
        );
        assert!(check_answer(&response(400, json, r#"{"message": "x"}"#)).is_err());
        assert!(check_answer(&response(422, json, r#"{"error": {"code": "x"}}"#)).is_err());
        assert!(
            check_answer(&response(
                413,
                "text/plain",
                r#"{"error": {"code": "x", "message": "y"}}"#
            ))
            .is_err()
        );
        assert!(check_answer(&response(200, json, "not json")).is_err());
    }

    #[test]
    fn broken_fields_splice_into_a_valid_order() {
        // `phone` (index 1) set to a blank string: still JSON, the field replaced.
        let body: Value = serde_json::from_str(&RequestSpec::order_with(1, 11)).expect("JSON");
        assert_eq!(body["phone"], "   ");
        assert_eq!(body["governorate_id"], 1);
        // A fragment that is not JSON makes a body that is not JSON either.
        let last = VALUES.len() - 1;
        assert!(serde_json::from_str::<Value>(&RequestSpec::order_with(0, last)).is_err());
    }
}
