//! The catalogue: categories, products, variants, warranties, money.

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

/// Categories keep their parent, are listed by id, and can be hidden.
pub async fn categories_round_trip_with_parents_and_activity(store: &dyn Store) {
    let root = category(store, "home", None).await;
    assert!(root.active);
    assert_eq!(root.parent_id, None);
    assert_eq!(root.name, "قسم home");
    let child = category(store, "kitchen", Some(root.id)).await;
    assert_eq!(child.parent_id, Some(root.id));
    let orphan = store
        .insert_category(NewCategory {
            name: "x".into(),
            slug: "x".into(),
            parent_id: Some(child.id.absent()),
        })
        .await;
    assert!(
        matches!(orphan, Err(StoreError::Invalid(_))),
        "unknown parent: {orphan:?}"
    );
    let active = |on| CategoryPatch::default().set_active(on);
    let hidden = store.update_category(root.id, active(false), at(0)).await;
    let hidden = hidden.unwrap();
    assert!(!hidden.active);
    assert_eq!(hidden.slug, "home");
    let all = store.all_categories().await.unwrap();
    assert_eq!(all, vec![hidden, child.clone()]);
    let shown = store.update_category(root.id, active(true), at(0)).await;
    assert!(shown.unwrap().active);
    assert!(matches!(
        store
            .update_category(child.id.absent(), active(true), at(0))
            .await,
        Err(StoreError::NotFound)
    ));
}

/// A product keeps every field, its variants and warranties (stopped ones too) by id.
pub async fn product_round_trips_with_variants_and_warranties(store: &dyn Store) {
    let cat = category(store, "kitchen", None).await;
    let p = product(store, "Electric Kettle", cat.id, 0).await;
    assert!(p.active);
    assert!(p.variants.is_empty() && p.warranties.is_empty());
    assert_eq!(p.updated_at, at(0));
    let v1 = variant(store, p.id, "أبيض", "125.40", 7, 1).await;
    let v2 = variant(store, p.id, "أسود", "0.01", 0, 2).await;
    let w1 = warranty(store, p.id, "ضمان سنة", 3).await;
    let w2 = warranty(store, p.id, "ضمان سنتين", 4).await;
    assert_eq!(v1.product_id, p.id);
    assert_eq!(v1.label, "أبيض");
    assert_eq!(v1.price.to_string(), "125.40");
    assert_eq!(v1.suggested_min.to_string(), "135.40");
    assert_eq!(v1.suggested_max.to_string(), "175.40");
    assert_eq!(v1.available, 7);
    assert_eq!(w1.product_id, p.id);
    assert!(w1.active);
    assert_eq!(w1.duration_days, 365);
    store
        .set_warranty_active(w2.id, false, at(5))
        .await
        .unwrap();
    let stored = store.product(p.id).await.unwrap().unwrap();
    assert_eq!(stored.title, "Electric Kettle");
    assert_eq!(stored.slug, "electric-kettle");
    assert_eq!(stored.category_id, cat.id);
    assert_eq!(stored.description, "وصف Electric Kettle\nسطر ثاني");
    assert_eq!(stored.images, p.images);
    assert_eq!(stored.images.len(), 2);
    assert!(stored.files.is_empty());
    assert_eq!(stored.video_url, None);
    assert_eq!(stored.marketing_files_url, p.marketing_files_url);
    assert_eq!(stored.url, p.url);
    assert_eq!(stored.variants, vec![v1.clone(), v2.clone()]);
    let w2_stopped = Warranty {
        active: false,
        ..w2.clone()
    };
    assert_eq!(stored.warranties, vec![w1.clone(), w2_stopped]);
    assert_eq!(stored.updated_at, at(5));
    // The listing returns the same full product.
    let listed = store
        .products(&ProductFilter::default(), PageRequest::default())
        .await
        .unwrap();
    assert_eq!(listed.items, vec![stored.clone()]);
    assert_eq!(listed.total, 1);

    assert_eq!(store.product(p.id.absent()).await.unwrap(), None);
    let bad_category = store
        .insert_product(
            NewProduct {
                title: "x".into(),
                slug: "x".into(),
                category_id: cat.id.absent(),
                description: String::new(),
                images: vec![],
                files: vec![],
                video_url: None,
                marketing_files_url: None,
                url: String::new(),
                supplier_id: None,
            },
            at(0),
        )
        .await;
    assert!(
        matches!(bad_category, Err(StoreError::Invalid(_))),
        "unknown category: {bad_category:?}"
    );
    let orphan_variant = store
        .insert_variant(
            p.id.absent(),
            NewVariant {
                label: "x".into(),
                price: d("1.00"),
                suggested_min: d("1.00"),
                suggested_max: d("1.00"),
                available: 1,
                supply_price: d("0.50"),
            },
            at(0),
        )
        .await;
    assert!(matches!(orphan_variant, Err(StoreError::NotFound)));
    let orphan_warranty = store
        .insert_warranty(
            p.id.absent(),
            NewWarranty {
                name: "x".into(),
                admin_fee: d("1.00"),
                percent: d("1.00"),
                price_from: d("1.00"),
                duration_days: 1,
                terms: String::new(),
                icon_url: None,
            },
            at(0),
        )
        .await;
    assert!(matches!(orphan_warranty, Err(StoreError::NotFound)));
    assert!(matches!(
        store.set_product_active(p.id.absent(), false, at(0)).await,
        Err(StoreError::NotFound)
    ));
}

