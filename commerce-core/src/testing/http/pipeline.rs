//! Authentication and the request pipeline (keys, states, abilities, routing, rate limit),
//! and Arabic messages and labels.

use bytes::Bytes;
use chrono::Duration;
use http::Method;
use serde_json::{Value, json};

use crate::model::*;

use super::fixtures::*;
use super::harness::*;

/// `GET /me` returns the account, its key and the rate-limit headers.
pub async fn me_returns_account_token_and_rate_headers(h: &Harness) {
    let r = h.get(A, "/api/v1/me").await;
    assert_eq!(r.status, 200);
    let d = &r.json()["data"];
    assert_eq!(d["id"], h.fixture.marketer_a.get());
    assert_eq!(d["side"], "marketer");
    assert_eq!(d["email"], "ahmed@example.com");
    assert!(d["store_name"].is_string());
    assert_eq!(
        d["token"]["abilities"],
        json!([
            "catalog:read",
            "orders:read",
            "orders:write",
            "wallet:read",
            "webhooks:manage"
        ])
    );
    assert_eq!(d["token"]["expires_at"], Value::Null);
    assert_eq!(r.header("x-ratelimit-limit"), Some("120"));
    assert_eq!(r.header("x-ratelimit-remaining"), Some("119"));
    assert!(
        r.header("content-type")
            .is_some_and(|c| c.starts_with("application/json"))
    );
}

/// A supplier's `/me` shows `side` supplier and a null `store_name`; its catalogue calls are
/// `wrong_side`, its wallet works.
pub async fn supplier_sees_me_and_wallet_but_not_the_catalogue(h: &Harness) {
    let r = h.get("sk_demo_supplier", "/api/v1/me").await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["data"]["side"], "supplier");
    assert_eq!(r.json()["data"]["store_name"], Value::Null);
    h.get("sk_demo_supplier", "/api/v1/products")
        .await
        .assert_error(403, "wrong_side");
    h.get("sk_demo_supplier", "/api/v1/orders")
        .await
        .assert_error(403, "wrong_side");
    let wallet = h.get("sk_demo_supplier", "/api/v1/wallet").await;
    assert_eq!(wallet.status, 200);
    assert_eq!(wallet.json()["data"]["side"], "supplier");
}

