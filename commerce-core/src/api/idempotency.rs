//! `Idempotency-Key` on `POST /orders` and `POST /quotes` (docs/idempotency.md): the header,
//! the request fingerprint, the protocol ([`run`]) and the replayed response.

use std::fmt::Write as _;
use std::future::Future;

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

use super::Ctx;
use crate::error::{ApiError, ConflictReason};
use crate::limits::MAX_IDEMPOTENCY_KEY;
use crate::model::{IdempotencyClaim, IdempotencyScope, IdempotencyToken, StoredResponse};
use crate::render::messages;
use crate::render::wire;
use crate::store::{Created, IdempotencyBegin, StoreError};
use crate::web::input::json_object;
use crate::web::routes::API_PREFIX;

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

/// 201 with a created record's JSON `body` and its `Location` (the record `id` of
/// `collection`, under `mount`).
pub(crate) fn created(mount: &str, collection: &str, id: i64, body: Vec<u8>) -> Response<Bytes> {
    let mut response = wire::json_response(StatusCode::CREATED, body);
    response
        .headers_mut()
        .insert(header::LOCATION, location(mount, collection, id));
    response
}

/// The `Location` of the record `id` of a collection (`orders`, `quotes`), under the path the
/// API is mounted at.
pub(crate) fn location(mount: &str, collection: &str, id: i64) -> HeaderValue {
    HeaderValue::from_str(&format!("{mount}{API_PREFIX}/{collection}/{id}")).unwrap_or_else(|_| {
        HeaderValue::from_str(&format!("{API_PREFIX}/{collection}/{id}"))
            .expect("digits are a valid header")
    })
}

/// The stored first response, byte for byte, with its `Location` in `collection`.
fn replay(stored: StoredResponse, mount: &str, collection: &str) -> Response<Bytes> {
    let id = serde_json::from_slice::<Value>(&stored.body)
        .ok()
        .and_then(|v| v.pointer("/data/id").and_then(Value::as_i64));
    let status = StatusCode::from_u16(stored.status).unwrap_or(StatusCode::CREATED);
    let mut response = wire::json_response(status, stored.body);
    if let Some(id) = id {
        response
            .headers_mut()
            .insert(header::LOCATION, location(mount, collection, id));
    }
    mark(&mut response, true);
    response
}

/// 409: the first request with this key is still being processed (or this request outlived
/// the stale time and a retry took its key over).
pub(crate) fn in_flight() -> ApiError {
    ApiError::conflict(
        ConflictReason::IdempotencyInProgress,
        messages::IDEMPOTENCY_IN_FLIGHT,
    )
}

/// A create under the idempotency protocol (docs/idempotency.md): the request `POST {path}`
/// with the JSON `body`, creating a record of `collection`.
pub(crate) struct Create<'a> {
    /// The request's path as the fingerprint takes it (`/api/v1/orders`).
    pub path: &'a str,
    /// The collection of the created record, for the replay's `Location` (`orders`).
    pub collection: &'a str,
    /// The path the API is mounted under.
    pub mount: &'a str,
    /// The request's `Idempotency-Key`, if any ([`key`]).
    pub key: Option<String>,
    /// The request's body.
    pub body: Value,
}

