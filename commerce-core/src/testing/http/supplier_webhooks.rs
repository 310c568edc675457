//! Webhooks of both sides: a supplier registers endpoints (its demo key has
//! `webhooks:manage`), each side subscribes to its own side's types only, and the events of
//! quotes and withdrawals reach their account signed, each with the record as the API
//! renders it.

use chrono::TimeDelta;
use serde_json::{Value, json};

use super::harness::Harness;
use super::receiver::Receiver;
use super::supply::{SUPPLIER, free_variant, post_quote, quote_body};
use super::webhooks::{dispatcher, drain};
use crate::model::NewWithdrawal;
use crate::testing::feed::wait_for_changes;
use crate::webhooks::verify;

const MARKETER: &str = "sk_demo_marketer";

/// Registers `url` for `key` with `body`'s other fields; the answer's `data`.
async fn register(h: &Harness, key: &str, url: &str, mut body: Value) -> Value {
    body["url"] = json!(url);
    let created = h.post(key, "/api/v1/webhooks", &body).await;
    assert_eq!(
        created.status,
        201,
        "{}",
        String::from_utf8_lossy(&created.body)
    );
    created.json()["data"].clone()
}

fn listed(webhook: &Value) -> Vec<&str> {
    webhook["events"]
        .as_array()
        .expect("events")
        .iter()
        .filter_map(Value::as_str)
        .collect()
}

/// Each side subscribes to its own types: a webhook registered without `events` lists its
/// side's types (a supplier's `quote.updated` and `withdrawal.updated`; a marketer's orders,
/// `catalog.changed` and withdrawals), and `events` naming the other side's type, at registration or in a
/// change, is a 422 on `events` that registers or changes nothing.
pub async fn each_side_subscribes_to_its_own_event_types(h: &Harness) {
    let receiver = Receiver::start().await;
    let supplier = register(h, SUPPLIER, &receiver.url, json!({})).await;
    assert_eq!(listed(&supplier), ["quote.updated", "withdrawal.updated"]);
    let marketer = register(h, MARKETER, &receiver.url, json!({})).await;
    assert_eq!(
        listed(&marketer),
        [
            "order.created",
            "order.status_changed",
            "catalog.changed",
            "withdrawal.updated"
        ]
    );
    let chosen = register(
        h,
        SUPPLIER,
        &receiver.url,
        json!({"events": ["withdrawal.updated"]}),
    )
    .await;
    assert_eq!(listed(&chosen), ["withdrawal.updated"]);
    for (key, events) in [
        (SUPPLIER, json!(["order.created"])),
        (SUPPLIER, json!(["catalog.changed"])),
        (SUPPLIER, json!(["quote.updated", "order.status_changed"])),
        (MARKETER, json!(["quote.updated"])),
        (SUPPLIER, json!(["ping"])),
    ] {
        let body = json!({"url": receiver.url, "events": events});
        let refused = h.post(key, "/api/v1/webhooks", &body).await;
        refused.assert_error(422, "validation_failed");
        assert!(
            refused.json()["error"]["fields"]["events"].is_array(),
            "{key} {events}: {}",
            refused.json()
        );
        let path = format!("/api/v1/webhooks/{}", supplier["id"]);
        if key == SUPPLIER {
            h.request(
                http::Method::PATCH,
                Some(key),
                &path,
                json!({"events": events}).to_string(),
                &[],
            )
            .await
            .assert_error(422, "validation_failed");
        }
    }
    let all = h.get(SUPPLIER, "/api/v1/webhooks").await;
    assert_eq!(all.json()["meta"]["total"], 2, "nothing more registered");
    let shown = h
        .get(SUPPLIER, &format!("/api/v1/webhooks/{}", supplier["id"]))
        .await;
    assert_eq!(
        listed(&shown.json()["data"]),
        ["quote.updated", "withdrawal.updated"],
        "nothing changed"
    );
    // One side never reads the other's endpoints.
    h.get(MARKETER, &format!("/api/v1/webhooks/{}", supplier["id"]))
        .await
        .assert_error(404, "not_found");
}

