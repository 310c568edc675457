//! The catalogue after it is made: what a marketer sees of the supply side (nothing).

use chrono::Duration;
use serde_json::{Value, json};

use crate::model::*;
use crate::operator::{Conflict, OperatorError};

use super::fixtures::*;
use super::harness::*;

/// Fails when `r`'s body names the supply side anywhere.
fn assert_no_supply_side(r: &TestResponse, what: &str) {
    assert!(r.status.is_success(), "{what}: {}", r.status);
    let body = String::from_utf8_lossy(&r.body);
    for key in ["supplier", "supply_price"] {
        assert!(!body.contains(key), "{what} shows `{key}`: {body}");
    }
}

/// A marketer never sees a product's supplier or a variant's supply price: not on the
/// products (the sandbox's featured product is the demo supplier's), not on the order lines
/// that keep them.
pub async fn marketer_answers_never_show_the_supply_side(h: &Harness) {
    let featured = h.fixture.featured_product;
    let product = h.get(A, &format!("/api/v1/products/{featured}")).await;
    assert_no_supply_side(&product, "the featured product");
    assert_no_supply_side(&h.get(A, "/api/v1/products?per_page=100").await, "products");
    let mut body = h.order_body(1, "10");
    body["lines"] =
        json!([{"variant_id": h.fixture.featured_variants[0], "quantity": 2, "profit": "15"}]);
    let created = h.post(A, "/api/v1/orders", &body).await;
    assert_eq!(created.status, 201, "{:?}", created.json());
    assert_no_supply_side(&created, "the created order");
    let id = created.json()["data"]["id"].as_i64().expect("an id");
    let order = h.get(A, &format!("/api/v1/orders/{id}")).await;
    assert_no_supply_side(&order, "the order");
    assert_no_supply_side(&h.get(A, "/api/v1/orders").await, "orders");
    // The order keeps the snapshot all the same.
    let stored = h
        .engine
        .operator()
        .order(OrderId::new(id))
        .await
        .expect("the order");
    assert!(stored.lines[0].supplier_id.is_some());
    assert!(stored.lines[0].supply_price > rust_decimal::Decimal::ZERO);
}

/// The products `GET /products?updated_since=` returns from an hour on (the clock moved
/// there first), by id, with their JSON.
async fn sync_an_hour_on(h: &Harness, edit: impl AsyncFnOnce()) -> Vec<Value> {
    h.clock.advance(Duration::hours(1));
    let since = crate::time::cairo_timestamp(h.clock.now_utc());
    edit().await;
    let path = format!(
        "/api/v1/products?per_page=100&updated_since={}",
        urlencode(&since)
    );
    let r = h.get(A, &path).await;
    assert_eq!(r.status, 200);
    r.json()["data"].as_array().expect("data").clone()
}

/// Every edit of the operator reaches the marketers' sync: a category renamed (its products,
/// with the new name), a warranty's terms (its product), a product's title; a refused edit
/// (a supplier that is a marketer, a bad URL, a slug taken) changes nothing.
pub async fn catalogue_edits_reach_the_sync(h: &Harness) {
    let op = h.engine.operator();
    let child = h.fixture.child_category;
    let renamed = sync_an_hour_on(h, async || {
        let patch = CategoryPatch::default().set_name("سماعات وشواحن");
        op.update_category(child, patch).await.expect("rename");
    })
    .await;
    let path = format!("/api/v1/products?per_page=100&category_id={child}");
    let in_child = h.get(A, &path).await.json()["meta"]["total"].clone();
    assert_eq!(json!(renamed.len()), in_child);
    assert!(renamed.len() >= 2);
    for p in &renamed {
        assert_eq!(p["category"], json!({"id": child, "name": "سماعات وشواحن"}));
    }

    let featured = h.fixture.featured_product;
    let warranty = h.fixture.featured_warranties[0];
    let terms = sync_an_hour_on(h, async || {
        let patch = WarrantyPatch::default().set_terms("استبدال خلال 30 يوم");
        op.update_warranty(warranty, patch).await.expect("terms");
    })
    .await;
    assert_eq!(terms.len(), 1);
    assert_eq!(terms[0]["id"], featured.get());
    let shown = terms[0]["warranties"].as_array().expect("warranties");
    assert!(shown.iter().any(|w| w["terms"] == "استبدال خلال 30 يوم"));

    let titled = sync_an_hour_on(h, async || {
        let patch = ProductPatch::default().set_title("  سماعة جديدة  ");
        op.update_product(featured, patch).await.expect("title");
    })
    .await;
    assert_eq!(titled.len(), 1);
    assert_eq!(titled[0]["title"], "سماعة جديدة");

    let refused = sync_an_hour_on(h, async || {
        let marketer = ProductPatch::default().set_supplier(Some(h.fixture.marketer_a));
        let bad_url = ProductPatch::default().set_url("ftp://files.example.com/x");
        let bidi = ProductPatch::default().set_title("a\u{202E}b");
        for (patch, field) in [(marketer, "supplier_id"), (bad_url, "url"), (bidi, "title")] {
            match op.update_product(featured, patch).await {
                Err(OperatorError::Invalid(problems)) => assert_eq!(problems[0].field, field),
                other => panic!("{field}: {other:?}"),
            }
        }
        let taken = CategoryPatch::default().set_slug("electronics");
        assert!(matches!(
            op.update_category(child, taken).await,
            Err(OperatorError::Conflict(Conflict::Duplicate(_)))
        ));
    })
    .await;
    assert!(refused.is_empty(), "{refused:?}");
}