/// Listing: only active products, by id; category ids, case-insensitive literal title
/// search, inclusive `updated_since`, pagination with totals.
pub async fn product_listing_filters_and_paginates(store: &dyn Store) {
    let c1 = category(store, "home", None).await;
    let c2 = category(store, "kitchen", Some(c1.id)).await;
    let c3 = category(store, "offers", None).await;
    let p1 = product(store, "Blue Kettle", c1.id, 0).await;
    let p2 = product(store, "Red kettle XL", c2.id, 10).await;
    let p3 = product(store, "Toaster 50% off", c3.id, 20).await;
    let p4 = product(store, "KETTLE mini", c1.id, 30).await;
    let stopped = store
        .set_product_active(p4.id, false, at(40))
        .await
        .unwrap();
    assert!(!stopped.active);
    assert_eq!(stopped.updated_at, at(40));
    let p5 = product(store, "Mixer", c1.id, 50).await;

    let list = |filter: ProductFilter, pr: PageRequest| async move {
        store.products(&filter, pr).await.expect("products")
    };
    let all = list(ProductFilter::default(), page(1, 25)).await;
    assert_eq!(product_ids(&all), vec![p1.id, p2.id, p3.id, p5.id]);
    assert_eq!(all.total, 4);

    let by_category = |ids: Vec<CategoryId>| ProductFilter {
        category_ids: Some(ids),
        ..Default::default()
    };
    let in_tree = list(by_category(vec![c1.id, c2.id]), page(1, 25)).await;
    assert_eq!(product_ids(&in_tree), vec![p1.id, p2.id, p5.id]);
    assert_eq!(in_tree.total, 3);
    let only_c3 = list(by_category(vec![c3.id]), page(1, 25)).await;
    assert_eq!(product_ids(&only_c3), vec![p3.id]);
    let none = list(by_category(vec![]), page(1, 25)).await;
    assert_eq!((none.items.len(), none.total), (0, 0));

    let by_query = |q: &str| ProductFilter {
        query: Some(q.to_owned()),
        ..Default::default()
    };
    for q in ["kettle", "KETTLE", "KeTtLe"] {
        let found = list(by_query(q), page(1, 25)).await;
        assert_eq!(product_ids(&found), vec![p1.id, p2.id], "query {q}");
        assert_eq!(found.total, 2);
    }
    // Search is a literal substring: SQL wildcards match only themselves.
    assert_eq!(
        product_ids(&list(by_query("50%"), page(1, 25)).await),
        vec![p3.id]
    );
    assert_eq!(
        product_ids(&list(by_query("%"), page(1, 25)).await),
        vec![p3.id]
    );
    assert_eq!(list(by_query("_"), page(1, 25)).await.total, 0);
    assert_eq!(
        product_ids(&list(by_query("e k"), page(1, 25)).await),
        vec![p1.id]
    );

    let since = |t: i64| ProductFilter {
        updated_since: Some(at(t)),
        ..Default::default()
    };
    assert_eq!(
        product_ids(&list(since(10), page(1, 25)).await),
        vec![p2.id, p3.id, p5.id],
        "updated_since is inclusive"
    );
    assert_eq!(
        product_ids(&list(since(11), page(1, 25)).await),
        vec![p3.id, p5.id]
    );
    assert_eq!(list(since(51), page(1, 25)).await.total, 0);

    let combined = ProductFilter {
        category_ids: Some(vec![c1.id]),
        query: Some("kettle".into()),
        updated_since: Some(at(0)),
    };
    assert_eq!(product_ids(&list(combined, page(1, 25)).await), vec![p1.id]);

    let first = list(ProductFilter::default(), page(1, 2)).await;
    assert_eq!((product_ids(&first), first.total), (vec![p1.id, p2.id], 4));
    let second = list(ProductFilter::default(), page(2, 2)).await;
    assert_eq!(
        (product_ids(&second), second.total),
        (vec![p3.id, p5.id], 4)
    );
    let beyond = list(ProductFilter::default(), page(3, 2)).await;
    assert_eq!((beyond.items.len(), beyond.total), (0, 4));
    let filtered_page = list(by_query("kettle"), page(2, 1)).await;
    assert_eq!(
        (product_ids(&filtered_page), filtered_page.total),
        (vec![p2.id], 2)
    );

    // A stopped product is still returned by `product`.
    let p4_read = store.product(p4.id).await.unwrap().unwrap();
    assert!(!p4_read.active);
    assert_eq!(p4_read.title, "KETTLE mini");
    // And comes back to the listing when restarted.
    store.set_product_active(p4.id, true, at(60)).await.unwrap();
    assert_eq!(
        product_ids(&list(since(60), page(1, 25)).await),
        vec![p4.id]
    );
}

