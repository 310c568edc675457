//! `GET /catalog/changes`: the catalogue change feed, read from a cursor.

use chrono::Duration;
use serde_json::{Value, json};

use crate::domain::keys::KeySpec;
use crate::model::*;
use crate::render::messages;

use super::fixtures::*;
use super::harness::*;
use crate::testing::feed::wait_for_changes;

fn changes_path(after: Option<&str>, limit: Option<u32>) -> String {
    let mut query = Vec::new();
    if let Some(after) = after {
        query.push(format!("after={after}"));
    }
    if let Some(limit) = limit {
        query.push(format!("limit={limit}"));
    }
    format!("/api/v1/catalog/changes?{}", query.join("&"))
}

/// Reads the feed after `after` to its end, `limit` at a time: the changes, and the last
/// `next_cursor`.
async fn read_to_end(h: &Harness, after: Option<String>, limit: u32) -> (Vec<Value>, String) {
    let mut after = after;
    let mut read = Vec::new();
    loop {
        let r = h.get(A, &changes_path(after.as_deref(), Some(limit))).await;
        r.assert_ok("changes");
        let body = r.json();
        let data = body["data"].as_array().expect("data").clone();
        assert!(data.len() <= limit as usize, "at most the limit");
        let next = body["meta"]["next_cursor"]
            .as_str()
            .expect("next_cursor")
            .to_owned();
        if let Some(last) = data.last() {
            assert_eq!(last["cursor"], json!(next), "the last change's cursor");
        } else if let Some(given) = after.as_deref() {
            // The same place, handed out at the same instant (the harness's clock stands).
            assert_eq!(given, next, "an empty page: as given");
        }
        read.extend(data);
        after = Some(next.clone());
        if body["meta"]["has_more"] == json!(false) {
            return (read, next);
        }
    }
}

/// [`read_to_end`] once every one of `wanted` is in the feed
/// ([`wait_for_changes`](crate::testing::feed::wait_for_changes)).
async fn read_until(
    h: &Harness,
    after: Option<String>,
    limit: u32,
    wanted: &[i64],
) -> (Vec<Value>, String) {
    wait_for_changes(&**h.engine.store(), after.as_deref(), wanted).await;
    let (read, cursor) = read_to_end(h, after, limit).await;
    assert!(
        wanted.iter().all(|w| product_ids(&read).contains(w)),
        "{wanted:?} not read: {read:?}"
    );
    (read, cursor)
}

fn product_ids(changes: &[Value]) -> Vec<i64> {
    changes
        .iter()
        .filter_map(|c| c["product_id"].as_i64())
        .collect()
}