/// Pieces returned on a move come back to `available` (as marketers read it), once, as a
/// `restock` adjustment naming the order; stock set by a stale count is refused.
pub async fn returned_pieces_come_back_to_available(h: &Harness) {
    let op = h.engine.operator();
    let variant = h.fixture.plain_variant;
    let before = h.available(variant).await;
    let created = h.post(A, "/api/v1/orders", &h.order_body(3, "10")).await;
    assert_eq!(created.status, 201);
    let order = OrderId::new(created.json()["data"]["id"].as_i64().expect("an id"));
    assert_eq!(h.available(variant).await, before - 3);
    for to in [OrderStatus::Confirmed, OrderStatus::Shipped] {
        op.move_order(order, to, None).await.expect("move");
    }
    let line = op.order(order).await.expect("order").lines[0].id;
    let returned = vec![(line, LineOutcome::partly_delivered(0, 3).into())];
    op.move_order_with_outcomes(order, OrderStatus::Returned, None, returned.clone())
        .await
        .expect("returned");
    assert_eq!(h.available(variant).await, before);
    op.set_line_outcomes(order, returned).await.expect("again");
    assert_eq!(h.available(variant).await, before, "restocked once");
    let history = op
        .stock_adjustments(variant, PageRequest::default())
        .await
        .expect("history");
    let newest = &history.items[0];
    assert_eq!(
        (newest.delta, newest.reason, newest.order_id),
        (3, StockReason::Restock, Some(order))
    );

    let stale = op.set_stock(variant, before - 3, 50, Some("جرد")).await;
    assert!(
        matches!(
            stale,
            Err(OperatorError::Conflict(Conflict::StockChanged { .. }))
        ),
        "{stale:?}"
    );
    let short = op
        .adjust_stock(
            NewStockAdjustment::builder()
                .variant_id(variant)
                .delta(-(before + 1))
                .reason(StockReason::Damaged)
                .build(),
        )
        .await;
    match short {
        Err(OperatorError::Invalid(problems)) => assert_eq!(
            (problems[0].field.as_str(), problems[0].problem),
            (
                "delta",
                Problem::StockShortfall {
                    available: before,
                    shortfall: 1
                }
            )
        ),
        other => panic!("{other:?}"),
    }
    // A cause that is not one: no such quote.
    let unknown_quote = op
        .adjust_stock(
            NewStockAdjustment::builder()
                .variant_id(variant)
                .delta(1)
                .reason(StockReason::Received)
                .quote_id(QuoteId::new(999_999))
                .build(),
        )
        .await;
    match unknown_quote {
        Err(OperatorError::Invalid(problems)) => assert_eq!(
            (problems[0].field.as_str(), problems[0].problem),
            ("quote_id", Problem::UnknownValue)
        ),
        other => panic!("{other:?}"),
    }
    assert_eq!(h.available(variant).await, before, "nothing written");
    // A quote that exists, of another variant: not this variant's cause either.
    let (quoted, _, _) = super::supply::free_variant(h).await;
    let quote =
        super::supply::post_quote(h, &super::supply::quote_body(quoted, "50.00", 3), None).await;
    assert_eq!(
        quote.status,
        201,
        "{}",
        String::from_utf8_lossy(&quote.body)
    );
    let quote_id = QuoteId::new(quote.json()["data"]["id"].as_i64().expect("quote id"));
    assert_ne!(VariantId::new(quoted), variant);
    let elsewhere = op
        .adjust_stock(
            NewStockAdjustment::builder()
                .variant_id(variant)
                .delta(1)
                .reason(StockReason::Received)
                .quote_id(quote_id)
                .build(),
        )
        .await;
    assert!(
        matches!(&elsewhere, Err(OperatorError::Invalid(p)) if p[0].field == "quote_id"),
        "{elsewhere:?}"
    );
    let counted = op.set_stock(variant, before, 50, Some("جرد")).await;
    assert_eq!(counted.expect("count").available_after, 50);
    assert_eq!(h.available(variant).await, 50);
}