/// The demo supplier registers a webhook, quotes, has the quote accepted in test mode and
/// receives `quote.updated`, signed, with the quote exactly as `GET /quotes/{id}` renders it
/// and `pending` as the status it left; a decided withdrawal reaches its account as
/// `withdrawal.updated`. The marketer's endpoint receives neither.
pub async fn a_supplier_receives_its_quote_and_withdrawal_events(h: &Harness) {
    let receiver = Receiver::start().await;
    let theirs = Receiver::start().await;
    let endpoint = register(h, SUPPLIER, &receiver.url, json!({})).await;
    let secret = endpoint["secret"].as_str().expect("the secret").to_owned();
    register(h, MARKETER, &theirs.url, json!({})).await;
    let (variant, _, _) = free_variant(h).await;
    let made = post_quote(h, &quote_body(variant, "12.50", 4), None).await;
    assert_eq!(made.status, 201, "{}", String::from_utf8_lossy(&made.body));
    let id = made.json()["data"]["id"].as_i64().expect("quote id");
    h.clock.advance(chrono::Duration::minutes(1));
    h.post(
        SUPPLIER,
        &format!("/api/v1/sandbox/quotes/{id}/decision"),
        &json!({"decision": "accept", "note": "تمام"}),
    )
    .await
    .assert_ok("accepted in test mode");
    let shown = h.get(SUPPLIER, &format!("/api/v1/quotes/{id}")).await;
    assert_eq!(drain(&dispatcher(h)).await, 1);
    let got = receiver.received();
    assert_eq!(got.len(), 1);
    verify(
        &secret,
        &got[0].headers,
        &got[0].body,
        h.engine.now(),
        TimeDelta::minutes(5),
    )
    .expect("signed with the endpoint's secret");
    let event = got[0].json();
    assert_eq!(event["type"], "quote.updated");
    assert_eq!(event["data"]["quote"], shown.json()["data"]);
    assert_eq!(event["data"]["quote"]["status"]["key"], "accepted");
    assert_eq!(event["data"]["previous_status"]["key"], "pending");
    assert_eq!(event["created_at"], shown.json()["data"]["updated_at"]);

    // A withdrawal of the marketer, paid: to the marketer's endpoint only.
    let op = h.engine.operator();
    let requested = op
        .request_withdrawal(
            NewWithdrawal::builder()
                .account_id(h.fixture.marketer_a)
                .amount(h.engine.config().withdrawal_minimum)
                .wallet_number("01012345678".to_owned())
                .wallet_description("فودافون كاش".to_owned())
                .build(),
        )
        .await
        .expect("within marketer A's ready balance");
    let paid = op
        .complete_withdrawal(requested.id, "TR-9".into(), None)
        .await
        .expect("paid")
        .id;
    assert_eq!(drain(&dispatcher(h)).await, 1);
    let to_marketer = theirs.received();
    assert_eq!(to_marketer.len(), 1, "the marketer's withdrawal only");
    let event = to_marketer[0].json();
    assert_eq!(event["type"], "withdrawal.updated");
    assert_eq!(event["data"]["withdrawal"]["id"], paid.get());
    assert_eq!(event["data"]["withdrawal"]["status"]["key"], "completed");
    assert_eq!(event["data"]["withdrawal"]["transfer_reference"], "TR-9");
    assert_eq!(event["data"]["previous_status"]["key"], "pending");
    assert_eq!(receiver.received().len(), 1, "nothing more to the supplier");
    for body in [event.to_string(), got[0].json().to_string()] {
        assert!(!body.contains("customer"), "{body}");
    }
}

/// The feed after `cursor`: its entries.
async fn changes_after(h: &Harness, cursor: &str) -> Vec<Value> {
    let r = h
        .get(MARKETER, &format!("/api/v1/catalog/changes?after={cursor}"))
        .await;
    r.assert_ok("the feed");
    r.json()["data"].as_array().cloned().unwrap_or_default()
}

