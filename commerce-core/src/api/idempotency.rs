//! `Idempotency-Key` on `POST /orders` (docs/idempotency.md): the header, the request fingerprint, and
//! the replayed response.

use std::fmt::Write as _;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use serde_json::Value;
use sha2::{Digest, Sha256};

use crate::error::ApiError;
use crate::limits::MAX_IDEMPOTENCY_KEY;
use crate::messages;
use crate::model::{OrderId, StoredResponse};
use crate::wire;

/// The request header.
pub(crate) const KEY_HEADER: &str = "idempotency-key";
/// The response header.
pub(crate) const REPLAYED_HEADER: &str = "idempotent-replayed";

/// The key of a request, if any: 1 to 100 visible ASCII characters, else a 422; a header
/// sent twice is ambiguous (which one would replay?): a 422 too.
pub(crate) fn key(headers: &HeaderMap) -> Result<Option<String>, ApiError> {
    let mut all = headers.get_all(KEY_HEADER).iter();
    let Some(value) = all.next() else {
        return Ok(None);
    };
    if all.next().is_some() {
        return Err(ApiError::field(
            "Idempotency-Key",
            messages::IDEMPOTENCY_KEY_REPEATED,
        ));
    }
    // Printable ASCII, spaces allowed inside (leading and trailing ones are not part of it).
    let text = value.to_str().map(str::trim).unwrap_or_default();
    let printable = text.bytes().all(|b| b.is_ascii_graphic() || b == b' ');
    if text.is_empty() || text.len() > MAX_IDEMPOTENCY_KEY || !printable {
        return Err(ApiError::field(
            "Idempotency-Key",
            messages::IDEMPOTENCY_KEY_FORM,
        ));
    }
    Ok(Some(text.to_owned()))
}

/// SHA-256 (hex) of the method, the path and the canonical JSON of the body (keys sorted at
/// every level, no insignificant white space), so key order and spacing never matter.
pub(crate) fn fingerprint(method: &str, path: &str, body: &Value) -> String {
    let mut canonical = String::with_capacity(256);
    write_canonical(body, &mut canonical);
    let digest = Sha256::new()
        .chain_update(method.as_bytes())
        .chain_update(b" ")
        .chain_update(path.as_bytes())
        .chain_update(b"\n")
        .chain_update(canonical.as_bytes())
        .finalize();
    digest
        .iter()
        .fold(String::with_capacity(64), |mut hex, byte| {
            let _ = write!(hex, "{byte:02x}");
            hex
        })
}

fn write_canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut entries: Vec<_> = map.iter().collect();
            entries.sort_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                write_canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, v) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(v, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// Marks a response as first (`false`) or replayed (`true`, counted in the metrics).
pub(crate) fn mark(response: &mut Response<Bytes>, replayed: bool) {
    if replayed {
        crate::observe::idempotent_replay();
    }
    response.headers_mut().insert(
        REPLAYED_HEADER,
        HeaderValue::from_static(if replayed { "true" } else { "false" }),
    );
}

/// The stored first response, byte for byte, with its `Location`.
pub(crate) fn replay(stored: StoredResponse, mount: &str) -> Response<Bytes> {
    let location = serde_json::from_slice::<Value>(&stored.body)
        .ok()
        .and_then(|v| v.pointer("/data/id").and_then(Value::as_i64));
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::CREATED);
    let mut response = wire::json_response(status, stored.body);
    if let Some(id) = location {
        response.headers_mut().insert(
            header::LOCATION,
            super::orders::location(mount, OrderId::new(id)),
        );
    }
    mark(&mut response, true);
    response
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn fingerprint_ignores_key_order_and_spacing_but_not_values() {
        let a = fingerprint(
            "POST",
            "/api/v1/orders",
            &json!({"a": 1, "b": {"y": [1, 2], "x": "s"}}),
        );
        let b = fingerprint(
            "POST",
            "/api/v1/orders",
            &serde_json::from_str(r#"{ "b": {"x":"s","y":[1,2]}, "a":1 }"#).unwrap(),
        );
        let c = fingerprint(
            "POST",
            "/api/v1/orders",
            &json!({"a": 2, "b": {"y": [1, 2], "x": "s"}}),
        );
        assert_eq!(a, b);
        assert_ne!(a, c);
        assert_eq!(a.len(), 64);
    }

    #[test]
    fn keys_over_100_characters_are_refused() {
        let mut headers = HeaderMap::new();
        headers.insert(KEY_HEADER, HeaderValue::from_str(&"k".repeat(100)).unwrap());
        assert_eq!(
            key(&headers).unwrap().as_deref(),
            Some("k".repeat(100).as_str())
        );
        headers.insert(KEY_HEADER, HeaderValue::from_str(&"k".repeat(101)).unwrap());
        assert!(key(&headers).is_err());
    }
}