/// Product creation has the checks of an edit, field for field (one check serves both): each
/// value an edit refuses, creation refuses on the same field and creates nothing; what an
/// edit cleans (a title's spaces, a blank link), creation cleans alike.
pub async fn product_creation_refuses_what_an_edit_refuses(h: &Harness) {
    let op = h.engine.operator();
    let featured = h.fixture.featured_product;
    let base = || {
        NewProduct::builder()
            .category_id(h.fixture.child_category)
            .title("شاحن سريع".to_owned())
            .slug("fast-charger".to_owned())
            .url("https://shop.example.com/fast-charger".to_owned())
    };
    let refused: Vec<(&str, ProductPatch, NewProduct)> = vec![
        (
            "supplier_id",
            ProductPatch::default().set_supplier(Some(h.fixture.marketer_a)),
            base().supplier_id(h.fixture.marketer_a).build(),
        ),
        (
            "url",
            ProductPatch::default().set_url("ftp://files.example.com/x"),
            NewProduct::builder()
                .category_id(h.fixture.child_category)
                .title("t".to_owned())
                .slug("s".to_owned())
                .url("ftp://files.example.com/x".to_owned())
                .build(),
        ),
        (
            "title",
            ProductPatch::default().set_title("a\u{202E}b"),
            NewProduct::builder()
                .category_id(h.fixture.child_category)
                .title("a\u{202E}b".to_owned())
                .slug("s".to_owned())
                .url("https://a.example".to_owned())
                .build(),
        ),
        (
            "slug",
            ProductPatch::default().set_slug("   "),
            NewProduct::builder()
                .category_id(h.fixture.child_category)
                .title("t".to_owned())
                .slug("   ".to_owned())
                .url("https://a.example".to_owned())
                .build(),
        ),
        (
            "images.1",
            ProductPatch::default().set_images(["https://cdn.example.com/1.jpg", "javascript:x"]),
            base()
                .images(vec![
                    "https://cdn.example.com/1.jpg".to_owned(),
                    "javascript:x".to_owned(),
                ])
                .build(),
        ),
        (
            "video_url",
            ProductPatch::default().set_video_url(Some("not a link".into())),
            base().video_url("not a link".to_owned()).build(),
        ),
        (
            "description",
            ProductPatch::default().set_description("وصف\u{0}"),
            base().description("وصف\u{0}".to_owned()).build(),
        ),
    ];
    let total =
        async || h.get(A, "/api/v1/products?per_page=1").await.json()["meta"]["total"].clone();
    let before = total().await;
    for (field, patch, new) in refused {
        for (what, answer) in [
            ("edit", op.update_product(featured, patch).await),
            ("creation", op.create_product(new).await),
        ] {
            match answer {
                Err(OperatorError::Invalid(problems)) => {
                    assert_eq!(problems[0].field, field, "{what}");
                }
                other => panic!("{what} of {field}: {other:?}"),
            }
        }
    }
    assert_eq!(total().await, before, "a refused creation created nothing");
    let spaced = NewProduct::builder()
        .category_id(h.fixture.child_category)
        .title("  شاحن سريع  ".to_owned())
        .slug("fast-charger".to_owned())
        .url("https://shop.example.com/fast-charger".to_owned())
        .video_url("  ".to_owned())
        .build();
    let made = op.create_product(spaced).await.expect("a clean product");
    assert_eq!((made.title.as_str(), made.video_url), ("شاحن سريع", None));
}

