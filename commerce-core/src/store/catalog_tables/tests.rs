use chrono::{DateTime, TimeZone, Utc};
use rust_decimal::Decimal;

use super::CatalogTables;
use crate::domain::pieces::StockMove;
use crate::model::*;
use crate::store::{StockError, StoreError, Unique};

/// Asserts that `result` is the refusal `expected` (its variant and text).
fn assert_refused<T: std::fmt::Debug>(result: Result<T, StoreError>, expected: StoreError) {
    assert_eq!(
        format!("{:?}", result.expect_err("a refusal")),
        format!("{expected:?}")
    );
}

fn at(seconds: i64) -> DateTime<Utc> {
    Utc.timestamp_opt(1_750_000_000 + seconds, 0).unwrap()
}

/// A catalogue of one category (1) and `products` products (slugs `p1`, `p2`, ...), each
/// with one variant of 5 pieces (variant `i` of product `i`).
pub(super) fn catalogue(products: i64) -> CatalogTables {
    let mut c = CatalogTables::default();
    c.insert_category(NewCategory::new("c".to_owned(), "c".to_owned(), None))
        .unwrap();
    for i in 1..=products {
        let new = NewProduct::builder()
            .category_id(CategoryId::new(1))
            .title("p".to_owned())
            .slug(format!("p{i}"))
            .url("u".to_owned())
            .build();
        c.insert_product(new, at(0)).unwrap();
        let variant = NewVariant::builder()
            .label("v".to_owned())
            .price(Decimal::ONE)
            .available(5)
            .build();
        c.insert_variant(ProductId::new(i), variant, at(0)).unwrap();
    }
    c
}

#[test]
fn ids_count_per_table_and_refusals_come_in_the_sql_stores_order() {
    let mut c = catalogue(2);
    let sub = c.insert_category(NewCategory::new(
        "s".to_owned(),
        "s".to_owned(),
        Some(CategoryId::new(1)),
    ));
    assert_eq!(sub.unwrap().id, CategoryId::new(2));
    let orphan = c.insert_category(NewCategory::new(
        "o".to_owned(),
        "o".to_owned(),
        Some(CategoryId::new(9)),
    ));
    assert_refused(orphan, StoreError::Invalid("no parent category 9".into()));
    assert_refused(
        c.insert_category(NewCategory::new("again".to_owned(), "c".to_owned(), None)),
        StoreError::Duplicate(Unique::CategorySlug),
    );
    let warranty = c.insert_warranty(
        ProductId::new(2),
        NewWarranty::builder()
            .name("w".to_owned())
            .duration_days(30)
            .build(),
        at(1),
    );
    assert_eq!(warranty.unwrap().id, WarrantyId::new(1));
    // The initial stock of each variant opened its history: adjustments 1 and 2.
    let history = c.stock_adjustments(VariantId::new(2), PageRequest::default());
    assert_eq!(history.items[0].id, StockAdjustmentId::new(2));

    // A missing category first, then a missing product, then a taken slug.
    let nowhere = ProductPatch::default()
        .set_category(CategoryId::new(9))
        .set_slug("p1");
    let missing = ProductId::new(9);
    assert_refused(
        c.update_product(missing, &nowhere, at(2)),
        StoreError::Invalid("no category 9".into()),
    );
    let taken = ProductPatch::default().set_slug("p1");
    assert_refused(
        c.update_product(missing, &taken, at(2)),
        StoreError::NotFound,
    );
    assert_refused(
        c.update_product(ProductId::new(2), &taken, at(2)),
        StoreError::Duplicate(Unique::ProductSlug),
    );
    // A product keeps its own slug; a freed slug is free again.
    let revision = c.product(ProductId::new(2)).unwrap().revision;
    let renamed = ProductPatch::default().set_slug("p9");
    c.update_product(ProductId::new(1), &renamed, at(3))
        .unwrap();
    c.update_product(ProductId::new(2), &taken, at(3)).unwrap();
    assert_eq!(c.product(ProductId::new(2)).unwrap().revision, revision + 1);

    assert_eq!(
        c.insert_governorate("g".into()).unwrap().id,
        GovernorateId::new(1)
    );
    assert_refused(
        c.insert_governorate("g".into()),
        StoreError::Duplicate(Unique::GovernorateName),
    );
    let option = c.insert_shipping_option("s".into()).id;
    let rate = |governorate| ShippingRate {
        governorate_id: GovernorateId::new(governorate),
        governorate_name: String::new(),
        delivery_charge: Decimal::ONE,
        shipping_tax_percent: Decimal::ZERO,
        total_due_tax_percent: Decimal::ZERO,
    };
    assert_refused(
        c.set_shipping_rate(ShippingOptionId::new(5), rate(7)),
        StoreError::Invalid("no governorate 7".into()),
    );
    let option = c.set_shipping_rate(option, rate(1)).unwrap();
    assert_eq!(option.rates[0].governorate_name, "g");
}