/// `update_variant` changes only the given fields and bumps the product's `updated_at`.
pub async fn update_variant_patches_fields_and_bumps_product(store: &dyn Store) {
    let cat = category(store, "kitchen", None).await;
    let p = product(store, "Kettle", cat.id, 0).await;
    let other = product(store, "Mixer", cat.id, 0).await;
    let v = variant(store, p.id, "أبيض", "100.00", 5, 0).await;
    let price_only = store
        .update_variant(
            v.id,
            VariantPatch {
                price: Some(d("110.55")),
                ..Default::default()
            },
            at(100),
        )
        .await
        .unwrap();
    assert_eq!(price_only.price.to_string(), "110.55");
    assert_eq!(price_only.suggested_min, v.suggested_min);
    assert_eq!(price_only.suggested_max, v.suggested_max);
    assert_eq!(price_only.available, 5);
    assert_eq!(price_only.label, v.label);
    let read = store.product(p.id).await.unwrap().unwrap();
    assert_eq!(read.updated_at, at(100));
    assert_eq!(read.variants, vec![price_only.clone()]);
    let since = ProductFilter {
        updated_since: Some(at(100)),
        ..Default::default()
    };
    let changed = store.products(&since, page(1, 25)).await.unwrap();
    assert_eq!(product_ids(&changed), vec![p.id]);
    assert_eq!(
        store.product(other.id).await.unwrap().unwrap().updated_at,
        at(0)
    );

    let all = store
        .update_variant(
            v.id,
            VariantPatch {
                label: Some("أسود".into()),
                price: None,
                suggested_min: Some(d("120.00")),
                suggested_max: Some(d("180.00")),
                supply_price: Some(d("70.25")),
            },
            at(200),
        )
        .await
        .unwrap();
    assert_eq!(all.price.to_string(), "110.55");
    assert_eq!(all.suggested_min.to_string(), "120.00");
    assert_eq!(all.suggested_max.to_string(), "180.00");
    assert_eq!(all.label, "أسود");
    assert_eq!(all.supply_price.to_string(), "70.25");
    assert_eq!(all.available, 5);
    let read = store.product(p.id).await.unwrap().unwrap();
    assert_eq!(read.updated_at, at(200));
    assert_eq!(read.variants, vec![all.clone()]);
    assert!(matches!(
        store
            .update_variant(v.id.absent(), VariantPatch::default(), at(300))
            .await,
        Err(StoreError::NotFound)
    ));
}

