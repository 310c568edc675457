//! The catalogue: categories, products, filters and `updated_since` synchronisation.

use chrono::Duration;
use serde_json::{Value, json};

use super::fixtures::*;
use super::harness::*;

/// Categories are listed with `meta`.
pub async fn categories_are_listed_with_meta(h: &Harness) {
    let r = h.get(A, "/api/v1/categories").await;
    assert_eq!(r.status, 200);
    let body = r.json();
    let data = body["data"].as_array().expect("array");
    assert_eq!(data.len(), 3);
    assert_eq!(
        body["meta"],
        json!({"page": 1, "per_page": 25, "total": 3, "last_page": 1})
    );
    let child = data
        .iter()
        .find(|c| c["id"] == h.fixture.child_category.get())
        .expect("child listed");
    assert_eq!(child["parent_id"], h.fixture.parent_category.get());
    let empty = h.get(A, "/api/v1/categories?page=9").await.json();
    assert_eq!(empty["data"], json!([]));
    assert_eq!(empty["meta"]["last_page"], 1);
}

/// Products page at 25 by default, and stopped products are never listed.
pub async fn products_paginate_and_hide_stopped_products(h: &Harness) {
    let first = h.get(A, "/api/v1/products").await.json();
    assert_eq!(first["data"].as_array().map(Vec::len), Some(25));
    assert_eq!(
        first["meta"],
        json!({"page": 1, "per_page": 25, "total": 32, "last_page": 2})
    );
    let second = h.get(A, "/api/v1/products?page=2").await.json();
    assert_eq!(second["data"].as_array().map(Vec::len), Some(7));
    let all = h.get(A, "/api/v1/products?per_page=100").await.json();
    let ids: Vec<i64> = all["data"]
        .as_array()
        .expect("array")
        .iter()
        .filter_map(|p| p["id"].as_i64())
        .collect();
    assert!(!ids.contains(&h.fixture.stopped_product.get()));
    h.get(
        A,
        &format!("/api/v1/products/{}", h.fixture.stopped_product),
    )
    .await
    .assert_error(404, "not_found");
}

/// The product shape: variants with money strings and stock, warranties with numbers.
pub async fn product_detail_has_every_field(h: &Harness) {
    let r = h
        .get(
            A,
            &format!("/api/v1/products/{}", h.fixture.featured_product),
        )
        .await;
    assert_eq!(r.status, 200);
    let p = &r.json()["data"];
    for field in [
        "id",
        "title",
        "slug",
        "category",
        "description",
        "images",
        "files",
        "video_url",
        "marketing_files_url",
        "url",
        "variants",
        "warranties",
        "updated_at",
    ] {
        assert!(p.get(field).is_some(), "missing {field}");
    }
    assert_eq!(p["category"]["id"], h.fixture.child_category.get());
    let variants = p["variants"].as_array().expect("variants");
    assert_eq!(variants.len(), 3);
    assert_eq!(variants[0]["price"], "249.99");
    assert_eq!(variants[0]["stock_hint"], 100);
    assert_eq!(variants[2]["available"], 0);
    assert_eq!(variants[2]["in_stock"], false);
    assert_eq!(variants[2]["price"], "275.50");
    let warranty = &p["warranties"][0];
    assert_eq!(warranty["admin_fee"], json!(15.0));
    assert_eq!(warranty["percent"], json!(5.0));
    assert!(warranty["price_rule"].is_string());
    assert_eq!(warranty["duration_days"], 180);
    let stamp = p["updated_at"].as_str().expect("timestamp");
    assert!(stamp.ends_with("+02:00") && stamp.len() == 25, "{stamp}");
}

/// `category_id` includes subcategories; `q` searches titles; unknown category is a 422.
pub async fn products_filter_by_category_and_title(h: &Harness) {
    let parent = h
        .get(
            A,
            &format!(
                "/api/v1/products?per_page=100&category_id={}",
                h.fixture.parent_category
            ),
        )
        .await
        .json();
    assert_eq!(
        parent["meta"]["total"], 25,
        "10 in the child category + 15 in the parent"
    );
    let child = h
        .get(
            A,
            &format!(
                "/api/v1/products?per_page=100&category_id={}",
                h.fixture.child_category
            ),
        )
        .await
        .json();
    assert_eq!(child["meta"]["total"], 10);
    let search = h
        .get(A, "/api/v1/products?q=%D8%B3%D9%85%D8%A7%D8%B9%D8%A9")
        .await
        .json(); // سماعة
    assert_eq!(search["meta"]["total"], 3);
    let unknown = h.get(A, "/api/v1/products?category_id=999999").await;
    unknown.assert_error(422, "validation_failed");
    assert_eq!(unknown.error_fields(), vec!["category_id"]);
}

