//! The sandbox on SQLite keeps its data across restarts: seeded once, an order created before a
//! restart is read back after it, and nothing is seeded twice.
#![cfg(feature = "sqlx")]

use std::sync::Arc;

use bytes::Bytes;
use commerce::sqlx::SqliteStore;
use commerce::{Engine, sandbox};
use http::Request;
use serde_json::{Value, json};

async fn open(url: &str) -> Engine {
    let store = SqliteStore::connect(url)
        .await
        .expect("open the database file");
    store.migrate().await.expect("migrations");
    Engine::new(Arc::new(store))
}

async fn call(engine: &Engine, method: &str, path: &str, body: Option<Value>) -> (u16, Value) {
    let request = Request::builder()
        .method(method)
        .uri(path)
        .header("authorization", "Bearer sk_demo_marketer")
        .header("content-type", "application/json")
        .body(body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string())))
        .expect("request");
    let response = engine.handle(request).await;
    let status = response.status().as_u16();
    (
        status,
        serde_json::from_slice(response.body()).unwrap_or(Value::Null),
    )
}

#[tokio::test]
async fn data_survives_a_restart_and_is_seeded_once() {
    let file = std::env::temp_dir().join(format!(
        "commerce-sandbox-{}-{}.db",
        std::process::id(),
        rand_suffix()
    ));
    let url = format!("sqlite://{}?mode=rwc", file.display());

    let first = open(&url).await;
    let fixture = sandbox::seed_if_empty(&first)
        .await
        .expect("seed")
        .expect("an empty database is seeded");
    let order = json!({
        "external_reference": "RESTART-1",
        "full_name": "سارة حسن",
        "phone": "01112223334",
        "address": "12 شارع النصر",
        "governorate_id": fixture.cairo,
        "shipping_option_id": fixture.standard_shipping,
        "lines": [{"variant_id": fixture.plain_variant, "quantity": 2, "profit": "12.50"}],
    });
    let (status, created) = call(&first, "POST", "/api/v1/orders", Some(order)).await;
    assert_eq!(status, 201);
    let id = created["data"]["id"].as_i64().expect("id");
    drop(first);

    let second = open(&url).await;
    assert!(
        sandbox::seed_if_empty(&second)
            .await
            .expect("check")
            .is_none(),
        "not seeded again"
    );
    let (status, read) = call(&second, "GET", &format!("/api/v1/orders/{id}"), None).await;
    assert_eq!(status, 200);
    assert_eq!(read["data"], created["data"]);
    let (_, list) = call(&second, "GET", "/api/v1/orders", None).await;
    assert_eq!(
        list["meta"]["total"], 5,
        "the four seeded orders and the new one, once each"
    );

    drop(second);
    for suffix in ["", "-wal", "-shm"] {
        let _ = std::fs::remove_file(format!("{}{suffix}", file.display()));
    }
}

fn rand_suffix() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos())
}
