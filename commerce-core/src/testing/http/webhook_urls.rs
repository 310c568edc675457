//! Where webhooks may point in the sandbox: `http` and loopback receivers, nothing else
//! private, and one answer for a name that does not resolve and one that is not public.

use bytes::Bytes;
use http::Method;
use serde_json::{Value, json};

use super::harness::Harness;

const KEY: &str = "sk_demo_marketer";

/// The sandbox allows `http` and loopback only (127.0.0.0/8, ::1): private, link-local,
/// unique-local and IPv4-embedding addresses, in any spelling, are 422 at registration and
/// on a change of URL, with the same answer as a host name that does not resolve.
pub async fn webhook_urls_sandbox_allows_loopback_only(h: &Harness) {
    let mut answers: Vec<Value> = Vec::new();
    for url in [
        "http://10.0.0.1/h",
        "http://169.254.169.254/latest/meta-data",
        "http://2852039166/latest/meta-data", // 169.254.169.254 in decimal
        "http://192.168.1.1/h",
        "http://[fd00::1]/h",
        "http://[fe80::1]/h",
        "http://[::ffff:10.0.0.1]/h",
        "http://[64:ff9b::a00:1]/h",
        "http://[2002:a00:1::1]/h",
        "http://0.0.0.0:4000/h",
        "http://no-such-host.invalid/h",
    ] {
        let refused = h.post(KEY, "/api/v1/webhooks", &json!({"url": url})).await;
        refused.assert_error(422, "validation_failed");
        assert_eq!(refused.error_fields(), ["url"], "{url}");
        answers.push(refused.json_without_request_id()["error"].clone());
    }
    assert!(
        answers.windows(2).all(|pair| pair[0] == pair[1]),
        "one answer for every refused address and for a name that does not resolve: {answers:?}"
    );

    let mut ids = Vec::new();
    for url in [
        "http://127.0.0.1:4000/h",
        "http://127.0.0.2:4000/h",
        "http://[::1]:4000/h",
        "http://localhost:4000/h",
    ] {
        let created = h.post(KEY, "/api/v1/webhooks", &json!({"url": url})).await;
        assert_eq!(
            created.status,
            201,
            "{url}: {}",
            String::from_utf8_lossy(&created.body)
        );
        ids.push(created.json()["data"]["id"].as_i64().unwrap_or_default());
    }
    let path = format!("/api/v1/webhooks/{}", ids[0]);
    let moved = h
        .request(
            Method::PATCH,
            Some(KEY),
            &path,
            Bytes::from(json!({"url": "http://172.16.0.1/h"}).to_string()),
            &[],
        )
        .await;
    moved.assert_error(422, "validation_failed");
    assert_eq!(moved.json_without_request_id()["error"], answers[0]);
    let kept = h.get(KEY, &path).await;
    assert_eq!(kept.json()["data"]["url"], "http://127.0.0.1:4000/h");
}
