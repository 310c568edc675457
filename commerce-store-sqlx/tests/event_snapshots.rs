//! Deliveries keep their events as snapshots (migration `20261213000000_event_snapshots`): a
//! row written before it, with the body rendered then in `payload` and no `snapshot`, is still
//! delivered exactly as it was (the same bytes, signed, under its event id), next to the
//! deliveries written since, which the dispatcher renders from their snapshots. SQLite always;
//! PostgreSQL when configured.
//!
//! The earlier row is inserted directly, as the version before the migration wrote it.

mod pg;
mod sqlite_file;

use std::sync::Arc;
use std::time::Duration;

use chrono::TimeDelta;
use commerce_core::testing::http::Harness;
use commerce_core::testing::http::receiver::Receiver;
use commerce_core::webhooks::{DispatcherConfig, verify};
use serde_json::json;

/// Marketer A's key (`webhooks:manage`).
const KEY: &str = "sk_demo_marketer";
/// The legacy row's event id.
const EVENT_ID: &str = "evt_legacy0000000000000000001";
/// A body as the earlier version rendered it, byte for byte (key order, escapes, Arabic).
const LEGACY_BODY: &str = r#"{"id":"evt_legacy0000000000000000001","type":"order.created","created_at":"2026-11-20T12:00:00+02:00","data":{"order":{"id":999,"note":"قال \"نعم\"\nثم اتصل"},"previous_status":null}}"#;

/// The insert of the earlier version's row: `payload` rendered, `snapshot` left out (NULL).
const INSERT_LEGACY: &str = "INSERT INTO webhook_deliveries (endpoint_id, account_id, \
    event_id, event_type, order_id, payload, status, attempts, next_attempt_at, created_at) \
    SELECT id, account_id, $1, 'order.created', NULL, $2, 'pending', 0, $3, $3 \
    FROM webhook_endpoints WHERE id = $4";

/// The insert of the legacy row into `pool`'s database, for an endpoint id and a due instant.
macro_rules! insert_legacy {
    ($pool:expr) => {
        async |endpoint: i64, due: i64| {
            let inserted = commerce_store_sqlx::sqlx::query(INSERT_LEGACY)
                .bind(EVENT_ID)
                .bind(LEGACY_BODY)
                .bind(due)
                .bind(endpoint)
                .execute(&$pool)
                .await
                .expect("the legacy row");
            assert_eq!(inserted.rows_affected(), 1);
        }
    };
}

/// Registers an endpoint at a local receiver, queues a legacy row and a ping (the ping has a
/// snapshot, the legacy row none), runs the dispatcher, and checks what the receiver got.
/// `insert` writes the legacy row (endpoint id, due instant in nanoseconds).
async fn legacy_rows_are_delivered_as_they_were(h: &Harness, insert: impl AsyncFnOnce(i64, i64)) {
    let receiver = Receiver::start().await;
    let created = h
        .post(KEY, "/api/v1/webhooks", &json!({"url": receiver.url}))
        .await;
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    let endpoint = created.json()["data"].clone();
    let id = endpoint["id"].as_i64().expect("an id");
    let secret = endpoint["secret"].as_str().expect("a secret").to_owned();
    let now = h.engine.now();
    insert(id, now.timestamp_nanos_opt().expect("a storable instant")).await;
    let ping = h
        .post(KEY, &format!("/api/v1/webhooks/{id}/ping"), &json!({}))
        .await;
    assert_eq!(ping.status, 202, "{}", String::from_utf8_lossy(&ping.body));

    let dispatcher = h
        .engine
        .dispatcher()
        .with_config(DispatcherConfig::default().with_timeout(Duration::from_secs(5)));
    let mut sent = 0;
    while let n @ 1.. = dispatcher.deliver_due().await.expect("a dispatcher pass") {
        sent += n;
    }
    assert_eq!(sent, 2, "the legacy row and the ping");
    let received = receiver.received();
    assert_eq!(received.len(), 2);
    let legacy = received
        .iter()
        .find(|r| r.header("webhook-id") == EVENT_ID)
        .expect("the legacy row was sent");
    assert_eq!(
        legacy.body.as_ref(),
        LEGACY_BODY.as_bytes(),
        "the body rendered then"
    );
    let pinged = received
        .iter()
        .find(|r| r.header("webhook-id") != EVENT_ID)
        .expect("the ping was sent");
    assert_eq!(pinged.json()["type"], "ping");
    assert_eq!(pinged.json()["data"], json!({"webhook_id": id}));
    for request in &received {
        verify(
            &secret,
            &request.headers,
            &request.body,
            h.engine.now(),
            TimeDelta::minutes(5),
        )
        .expect("signed over the bytes sent");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_delivers_rows_written_before_snapshots_as_they_were() {
    let (store, path) = sqlite_file::open("event_snapshots").await;
    let pool = store.pool().clone();
    let h = Harness::bare(Arc::new(store.clone())).await;
    legacy_rows_are_delivered_as_they_were(&h, insert_legacy!(pool)).await;
    pool.close().await;
    sqlite_file::remove_files(&path);
}

#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_delivers_rows_written_before_snapshots_as_they_were() {
    let url = pg::database_url();
    let (store, schema) = pg::open(&url).await;
    let pool = store.pool().clone();
    let h = Harness::bare(Arc::new(store.clone())).await;
    legacy_rows_are_delivered_as_they_were(&h, insert_legacy!(pool)).await;
    pg::drop_schema(&url, &[&pool], &schema).await;
}