/// A stopped warranty stays on the product (inactive); the product's `updated_at` moves.
pub async fn stopping_a_warranty_keeps_it_on_the_product(store: &dyn Store) {
    let cat = category(store, "kitchen", None).await;
    let p = product(store, "Kettle", cat.id, 0).await;
    let w = warranty(store, p.id, "ضمان", 1).await;
    assert_eq!(
        store.product(p.id).await.unwrap().unwrap().updated_at,
        at(1)
    );
    let stopped = store
        .set_warranty_active(w.id, false, at(200))
        .await
        .unwrap();
    assert!(!stopped.active);
    assert_eq!(stopped.name, w.name);
    let read = store.product(p.id).await.unwrap().unwrap();
    assert_eq!(read.warranties, vec![stopped]);
    assert_eq!(read.updated_at, at(200));
    let restarted = store
        .set_warranty_active(w.id, true, at(300))
        .await
        .unwrap();
    assert_eq!(restarted, w);
    assert!(matches!(
        store.set_warranty_active(w.id.absent(), true, at(0)).await,
        Err(StoreError::NotFound)
    ));
}

/// `products_of_variants` returns each owning product once, by id, stopped ones included,
/// each whole: the same record, variants and warranties as [`CatalogStore::product`] reads.
pub async fn products_of_variants_returns_each_owner_once(store: &dyn Store) {
    let cat = category(store, "kitchen", None).await;
    let p1 = product(store, "Kettle", cat.id, 0).await;
    let p2 = product(store, "Mixer", cat.id, 0).await;
    let p3 = product(store, "Toaster", cat.id, 0).await;
    let v1 = variant(store, p1.id, "a", "1.00", 1, 0).await;
    let v2 = variant(store, p1.id, "b", "2.00", 1, 0).await;
    let v3 = variant(store, p2.id, "c", "3.00", 1, 0).await;
    let _v4 = variant(store, p3.id, "d", "4.00", 1, 0).await;
    warranty(store, p1.id, "ضمان سنة", 0).await;
    warranty(store, p1.id, "Two years", 0).await;
    warranty(store, p3.id, "Not asked for", 0).await;
    store.set_product_active(p2.id, false, at(1)).await.unwrap();
    let found = store
        .products_of_variants(&[v3.id, v2.id, v1.id, v3.id.absent()])
        .await
        .unwrap();
    assert_eq!(ids(&found, |p| p.id), vec![p1.id, p2.id]);
    assert_eq!(found[0].variants.len(), 2);
    assert_eq!(found[0].warranties.len(), 2);
    assert!(!found[1].active);
    for owner in &found {
        let read = store.product(owner.id).await.unwrap();
        assert_eq!(
            Some(owner),
            read.as_ref(),
            "product {} read whole",
            owner.id
        );
    }
    assert!(store.products_of_variants(&[]).await.unwrap().is_empty());
}