/// Read from its start in pages (`limit`, `has_more`, `next_cursor` the last change's
/// `cursor`), the feed names every product once; an empty page hands its `after` back; an
/// order names its product `updated`, a stop `removed`, each once; a cursor more than 30 days
/// old is a 410 `cursor_expired`, a malformed one a 422 on `after`, a bad `limit` a 422 on
/// `limit`; `catalog:read` is needed, a supplier's key is the wrong side; no pull is billed.
pub async fn catalog_changes_follow_the_catalogue_from_a_cursor(h: &Harness) {
    let op = h.engine.operator();
    let pulls = || async {
        op.meter_this_month(h.fixture.marketer_a)
            .await
            .expect("meter")
            .pulled_products
    };
    let pulled = pulls().await;
    let store = h.engine.store();
    let listed = store
        .products(
            &ProductFilter::default(),
            PageRequest::new(1, 100).expect("page"),
        )
        .await
        .expect("products");
    let mut every: Vec<i64> = listed.items.iter().map(|p| p.id.get()).collect();
    every.push(h.fixture.stopped_product.get());
    let (all, cursor) = read_until(h, None, 2, &every).await;
    let mut ids = product_ids(&all);
    let listed = ids.len();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), listed, "each product once");
    assert!(ids.contains(&h.fixture.featured_product.get()));
    assert!(ids.contains(&h.fixture.stopped_product.get()));
    for c in &all {
        let kind = c["kind"].as_str().expect("kind");
        assert!(ChangeKind::parse(kind).is_some(), "{c}");
        assert!(c["at"].as_str().is_some_and(|at| at.contains('T')), "{c}");
    }
    let stopped = all
        .iter()
        .find(|c| c["product_id"] == json!(h.fixture.stopped_product.get()))
        .expect("the stopped product");
    assert_eq!(stopped["kind"], "removed");

    // Nothing new: an empty page hands the cursor back.
    let quiet = h.get(A, &changes_path(Some(&cursor), None)).await.json();
    assert_eq!(
        quiet,
        json!({"data": [], "meta": {"next_cursor": cursor, "has_more": false}})
    );

    // An order names its product, `updated`, once.
    let owner = h
        .engine
        .store()
        .products_of_variants(&[h.fixture.plain_variant])
        .await
        .expect("owner")[0]
        .clone();
    let placed = h.post(A, "/api/v1/orders", &h.order_body(2, "10")).await;
    assert_eq!(placed.status, 201, "order");
    let (after_order, cursor) = read_until(h, Some(cursor), 100, &[owner.id.get()]).await;
    assert_eq!(product_ids(&after_order), [owner.id.get()]);
    assert_eq!(after_order[0]["kind"], "updated");
    let now = h
        .engine
        .store()
        .product(owner.id)
        .await
        .expect("read")
        .expect("found");
    assert_eq!(
        after_order[0]["at"],
        json!(crate::time::cairo_timestamp(now.updated_at))
    );

    // A stop names it `removed`; a later change moves it to the end again.
    op.set_product_active(h.fixture.featured_product, false)
        .await
        .expect("stop");
    let featured = [h.fixture.featured_product.get()];
    let (stopped, cursor) = read_until(h, Some(cursor), 100, &featured).await;
    assert_eq!(product_ids(&stopped), [h.fixture.featured_product.get()]);
    assert_eq!(stopped[0]["kind"], "removed");
    op.set_product_active(h.fixture.featured_product, true)
        .await
        .expect("sell again");
    let (back, cursor) = read_until(h, Some(cursor), 100, &featured).await;
    assert_eq!(product_ids(&back), [h.fixture.featured_product.get()]);
    assert_eq!(back[0]["kind"], "updated");
    assert_eq!(pulls().await, pulled, "the feed bills no pull");

    // Bad input: 422 on the parameter.
    for (query, field) in [
        ("after=", "after"),
        ("after=nope", "after"),
        ("after=YWJj", "after"),       // "abc"
        ("after=MS4y", "after"),       // "1.2"
        ("after=MS4yLjMuNA", "after"), // "1.2.3.4"
        ("after=LTEuMi4z", "after"),   // "-1.2.3"
        ("after=MS4yLjM%3D", "after"), // padded
        ("limit=0", "limit"),
        ("limit=1001", "limit"),
        ("limit=ten", "limit"),
        ("limit=", "limit"),
    ] {
        let r = h.get(A, &format!("/api/v1/catalog/changes?{query}")).await;
        r.assert_error(422, "validation_failed");
        assert_eq!(r.error_fields(), [field], "{query}");
    }
    let r = h.get(A, "/api/v1/catalog/changes?after=YWJj").await;
    assert_eq!(
        r.json()["error"]["fields"]["after"],
        json!([messages::INVALID_CURSOR])
    );
    // "1.2.3": well formed, handed out in 1970.
    h.get(A, "/api/v1/catalog/changes?after=MS4yLjM")
        .await
        .assert_error(410, "cursor_expired");
    let most = h.get(A, &changes_path(None, Some(1000))).await;
    most.assert_ok("limit 1000");

    // Who may read it.
    let orders_only = op
        .create_key(
            h.fixture.marketer_a,
            KeySpec::new(
                "orders only".to_owned(),
                vec![Ability::OrdersRead],
                None,
                None,
            ),
        )
        .await
        .expect("key");
    h.get(&orders_only.plaintext, &changes_path(None, None))
        .await
        .assert_error(403, "forbidden_ability");
    h.get(CATALOG_ONLY, &changes_path(Some(&cursor), None))
        .await
        .assert_ok("catalog:read alone");
    h.get("sk_demo_supplier", &changes_path(None, None))
        .await
        .assert_error(403, "wrong_side");

    // A cursor stays good 30 days; an older one is gone. A read that finds nothing new hands
    // the position back as a cursor handed out now, so a follower of a quiet catalogue that
    // reads at least every 30 days never meets the 410.
    h.clock.advance(Duration::days(30));
    let quiet = h.get(A, &changes_path(Some(&cursor), None)).await;
    quiet.assert_ok("30 days");
    assert_eq!(quiet.json()["data"], json!([]), "nothing new");
    let renewed = quiet.json()["meta"]["next_cursor"]
        .as_str()
        .expect("a cursor")
        .to_owned();
    assert_ne!(renewed, cursor, "handed out again, now");
    h.clock.advance(Duration::days(1));
    let gone = h.get(A, &changes_path(Some(&cursor), None)).await;
    gone.assert_error(410, "cursor_expired");
    assert_eq!(gone.json()["error"]["message"], messages::CURSOR_EXPIRED);
    let kept = h.get(A, &changes_path(Some(&renewed), None)).await;
    kept.assert_ok("the renewed cursor, a day later");
    assert_eq!(kept.json()["data"], json!([]), "still nothing new");
    // Starting again from the feed's start gives cursors that work.
    let (again, fresh) = read_to_end(h, None, 1000).await;
    assert_eq!(again.len(), listed, "every product, each once");
    h.get(A, &changes_path(Some(&fresh), None))
        .await
        .assert_ok("a fresh cursor");
}