/// Missing, malformed, unknown, expired and revoked keys are all 401, without rate headers.
pub async fn bad_keys_are_unauthenticated(h: &Harness) {
    let none = h
        .request(Method::GET, None, "/api/v1/me", Bytes::new(), &[])
        .await;
    none.assert_error(401, "unauthenticated");
    assert!(none.header("x-ratelimit-limit").is_none());
    let basic = h
        .request(
            Method::GET,
            None,
            "/api/v1/me",
            Bytes::new(),
            &[("authorization", "Basic c2tfZGVtbw==")],
        )
        .await;
    basic.assert_error(401, "unauthenticated");
    for key in [
        "sk_nope",
        "sk_demo_expired",
        "sk_demo_revoked",
        "SK_DEMO_MARKETER",
    ] {
        h.get(key, "/api/v1/me")
            .await
            .assert_error(401, "unauthenticated");
    }
    assert!(
        !none.json()["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .is_empty()
    );
}

/// Account state, API status and abilities are checked in that order, each with its code.
pub async fn account_api_status_and_ability_errors(h: &Harness) {
    h.get("sk_demo_inactive", "/api/v1/me")
        .await
        .assert_error(403, "account_inactive");
    let pending = h.get("sk_demo_api_pending", "/api/v1/me").await;
    pending.assert_error(403, "api_not_enabled");
    assert_eq!(pending.json()["error"]["api_status"], "pending");
    let catalog_only = "sk_demo_catalog_only";
    assert_eq!(h.get(catalog_only, "/api/v1/products").await.status, 200);
    h.get(catalog_only, "/api/v1/orders")
        .await
        .assert_error(403, "forbidden_ability");
    h.get(catalog_only, "/api/v1/wallet")
        .await
        .assert_error(403, "forbidden_ability");
    h.post(catalog_only, "/api/v1/orders", &h.order_body(1, "10"))
        .await
        .assert_error(403, "forbidden_ability");
    // Suspending the account stops its keys at once.
    h.engine
        .operator()
        .set_account_state(h.fixture.marketer_b, AccountState::Suspended)
        .await
        .expect("operator");
    h.get(B, "/api/v1/me")
        .await
        .assert_error(403, "account_inactive");
}

/// Unknown paths are 404, wrong methods 405 with `Allow`, before any key check.
pub async fn unknown_paths_and_wrong_methods(h: &Harness) {
    h.request(Method::GET, None, "/api/v1/nothing", Bytes::new(), &[])
        .await
        .assert_error(404, "not_found");
    h.get(A, "/api/v1/products/abc")
        .await
        .assert_error(404, "not_found");
    let r = h
        .request(Method::DELETE, None, "/api/v1/orders", Bytes::new(), &[])
        .await;
    r.assert_error(405, "method_not_allowed");
    assert_eq!(r.header("allow"), Some("GET, HEAD, POST"));
    let r = h
        .request(
            Method::GET,
            Some(A),
            "/api/v1/shipping/quote",
            Bytes::new(),
            &[],
        )
        .await;
    r.assert_error(405, "method_not_allowed");
    assert_eq!(r.header("allow"), Some("POST"));
}

/// The per-key limit: headers count down, the next request is a 429 with `retry_after`,
/// refused requests do not count, and the next minute starts afresh.
pub async fn rate_limit_counts_down_then_refuses(h: &Harness) {
    let key = "sk_demo_limited";
    for remaining in (0..5).rev() {
        let r = h.get(key, "/api/v1/me").await;
        assert_eq!(r.status, 200);
        assert_eq!(r.header("x-ratelimit-limit"), Some("5"));
        assert_eq!(
            r.header("x-ratelimit-remaining"),
            Some(remaining.to_string().as_str())
        );
    }
    h.clock.advance(Duration::seconds(15));
    let refused = h.get(key, "/api/v1/me").await;
    refused.assert_error(429, "rate_limited");
    assert_eq!(refused.json()["error"]["retry_after"], 45);
    assert_eq!(refused.header("retry-after"), Some("45"));
    assert_eq!(refused.header("x-ratelimit-remaining"), Some("0"));
    h.clock.advance(Duration::seconds(45));
    let next = h.get(key, "/api/v1/me").await;
    assert_eq!(next.status, 200);
    assert_eq!(next.header("x-ratelimit-remaining"), Some("4"));
}

/// Every client-facing text is Arabic: messages, field messages and status labels.
pub async fn messages_and_labels_are_arabic(h: &Harness) {
    let is_arabic = |s: &str| s.chars().any(|c| ('\u{0600}'..='\u{06FF}').contains(&c));
    let r = h.post(A, "/api/v1/orders", &json!({})).await.json();
    assert!(is_arabic(
        r["error"]["message"].as_str().unwrap_or_default()
    ));
    for messages in r["error"]["fields"].as_object().expect("fields").values() {
        assert!(
            messages
                .as_array()
                .expect("array")
                .iter()
                .all(|m| is_arabic(m.as_str().unwrap_or_default()))
        );
    }
    let order = h
        .get(A, &format!("/api/v1/orders/{}", h.fixture.confirmed_order))
        .await
        .json();
    assert!(is_arabic(
        order["data"]["status"]["label"]
            .as_str()
            .unwrap_or_default()
    ));
    assert!(
        order["data"]["timeline"]
            .as_array()
            .expect("timeline")
            .iter()
            .all(|e| is_arabic(e["label"].as_str().unwrap_or_default()))
    );
}

/// `GET /openapi.json` names the path the API is mounted under as its server, so that a
/// client generated from it calls `{server}/api/v1/...` (`/` at the root).
pub async fn the_document_names_the_mounted_prefix(h: &Harness) {
    let r = h
        .request(Method::GET, None, "/api/v1/openapi.json", Bytes::new(), &[])
        .await;
    assert_eq!(r.status, 200);
    let expected = if h.mount.is_empty() { "/" } else { &h.mount };
    assert_eq!(r.json()["servers"], json!([{"url": expected}]));
}