/// Money of every kind survives the store exactly (cents, zero, large amounts).
pub async fn money_amounts_round_trip_to_the_piastre(store: &dyn Store) {
    let f = fixture(store, 1_000, 1_000).await;
    let amounts = ["125.40", "0.01", "0.00", "99999999.99", "1000000.10"];
    for (i, amount) in amounts.iter().enumerate() {
        let v = store
            .insert_variant(
                f.product.id,
                NewVariant {
                    label: format!("v{i}"),
                    price: d(amount),
                    suggested_min: d(amount),
                    suggested_max: d("99999999.99"),
                    available: 3,
                    supply_price: d(amount),
                },
                at(1),
            )
            .await
            .unwrap();
        assert_eq!(v.price.to_string(), *amount);
        let read = store.product(f.product.id).await.unwrap().unwrap();
        let read_v = read.variants.iter().find(|x| x.id == v.id).unwrap();
        assert_eq!(read_v.price.to_string(), *amount);
        assert_eq!(read_v.suggested_min.to_string(), *amount);
        assert_eq!(read_v.suggested_max.to_string(), "99999999.99");

        let w = store
            .insert_warranty(
                f.product.id,
                NewWarranty {
                    name: format!("w{i}"),
                    admin_fee: d(amount),
                    percent: d("12.34"),
                    price_from: d(amount),
                    duration_days: 30,
                    terms: String::new(),
                    icon_url: None,
                },
                at(1),
            )
            .await
            .unwrap();
        let read = store.product(f.product.id).await.unwrap().unwrap();
        let read_w = read.warranties.iter().find(|x| x.id == w.id).unwrap();
        assert_eq!(read_w.admin_fee.to_string(), *amount);
        assert_eq!(read_w.price_from.to_string(), *amount);
        assert_eq!(read_w.percent.to_string(), "12.34");

        let option = store
            .set_shipping_rate(
                f.option.id,
                ShippingRate {
                    governorate_id: f.governorate.id,
                    governorate_name: String::new(),
                    delivery_charge: d(amount),
                    shipping_tax_percent: d("14.00"),
                    total_due_tax_percent: d("0.75"),
                },
            )
            .await
            .unwrap();
        let rate = option.rate(f.governorate.id).unwrap();
        assert_eq!(rate.delivery_charge.to_string(), *amount);
        let options = store.shipping_options().await.unwrap();
        let rate = options[0].rate(f.governorate.id).unwrap();
        assert_eq!(rate.delivery_charge.to_string(), *amount);
        assert_eq!(rate.shipping_tax_percent.to_string(), "14.00");
        assert_eq!(rate.total_due_tax_percent.to_string(), "0.75");

        earn(store, &f, f.account.id, d(amount), &format!("EG-W{i:07}")).await;
        let wd = store
            .request_withdrawal(
                NewWithdrawal {
                    account_id: f.account.id,
                    amount: d(amount),
                    supply_amount: d(amount),
                    wallet_number: "01012345678".into(),
                    wallet_description: "فودافون كاش".into(),
                    notes: None,
                },
                no_hold(),
                at(1),
            )
            .await
            .unwrap();
        let listed = store.withdrawals(f.account.id).await.unwrap();
        let listed = listed.iter().find(|x| x.id == wd.id).unwrap();
        assert_eq!(listed.amount.to_string(), *amount);
        assert_eq!(listed.supply_amount.to_string(), *amount);

        let mut order = new_order(&f, f.account.id, &number(i as u32), vec![], 10);
        let mut l = line(&f, &v, 1, false);
        l.sell_price = d(amount);
        l.profit = d(amount);
        l.warranties = vec![LineWarranty {
            warranty_id: w.id,
            name: w.name.clone(),
            unit_price: d(amount),
            quantity: 1,
            total: d(amount),
            duration_days: 30,
            terms: String::new(),
        }];
        order.lines = vec![l];
        order.totals = Totals {
            products: d(amount),
            warranties: d(amount),
            delivery_charge: d(amount),
            customer_total: d(amount),
            profit: d(amount),
            income_tax: d(amount),
            net_profit: d(amount),
            income_tax_percent: d("4.00"),
        };
        let placed = place(store, order).await;
        let read = store.order(None, placed.id).await.unwrap().unwrap();
        assert_eq!(read, placed);
        for t in [
            read.totals.products,
            read.totals.warranties,
            read.totals.delivery_charge,
            read.totals.customer_total,
            read.totals.profit,
            read.totals.income_tax,
            read.totals.net_profit,
        ] {
            assert_eq!(t.to_string(), *amount);
        }
        assert_eq!(read.totals.income_tax_percent.to_string(), "4.00");
        let rl = &read.lines[0];
        assert_eq!(rl.sell_price.to_string(), *amount);
        assert_eq!(rl.profit.to_string(), *amount);
        assert_eq!(rl.warranties[0].unit_price.to_string(), *amount);
        assert_eq!(rl.warranties[0].total.to_string(), *amount);
    }
}
