//! Request ids: `Request-Id` on every answer, whichever phase of the pipeline gave it, echoed
//! when the client sent a valid one, and repeated in every error body.

use bytes::Bytes;
use http::Method;
use serde_json::json;

use super::fixtures::*;
use super::harness::*;

/// `method path` with `Request-Id: id` (none when `id` is empty).
async fn send(
    h: &Harness,
    method: Method,
    key: Option<&str>,
    path: &str,
    body: Bytes,
    id: &str,
) -> TestResponse {
    let headers = [("request-id", id)];
    let headers: &[(&str, &str)] = if id.is_empty() { &[] } else { &headers };
    h.request(method, key, path, body, headers).await
}

/// Every phase's answers carry a request id: the head's refusals (404, 405, 413, 401, 429,
/// 403), the body's (413, 422), the handlers' (409) and successes, and an idempotent replay,
/// which gets the new request's id over the stored body. A valid client id is echoed on each;
/// an invalid one is replaced. (The harness checks the header and `error.request_id` of
/// every answer; this case makes sure each kind of answer is seen.)
pub async fn every_answer_carries_its_request_id(h: &Harness) {
    let (a, supplier, limited) = (Some(A), Some("sk_demo_supplier"), Some("sk_demo_limited"));
    let big = Bytes::from(vec![b' '; h.engine.config().order_body_limit + 1]);
    let cases: Vec<(Method, Option<&str>, &str, Bytes, u16)> = vec![
        (Method::GET, a, "/api/v1/me", Bytes::new(), 200),
        (Method::GET, a, "/api/v1/nothing", Bytes::new(), 404),
        (Method::DELETE, a, "/api/v1/me", Bytes::new(), 405),
        (Method::POST, a, "/api/v1/orders", big.clone(), 413),
        (Method::POST, None, "/api/v1/orders", big, 413),
        (Method::GET, None, "/api/v1/me", Bytes::new(), 401),
        (Method::GET, supplier, "/api/v1/products", Bytes::new(), 403),
        (Method::POST, a, "/api/v1/orders", Bytes::from("{"), 422),
        (Method::GET, a, "/api/v1/openapi.json", Bytes::new(), 200),
    ];
    for (i, (method, key, path, body, status)) in cases.into_iter().enumerate() {
        for id in ["", "ticket 42/a", &format!("case-{i}")] {
            let r = send(h, method.clone(), key, path, body.clone(), id).await;
            assert_eq!(r.status, status, "{method} {path}");
            if !id.is_empty() {
                assert_eq!(r.request_id(), id, "{method} {path}");
            }
        }
    }
    // Not valid: replaced by a new id (the harness checks its form).
    for id in ["x".repeat(101), " ".to_owned()] {
        let r = send(h, Method::GET, a, "/api/v1/me", Bytes::new(), &id).await;
        assert!(r.request_id().starts_with("req_"), "{id:?}");
    }
    // Each request its own id.
    let one = h.get(A, "/api/v1/me").await;
    let two = h.get(A, "/api/v1/me").await;
    assert_ne!(one.request_id(), two.request_id());

    // 409 from a handler, and an idempotent replay.
    let body = h.order_body(1, "10").to_string();
    let key = [("idempotency-key", "rid-1"), ("request-id", "first")];
    let first = h
        .request(Method::POST, a, "/api/v1/orders", body.clone(), &key)
        .await;
    assert_eq!(first.status, 201);
    let key = [("idempotency-key", "rid-1"), ("request-id", "retry")];
    let replay = h
        .request(Method::POST, a, "/api/v1/orders", body, &key)
        .await;
    assert_eq!(replay.header("idempotent-replayed"), Some("true"));
    assert_eq!(replay.request_id(), "retry");
    assert_eq!(replay.body, first.body);
    let id = first.json()["data"]["id"].clone();
    let again = h
        .post(A, &format!("/api/v1/orders/{id}/cancel"), &json!({}))
        .await;
    assert_eq!(again.status, 200);
    let refused = h
        .post(A, &format!("/api/v1/orders/{id}/cancel"), &json!({}))
        .await;
    refused.assert_conflict("not_cancellable");

    // 429: the limited key allows 5 a minute.
    let mut last = None;
    for _ in 0..6 {
        last = Some(
            send(
                h,
                Method::GET,
                limited,
                "/api/v1/me",
                Bytes::new(),
                "limited-6",
            )
            .await,
        );
    }
    let refused_429 = last.expect("six answers");
    refused_429.assert_error(429, "rate_limited");
    assert_eq!(refused_429.json()["error"]["request_id"], "limited-6");
}