/// Waits until the feed shows every write made so far (at most 60 s): a marker change (a
/// piece of the plain variant received) is made, and the feed is read until it names the
/// marker's product after the cursor read before it. A store with a fence (PostgreSQL) shows
/// a change once every older transaction of the server has ended, other tests' included.
async fn feed_settled(h: &Harness) {
    let end = h
        .get(MARKETER, "/api/v1/catalog/changes?limit=1000")
        .await
        .json();
    let before = end["meta"]["next_cursor"]
        .as_str()
        .expect("a cursor")
        .to_owned();
    let marker = crate::model::NewStockAdjustment::builder()
        .variant_id(h.fixture.plain_variant)
        .delta(1)
        .reason(crate::model::StockReason::Received)
        .build();
    let op = h.engine.operator();
    op.adjust_stock(marker).await.expect("a marker change");
    let product = h
        .engine
        .store()
        .products_of_variants(&[h.fixture.plain_variant])
        .await
        .expect("the plain variant's product")[0]
        .id
        .get();
    wait_for_changes(&**h.engine.store(), Some(&before), &[product]).await;
    let shown = changes_after(h, &before).await;
    assert!(
        shown.iter().any(|c| c["product_id"] == product),
        "the marker: {shown:?}"
    );
}

/// `catalog.changed`, on the engine's clock: a marketer's endpoint registered without
/// `events` receives one naming the feed's head (reading after it finds nothing), none
/// while nothing changed, none within 10 seconds of the last even after an order changed
/// stock, then one whose cursor is past the order's change (the feed after the first names
/// the ordered product, `updated`). A supplier's endpoint never receives it.
pub async fn a_marketer_receives_catalog_changed_at_most_every_10_seconds(h: &Harness) {
    let receiver = Receiver::start().await;
    let supplier = Receiver::start().await;
    register(h, MARKETER, &receiver.url, json!({})).await;
    register(h, SUPPLIER, &supplier.url, json!({})).await;
    feed_settled(h).await;
    let op = h.engine.operator();
    assert_eq!(op.send_catalog_changed().await.unwrap(), 1, "never sent");
    assert_eq!(drain(&dispatcher(h)).await, 1);
    let first = receiver.received()[0].json();
    assert_eq!(first["type"], "catalog.changed");
    let c1 = first["data"]["cursor"]
        .as_str()
        .expect("a cursor")
        .to_owned();
    assert_eq!(first["data"], json!({"cursor": c1}));
    assert!(changes_after(h, &c1).await.is_empty(), "the head");
    assert_eq!(
        op.send_catalog_changed().await.unwrap(),
        0,
        "nothing changed"
    );

    let placed = h
        .post(MARKETER, "/api/v1/orders", &h.order_body(1, "10.00"))
        .await;
    assert_eq!(
        placed.status,
        201,
        "{}",
        String::from_utf8_lossy(&placed.body)
    );
    let product = placed.json()["data"]["lines"][0]["product_id"].clone();
    // A store with a fence (PostgreSQL) shows the change once every older transaction of
    // the server has ended: wait for it (at most 60 s).
    let product_id = product.as_i64().expect("a product id");
    wait_for_changes(&**h.engine.store(), Some(&c1), &[product_id]).await;
    let shown = changes_after(h, &c1).await;
    assert!(
        shown.iter().any(|c| c["product_id"] == product),
        "the order's change: {shown:?}"
    );
    assert_eq!(op.send_catalog_changed().await.unwrap(), 0, "within 10 s");
    h.clock.advance(chrono::Duration::seconds(9));
    assert_eq!(op.send_catalog_changed().await.unwrap(), 0, "within 10 s");
    h.clock.advance(chrono::Duration::seconds(1));
    assert_eq!(op.send_catalog_changed().await.unwrap(), 1, "10 s passed");
    assert_eq!(
        drain(&dispatcher(h)).await,
        2,
        "catalog.changed and order.created"
    );
    let second = receiver
        .received()
        .iter()
        .map(|r| r.json())
        .filter(|e| e["type"] == "catalog.changed")
        .nth(1)
        .expect("a second catalog.changed");
    let c2 = second["data"]["cursor"]
        .as_str()
        .expect("a cursor")
        .to_owned();
    let named: Vec<Value> = changes_after(h, &c1).await;
    assert!(
        named
            .iter()
            .any(|c| c["product_id"] == product && c["kind"] == "updated"),
        "{named:?}"
    );
    assert!(changes_after(h, &c2).await.is_empty(), "the head again");
    h.clock.advance(chrono::Duration::seconds(60));
    assert_eq!(
        op.send_catalog_changed().await.unwrap(),
        0,
        "nothing changed"
    );
    assert!(
        supplier.received().is_empty(),
        "a supplier never receives it"
    );
}