impl<'a> Create<'a> {
    /// Reads a create `POST {path}` of a record of `collection`: its JSON object body, its
    /// key ([`key`]) and what `parse` makes of the object; a refusal is not replayed
    /// ([`not_replayed`]).
    pub(crate) fn read<T>(
        (path, collection, mount): (&'a str, &'a str, &'a str),
        headers: &HeaderMap,
        body: &Bytes,
        parse: impl FnOnce(&Map<String, Value>) -> Result<T, ApiError>,
    ) -> Result<(Self, T), ApiError> {
        let read = || {
            let object = json_object(body, false)?;
            let key = key(headers)?;
            let parsed = parse(&object)?;
            Ok::<_, ApiError>((object, key, parsed))
        };
        let (object, key, parsed) = read().map_err(not_replayed)?;
        let create = Create {
            path,
            collection,
            mount,
            key,
            body: Value::Object(object),
        };
        Ok((create, parsed))
    }
}

/// Runs a create under the protocol: without a key, `perform(None)`; with one, begins the
/// key's record, then replays a finished first response, refuses another body (409
/// `idempotency_key_reused`) or a first request still running (409
/// `idempotency_in_progress`), answers with the record a dead first request created
/// (`recover`, given its id `I`: an [`OrderId`](crate::model::OrderId) or a
/// [`QuoteId`](crate::model::QuoteId), what the key's record is linked to), or performs the
/// request holding the key (`perform(Some(claim))`), keeps its response and marks it; a
/// request that fails gives the key up. Every answer carries `Idempotent-Replayed`.
pub(crate) async fn run<I, P, PF, R, RF>(
    ctx: &Ctx<'_>,
    create: Create<'_>,
    perform: P,
    recover: R,
) -> Result<Response<Bytes>, ApiError>
where
    P: FnOnce(Option<IdempotencyClaim>) -> PF,
    PF: Future<Output = Result<Response<Bytes>, ApiError>>,
    I: TryFrom<Created>,
    R: FnOnce(I) -> RF,
    RF: Future<Output = Result<Response<Bytes>, ApiError>>,
{
    // Every error answer says it was not replayed.
    async {
        let Some(key) = create.key else {
            let mut response = perform(None).await?;
            mark(&mut response, false);
            return Ok(response);
        };
        // This request's own token: a retry that takes the record over fences it out.
        let claim = IdempotencyClaim::new(
            IdempotencyScope::new(ctx.caller.account.id, key),
            IdempotencyToken::random(),
        );
        let fingerprint = fingerprint("POST", create.path, &create.body);
        let config = ctx.config();
        let begin = ctx
            .store()
            .begin_idempotent(
                &claim,
                &fingerprint,
                ctx.now,
                ctx.now - config.idempotency_ttl,
                ctx.now - config.idempotency_stale_after,
            )
            .await
            .map_err(|e| ApiError::from_store(e, "begin_idempotent"))?;
        let (result, replayed) = match begin {
            IdempotencyBegin::Replay(stored) => {
                return Ok(replay(stored, create.mount, create.collection));
            }
            IdempotencyBegin::Mismatch => {
                return Err(ApiError::conflict(
                    ConflictReason::IdempotencyKeyReused,
                    messages::IDEMPOTENCY_MISMATCH,
                ));
            }
            IdempotencyBegin::InFlight => return Err(in_flight()),
            // A key's record is linked to what its path creates (the fingerprint names the path):
            // another kind is a broken store.
            IdempotencyBegin::Recovered(created) => match I::try_from(created) {
                Ok(id) => (recover(id).await, true),
                Err(_) => (Err(ApiError::server()), true),
            },
            IdempotencyBegin::Started => (perform(Some(claim.clone())).await, false),
        };
        match result {
            Ok(mut response) => {
                let stored = StoredResponse {
                    status: response.status().as_u16(),
                    body: response.body().to_vec(),
                };
                match ctx.store().finish_idempotent(&claim, stored).await {
                    Ok(()) => {}
                    // A retry took the record over after this request made its record (it
                    // outlived the stale time): the retry answers with that same record and keeps
                    // its own response; this one is true as well, and stands unkept.
                    Err(StoreError::NotFound) => {
                        tracing::warn!(
                            "idempotency record taken over before the response was kept"
                        );
                    }
                    Err(error) => return Err(ApiError::from_store(error, "finish_idempotent")),
                }
                mark(&mut response, replayed);
                Ok(response)
            }
            Err(error) => {
                if let Err(store_error) = ctx.store().abandon_idempotent(&claim).await {
                    tracing::error!(%store_error, "could not release an idempotency key");
                }
                Err(error)
            }
        }
    }
    .await
    .map_err(not_replayed)
}

/// An error answer of an idempotent create: `Idempotent-Replayed: false`.
pub(crate) fn not_replayed(error: ApiError) -> ApiError {
    error.with_header(
        http::HeaderName::from_static(REPLAYED_HEADER),
        HeaderValue::from_static("false"),
    )
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