/// `updated_since` returns what changed at or after the instant, price changes included.
pub async fn products_sync_with_updated_since(h: &Harness) {
    let since =
        crate::time::cairo_timestamp(reprice_plain_variant_an_hour_later(h, "130.00").await);
    let changed = h
        .get(
            A,
            &format!("/api/v1/products?updated_since={}", urlencode(&since)),
        )
        .await
        .json();
    assert_eq!(changed["meta"]["total"], 1, "{changed}");
    assert_eq!(changed["data"][0]["variants"][0]["price"], "130.00");
    let later = (h.clock.now_utc() + Duration::seconds(1)).to_rfc3339();
    let none = h
        .get(
            A,
            &format!("/api/v1/products?updated_since={}", urlencode(&later)),
        )
        .await
        .json();
    assert_eq!(none["meta"]["total"], 0);
}

/// Any valid `updated_since` is served on every store: one before every record (even before
/// the range a store keeps in nanoseconds, 1677-2262) returns everything, one after returns
/// nothing; never a 5xx (docs/pagination.md).
pub async fn updated_since_far_past_and_future_are_served(h: &Harness) {
    let ids = |v: &Value| {
        v["data"]
            .as_array()
            .expect("data")
            .iter()
            .map(|item| item["id"].clone())
            .collect::<Vec<_>>()
    };
    for path in ["/api/v1/products", "/api/v1/orders"] {
        let all = h.get(A, &format!("{path}?per_page=100")).await;
        assert_eq!(all.status, 200);
        let all = all.json();
        assert!(
            all["meta"]["total"].as_u64().is_some_and(|n| n > 0),
            "{path}"
        );
        for since in [
            "1500-01-01T00:00:00Z",
            "1677-09-21T00:00:00Z",
            "0001-01-01T00:00:00+02:00",
            "1970-01-01T00:00:00Z",
        ] {
            let r = h
                .get(
                    A,
                    &format!("{path}?per_page=100&updated_since={}", urlencode(since)),
                )
                .await;
            r.assert_ok(&format!("{path} {since}"));
            let body = r.json();
            assert_eq!(body["meta"], all["meta"], "{path} {since}");
            assert_eq!(ids(&body), ids(&all), "{path} {since}");
        }
        for since in [
            "9999-12-31T23:59:59Z",
            "2262-04-12T00:00:00Z",
            "9999-12-31T23:59:59.999999999-05:00",
        ] {
            let r = h
                .get(A, &format!("{path}?updated_since={}", urlencode(since)))
                .await;
            r.assert_ok(&format!("{path} {since}"));
            let body = r.json();
            assert_eq!(body["meta"]["total"], 0, "{path} {since}");
            assert_eq!(body["data"], json!([]), "{path} {since}");
        }
    }
}

/// `updated_since` accepts `Z`, `+hh`, `+hhmm` and `+hh:mm` offsets, fractional seconds, and an
/// unencoded `+` (which arrives as a space): all name the same instant and give the same
/// answer; a date-time without an offset is a 422 naming the parameter.
pub async fn updated_since_accepts_every_offset_form(h: &Harness) {
    let since = reprice_plain_variant_an_hour_later(h, "131.00").await;
    let cairo = since.with_timezone(&chrono_tz::Africa::Cairo);
    let local = cairo.format("%Y-%m-%dT%H:%M:%S").to_string();
    let offset = cairo.format("%z").to_string(); // +0200
    let forms = [
        urlencode(&since.format("%Y-%m-%dT%H:%M:%SZ").to_string()),
        urlencode(&format!("{local}{}", &offset[..3])),
        urlencode(&format!("{local}{offset}")),
        urlencode(&format!("{local}.000{}:{}", &offset[..3], &offset[3..])),
        format!("{local}{}:{}", &offset[..3], &offset[3..]),
    ];
    for form in &forms {
        for path in ["/api/v1/products", "/api/v1/orders"] {
            let r = h.get(A, &format!("{path}?updated_since={form}")).await;
            r.assert_ok(&format!("{path} {form}"));
        }
        let r = h
            .get(A, &format!("/api/v1/products?updated_since={form}"))
            .await;
        assert_eq!(r.json()["meta"]["total"], 1, "{form}");
    }
    let r = h
        .get(
            A,
            &format!("/api/v1/products?updated_since={}", urlencode(&local)),
        )
        .await;
    r.assert_error(422, "validation_failed");
    assert_eq!(r.error_fields(), vec!["updated_since".to_owned()]);
}