/// Category and warranty creation have the checks of their edits, field for field (one check
/// serves both): each value an edit refuses, creation refuses on the same field and creates
/// nothing; what an edit cleans (a name's spaces, a blank icon), creation cleans alike.
pub async fn category_and_warranty_creation_refuse_what_an_edit_refuses(h: &Harness) {
    let op = h.engine.operator();
    let child = h.fixture.child_category;
    let categories: Vec<(&str, CategoryPatch, NewCategory)> = vec![
        (
            "name",
            CategoryPatch::default().set_name("   "),
            NewCategory::new("   ".to_owned(), "blank-name".to_owned(), None),
        ),
        (
            "name",
            CategoryPatch::default().set_name("a\u{202E}b"),
            NewCategory::new("a\u{202E}b".to_owned(), "bidi-name".to_owned(), None),
        ),
        (
            "slug",
            CategoryPatch::default().set_slug("x".repeat(crate::domain::fields::MAX_TEXT + 1)),
            NewCategory::new(
                "طويل".to_owned(),
                "x".repeat(crate::domain::fields::MAX_TEXT + 1),
                None,
            ),
        ),
        (
            "slug",
            CategoryPatch::default().set_slug("a\nb"),
            NewCategory::new("سطران".to_owned(), "a\nb".to_owned(), None),
        ),
    ];
    let count = async || {
        h.engine
            .store()
            .all_categories()
            .await
            .expect("categories")
            .len()
    };
    let before = count().await;
    for (field, patch, new) in categories {
        for (what, answer) in [
            ("edit", op.update_category(child, patch).await),
            ("creation", op.create_category(new).await),
        ] {
            match answer {
                Err(OperatorError::Invalid(problems)) => {
                    assert_eq!(problems[0].field, field, "category {what}");
                }
                other => panic!("category {what} of {field}: {other:?}"),
            }
        }
    }
    assert_eq!(count().await, before, "a refused creation created nothing");
    let made = op
        .create_category(NewCategory::new(
            "  كابلات  ".to_owned(),
            " cables ".to_owned(),
            None,
        ))
        .await
        .expect("a clean category");
    assert_eq!(
        (made.name.as_str(), made.slug.as_str()),
        ("كابلات", "cables")
    );

    let featured = h.fixture.featured_product;
    let warranty = h.fixture.featured_warranties[0];
    let base = || {
        NewWarranty::builder()
            .name("ضمان".to_owned())
            .duration_days(30)
    };
    let half = "0.005".parse().expect("decimal");
    let warranties: Vec<(&str, WarrantyPatch, NewWarranty)> = vec![
        (
            "name",
            WarrantyPatch::default().set_name(" "),
            NewWarranty::builder()
                .name(" ".to_owned())
                .duration_days(30)
                .build(),
        ),
        (
            "terms",
            WarrantyPatch {
                terms: Some("شروط\u{0}".into()),
                ..WarrantyPatch::default()
            },
            base().terms("شروط\u{0}".to_owned()).build(),
        ),
        (
            "icon_url",
            WarrantyPatch {
                icon_url: Some(Some("javascript:x".into())),
                ..WarrantyPatch::default()
            },
            base().icon_url("javascript:x".to_owned()).build(),
        ),
        (
            "admin_fee",
            WarrantyPatch {
                admin_fee: Some(half),
                ..WarrantyPatch::default()
            },
            base().admin_fee(half).build(),
        ),
        (
            "price_from",
            WarrantyPatch {
                price_from: Some("-1".parse().expect("decimal")),
                ..WarrantyPatch::default()
            },
            base().price_from("-1".parse().expect("decimal")).build(),
        ),
        (
            "percent",
            WarrantyPatch {
                percent: Some("100.01".parse().expect("decimal")),
                ..WarrantyPatch::default()
            },
            base().percent("100.01".parse().expect("decimal")).build(),
        ),
        (
            "duration_days",
            WarrantyPatch {
                duration_days: Some(0),
                ..WarrantyPatch::default()
            },
            NewWarranty::builder()
                .name("ضمان".to_owned())
                .duration_days(0)
                .build(),
        ),
    ];
    let offered = async || {
        let product = h.engine.store().product(featured).await.expect("read");
        product.expect("the featured product").warranties.len()
    };
    let before = offered().await;
    for (field, patch, new) in warranties {
        for (what, answer) in [
            ("edit", op.update_warranty(warranty, patch).await),
            ("creation", op.add_warranty(featured, new).await),
        ] {
            match answer {
                Err(OperatorError::Invalid(problems)) => {
                    assert_eq!(problems[0].field, field, "warranty {what}");
                }
                other => panic!("warranty {what} of {field}: {other:?}"),
            }
        }
    }
    assert_eq!(
        offered().await,
        before,
        "a refused creation created nothing"
    );
    let made = op
        .add_warranty(
            featured,
            NewWarranty::builder()
                .name("  ضمان شهر ".to_owned())
                .duration_days(30)
                .icon_url("  ".to_owned())
                .build(),
        )
        .await
        .expect("a clean warranty");
    assert_eq!((made.name.as_str(), made.icon_url), ("ضمان شهر", None));
}