#[test]
fn a_supplier_move_names_the_variants_whose_quotes_end() {
    let mut c = catalogue(2);
    let supplier = Some(AccountId::new(7));
    let to_seven = ProductPatch::default().set_supplier(supplier);
    let (_, moved) = c
        .update_product(ProductId::new(2), &to_seven, at(1))
        .unwrap();
    assert_eq!(moved, vec![VariantId::new(2)]);
    let (_, kept) = c
        .update_product(ProductId::new(2), &to_seven, at(2))
        .unwrap();
    assert!(kept.is_empty());
    let mine: Vec<ProductId> = c
        .supplier_products(AccountId::new(7))
        .map(|p| p.id)
        .collect();
    assert_eq!(mine, [ProductId::new(2)]);
    let away = ProductPatch::default().set_supplier(None);
    c.update_product(ProductId::new(2), &away, at(3)).unwrap();
    assert_eq!(c.supplier_products(AccountId::new(7)).count(), 0);
    assert_eq!(c.owner(VariantId::new(2)).unwrap().id, ProductId::new(2));
}

#[test]
fn the_indexed_reads_equal_a_walk_of_every_product() {
    let mut c = catalogue(12);
    for id in [2, 5, 6, 11] {
        let stop = ProductPatch::default().set_active(false);
        c.update_product(ProductId::new(id), &stop, at(id)).unwrap();
    }
    let start = ProductPatch::default().set_active(true);
    c.update_product(ProductId::new(5), &start, at(20)).unwrap();
    // The default filter reads the active products' index; one of the category walks them.
    let walked = ProductFilter {
        category_ids: Some(vec![CategoryId::new(1)]),
        ..ProductFilter::default()
    };
    for (page, per_page) in [(1, 5), (2, 5), (3, 5), (1, 100)] {
        let page = PageRequest::new(page, per_page).unwrap();
        let indexed = c.products(&ProductFilter::default(), page, Product::clone);
        assert_eq!(indexed, c.products(&walked, page, Product::clone));
        assert_eq!(indexed.total, 9);
    }
    let removed = c.removed_products(at(6), PageRequest::default());
    let ids: Vec<i64> = removed.items.iter().map(|r| r.id.into()).collect();
    assert_eq!(ids, [11, 6]);
    let ids: Vec<ProductId> = c
        .products_of_variants(&[VariantId::new(3), VariantId::new(1), VariantId::new(3)])
        .iter()
        .map(|p| p.id)
        .collect();
    assert_eq!(ids, [ProductId::new(1), ProductId::new(3)]);
}

#[test]
fn stock_moves_keep_the_history_and_stamp_each_change_in_the_feed() {
    let mut c = catalogue(2);
    // Two inserts and two variants: four entries moved, one per product kept.
    let newest = c.newest_catalog_change().unwrap();
    assert_eq!(newest, ChangePosition::new(0, 4));
    let take = NewStockAdjustment::builder()
        .variant_id(VariantId::new(1))
        .delta(-6)
        .reason(StockReason::Correction)
        .build();
    assert!(matches!(
        c.adjust_stock(take, at(1)),
        Err(StockError::Insufficient { .. })
    ));
    let moves = vec![
        StockMove {
            variant_id: VariantId::new(1),
            delta: -2,
            reason: StockReason::Reservation,
        },
        StockMove {
            variant_id: VariantId::new(9),
            delta: -1,
            reason: StockReason::Reservation,
        },
    ];
    c.move_order_stock(OrderId::new(4), moves, at(2));
    assert_eq!(c.variant(VariantId::new(1)).unwrap().available, 3);
    let history = c.stock_adjustments(VariantId::new(1), PageRequest::default());
    assert_eq!(history.total, 2);
    assert_eq!(history.items[0].order_id, Some(OrderId::new(4)));
    assert_eq!(history.items[0].id, StockAdjustmentId::new(3));

    let changes = c.catalog_changes(Some(newest), 10);
    assert_eq!(changes.changes.len(), 1);
    assert_eq!(changes.changes[0].product_id, ProductId::new(1));
    assert_eq!(
        changes.changes[0].at,
        c.product(ProductId::new(1)).unwrap().updated_at
    );
    // A new name marks the category's products changed; a slug alone does not.
    let renamed = CategoryPatch::default().set_name("c2");
    c.update_category(CategoryId::new(1), &renamed, at(3))
        .unwrap();
    assert_eq!(c.newest_catalog_change(), Some(ChangePosition::new(0, 7)));
    assert_eq!(c.all_categories()[0].name, "c2");
}
