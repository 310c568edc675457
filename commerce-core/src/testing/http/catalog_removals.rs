//! `GET /products/removed`: the products stopped since an instant, for a sync loop.

use chrono::Duration;
use serde_json::{Value, json};

use crate::model::*;
use crate::time::cairo_timestamp;

use super::fixtures::*;
use super::harness::*;

fn removed_path(since: chrono::DateTime<chrono::Utc>, query: &str) -> String {
    format!(
        "/api/v1/products/removed?since={}{query}",
        urlencode(&cairo_timestamp(since))
    )
}

fn ids(list: &Value) -> Vec<i64> {
    list["data"]
        .as_array()
        .expect("data")
        .iter()
        .filter_map(|item| item["id"].as_i64())
        .collect()
}

/// Lists the products stopped at or after `since`, newest first, paged with `meta`, and bills
/// no pull; a product sold again drops out and is listed by `GET /products?updated_since=`;
/// `since` is required and checked; `removed` is not taken for a product id.
pub async fn removed_products_are_listed_for_sync(h: &Harness) {
    let start = h.clock.now_utc();
    let op = h.engine.operator();
    let stopped = h.fixture.stopped_product.get();
    let featured = h.fixture.featured_product;
    let listed = h.get(A, "/api/v1/products?per_page=3").await.json();
    let other = ids(&listed)
        .into_iter()
        .find(|id| *id != featured.get())
        .map(ProductId::new)
        .expect("another product");

    // The sandbox's stopped product, stopped when it was seeded.
    let r = h
        .get(CATALOG_ONLY, &removed_path(start - Duration::days(1), ""))
        .await;
    r.assert_ok("removals");
    assert_eq!(
        r.json()["data"],
        json!([{"id": stopped, "removed_at": cairo_timestamp(start)}])
    );
    assert_eq!(r.json()["meta"]["total"], 1);

    h.clock.advance(Duration::hours(1));
    let first_at = h.clock.now_utc();
    op.set_product_active(featured, false).await.expect("stop");
    h.clock.advance(Duration::hours(1));
    let second_at = h.clock.now_utc();
    op.set_product_active(other, false).await.expect("stop");
    // Stopped again: keeps its time.
    h.clock.advance(Duration::minutes(1));
    op.set_product_active(other, false).await.expect("stop");

    let all = h.get(A, &removed_path(start, "")).await.json();
    assert_eq!(ids(&all), [other.get(), featured.get(), stopped]);
    assert_eq!(all["data"][0]["removed_at"], cairo_timestamp(second_at));
    assert_eq!(all["data"][1]["removed_at"], cairo_timestamp(first_at));
    let page = h
        .get(A, &removed_path(start, "&per_page=2&page=2"))
        .await
        .json();
    assert_eq!(ids(&page), [stopped]);
    assert_eq!(
        page["meta"],
        json!({"page": 2, "per_page": 2, "total": 3, "last_page": 2})
    );
    let since_first = h.get(A, &removed_path(first_at, "")).await.json();
    assert_eq!(
        ids(&since_first),
        [other.get(), featured.get()],
        "since is inclusive"
    );
    // The offset form of `since` does not matter.
    let utc = format!(
        "/api/v1/products/removed?since={}",
        urlencode(&second_at.to_rfc3339())
    );
    assert_eq!(ids(&h.get(A, &utc).await.json()), [other.get()]);

    // Sold again: no longer removed, and changed for `updated_since`.
    h.clock.advance(Duration::hours(1));
    let back_at = h.clock.now_utc();
    op.set_product_active(featured, true)
        .await
        .expect("sell again");
    assert_eq!(
        ids(&h.get(A, &removed_path(start, "")).await.json()),
        [other.get(), stopped]
    );
    let synced = h
        .get(
            A,
            &format!(
                "/api/v1/products?updated_since={}",
                urlencode(&cairo_timestamp(back_at))
            ),
        )
        .await
        .json();
    assert_eq!(ids(&synced), [featured.get()]);
    h.get(A, &format!("/api/v1/products/{featured}"))
        .await
        .assert_ok("sold again");

    // Free: no pull is billed.
    let pulls = op
        .meter_this_month(h.fixture.marketer_a)
        .await
        .expect("meter")
        .pulled_products;
    h.get(A, &removed_path(start, "")).await.assert_ok("again");
    let after = op
        .meter_this_month(h.fixture.marketer_a)
        .await
        .expect("meter")
        .pulled_products;
    assert_eq!(after, pulls, "removals are not billed");

    // `since` is required and checked.
    for query in [
        "",
        "?since=",
        "?since=yesterday",
        "?since=2026-11-22",
        "?page=1",
    ] {
        let r = h.get(A, &format!("/api/v1/products/removed{query}")).await;
        r.assert_error(422, "validation_failed");
        assert_eq!(r.error_fields(), ["since"], "{query}");
    }
    let r = h.get(A, &removed_path(start, "&per_page=101")).await;
    assert_eq!(r.error_fields(), ["per_page"]);

    // `removed` is the endpoint, not an id; ids and other words behave as before.
    h.get(A, &format!("/api/v1/products/{other}"))
        .await
        .assert_error(404, "not_found");
    h.get(A, "/api/v1/products/removed/1")
        .await
        .assert_error(404, "not_found");
    h.get(A, "/api/v1/products/abc")
        .await
        .assert_error(404, "not_found");
    let r = h
        .request(
            http::Method::POST,
            Some(A),
            "/api/v1/products/removed",
            bytes::Bytes::new(),
            &[],
        )
        .await;
    r.assert_error(405, "method_not_allowed");
    assert_eq!(r.header("allow"), Some("GET, HEAD"));
    h.get("sk_demo_supplier", &removed_path(start, ""))
        .await
        .assert_error(403, "wrong_side");
}
