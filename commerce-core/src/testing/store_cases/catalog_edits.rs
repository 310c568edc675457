//! Edits of the catalogue after it is made: products, categories, warranties, variants'
//! labels; each marks what a marketer's sync must see, and placed orders keep theirs.

use std::sync::Arc;

use crate::domain::edits::parent_allowed;
use crate::model::*;
use crate::store::*;

use super::fixtures::*;

/// The products changed at or after `since`.
async fn changed_since(store: &dyn Store, since: i64) -> Vec<ProductId> {
    let filter = ProductFilter {
        updated_since: Some(at(since)),
        ..ProductFilter::default()
    };
    product_ids(&store.products(&filter, page(1, 100)).await.unwrap())
}

/// A product's fields change as given (the rest kept), the product is marked changed, and
/// a move to a category that does not exist writes nothing.
pub async fn product_edits_change_fields_and_mark_the_product_changed(store: &dyn Store) {
    let kitchen = category(store, "kitchen", None).await;
    let tools = category(store, "tools", None).await;
    let p = product(store, "Kettle", kitchen.id, 0).await;
    let other = product(store, "Mixer", kitchen.id, 0).await;
    variant(store, p.id, "أبيض", "100.00", 5, 0).await;
    let supplier = NewAccount::supplier("Nour", "nour@example.com", "01012345678");
    let supplier = store.insert_account(supplier, at(0)).await.unwrap();
    let patch = ProductPatch::default()
        .set_title("غلاية كهربا")
        .set_slug("electric-kettle")
        .set_category(tools.id)
        .set_description("سطر\nسطر تاني")
        .set_images(["https://img.example.com/9.jpg"])
        .set_files(Vec::<String>::new())
        .set_video_url(Some("https://video.example.com/k".into()))
        .set_marketing_files_url(None)
        .set_url("https://shop.example.com/kettle")
        .set_supplier(Some(supplier.id));
    let edited = store.update_product(p.id, patch, at(100)).await.unwrap();
    assert_eq!(edited.title, "غلاية كهربا");
    assert_eq!(edited.slug, "electric-kettle");
    assert_eq!(edited.category_id, tools.id);
    assert_eq!(edited.description, "سطر\nسطر تاني");
    assert_eq!(edited.images, ["https://img.example.com/9.jpg"]);
    assert!(edited.files.is_empty());
    assert_eq!(
        edited.video_url.as_deref(),
        Some("https://video.example.com/k")
    );
    assert_eq!(edited.marketing_files_url, None);
    assert_eq!(edited.url, "https://shop.example.com/kettle");
    assert_eq!(edited.supplier_id, Some(supplier.id));
    assert_eq!(edited.updated_at, at(100));
    assert_eq!(edited.variants.len(), 1);
    assert_eq!(store.product(p.id).await.unwrap().unwrap(), edited);
    assert_eq!(changed_since(store, 100).await, [p.id]);
    // The title search reads the new title.
    let search = ProductFilter {
        query: Some("كهربا".into()),
        ..ProductFilter::default()
    };
    let found = store.products(&search, page(1, 10)).await.unwrap();
    assert_eq!(product_ids(&found), [p.id]);

    // Only what is given changes; the supplier can be removed.
    let patch = ProductPatch::default().set_supplier(None);
    let kept = store.update_product(p.id, patch, at(110)).await.unwrap();
    assert_eq!(
        (kept.supplier_id, kept.title.as_str()),
        (None, "غلاية كهربا")
    );
    let nowhere = ProductPatch::default().set_category(tools.id.absent());
    assert!(matches!(
        store.update_product(p.id, nowhere, at(120)).await,
        Err(StoreError::Invalid(_))
    ));
    assert_eq!(store.product(p.id).await.unwrap().unwrap(), kept);
    assert!(matches!(
        store
            .update_product(other.id.absent(), ProductPatch::default(), at(120))
            .await,
        Err(StoreError::NotFound)
    ));
    assert_eq!(
        store.product(other.id).await.unwrap().unwrap().updated_at,
        at(0)
    );
}

/// A category's fields change; a parent is never the category itself or one of its
/// descendants; a slug another category has is refused (and a slug given up is free again);
/// a new name marks the category's products changed, and only those.
pub async fn category_edits_keep_the_tree_and_mark_renamed_products(store: &dyn Store) {
    let top = category(store, "top", None).await;
    let mid = category(store, "mid", Some(top.id)).await;
    let leaf = category(store, "leaf", Some(mid.id)).await;
    let in_mid = product(store, "In mid", mid.id, 0).await;
    let in_top = product(store, "In top", top.id, 0).await;
    for parent in [top.id, mid.id, leaf.id] {
        let patch = CategoryPatch::default().set_parent(Some(parent));
        assert!(
            matches!(
                store.update_category(top.id, patch, at(10)).await,
                Err(StoreError::Invalid(_))
            ),
            "top under {parent}"
        );
    }
    let nowhere = CategoryPatch::default().set_parent(Some(top.id.absent()));
    assert!(matches!(
        store.update_category(mid.id, nowhere, at(10)).await,
        Err(StoreError::Invalid(_))
    ));
    let taken = CategoryPatch::default().set_slug("top").set_name("x");
    assert!(matches!(
        store.update_category(mid.id, taken, at(10)).await,
        Err(StoreError::Duplicate(Unique::CategorySlug))
    ));
    let all = store.all_categories().await.unwrap();
    assert_eq!(all, vec![top.clone(), mid.clone(), leaf.clone()]);
    assert!(changed_since(store, 1).await.is_empty());

    // The leaf moves to the top level; the mid category is renamed and gets a new slug.
    let moved = store
        .update_category(leaf.id, CategoryPatch::default().set_parent(None), at(20))
        .await
        .unwrap();
    assert_eq!(moved.parent_id, None);
    assert!(
        changed_since(store, 20).await.is_empty(),
        "no product shows a parent"
    );
    let patch = CategoryPatch::default()
        .set_name("قسم جديد")
        .set_slug("new-mid")
        .set_active(false);
    let renamed = store.update_category(mid.id, patch, at(30)).await.unwrap();
    assert_eq!(
        (renamed.name.as_str(), renamed.slug.as_str(), renamed.active),
        ("قسم جديد", "new-mid", false)
    );
    assert_eq!(changed_since(store, 30).await, [in_mid.id]);
    assert_eq!(
        store.product(in_top.id).await.unwrap().unwrap().updated_at,
        at(0)
    );
    // Now a descendant no more, the top category may go under the leaf; "mid" is free.
    let under = CategoryPatch::default().set_parent(Some(leaf.id));
    store.update_category(top.id, under, at(40)).await.unwrap();
    category(store, "mid", None).await;
    let all = store.all_categories().await.unwrap();
    assert_eq!(all[1], renamed);
    assert!(matches!(
        store
            .update_category(top.id.absent(), CategoryPatch::default(), at(50))
            .await,
        Err(StoreError::NotFound)
    ));
}

/// Warranty terms, a product's title and a variant's label change after an order was placed:
/// the product is marked changed each time, and the order keeps what it was placed with.
pub async fn placed_orders_keep_what_they_were_placed_with(store: &dyn Store) {
    let f = fixture(store, 10, 0).await;
    let lines = vec![line(&f, &f.variant, 2, true)];
    let placed = place(store, new_order(&f, f.account.id, &number(1), lines, 10)).await;
    let patch = WarrantyPatch::default()
        .set_name("ضمان سنتين")
        .set_terms("شروط جديدة")
        .set_price(d("30.00"), d("12.50"))
        .set_price_from(d("35.00"))
        .set_duration_days(730)
        .set_icon_url(Some("https://img.example.com/w.png".into()));
    let warranty = store
        .update_warranty(f.warranty.id, patch, at(100))
        .await
        .unwrap();
    assert_eq!(warranty.name, "ضمان سنتين");
    assert_eq!(warranty.terms, "شروط جديدة");
    assert_eq!(warranty.admin_fee.to_string(), "30.00");
    assert_eq!(warranty.percent.to_string(), "12.50");
    assert_eq!(warranty.duration_days, 730);
    assert!(warranty.active);
    let product = store.product(f.product.id).await.unwrap().unwrap();
    assert_eq!(product.updated_at, at(100));
    assert_eq!(product.warranties, vec![warranty]);
    let title = ProductPatch::default().set_title("اسم جديد");
    store
        .update_product(f.product.id, title, at(110))
        .await
        .unwrap();
    let label = VariantPatch::default().set_label("لون جديد");
    store
        .update_variant(f.variant.id, label, at(120))
        .await
        .unwrap();
    assert_eq!(changed_since(store, 120).await, [f.product.id]);
    let order = store.order(None, placed.id).await.unwrap().unwrap();
    assert_eq!(order, placed);
    assert_eq!(order.lines[0].title, f.product.title);
    assert_eq!(order.lines[0].variant_label, f.variant.label);
    assert_eq!(order.lines[0].warranties[0].terms, f.warranty.terms);
    assert!(matches!(
        store
            .update_warranty(f.warranty.id.absent(), WarrantyPatch::default(), at(130))
            .await,
        Err(StoreError::NotFound)
    ));
}

/// Two categories each moved under the other at once: at most one move wins, and the tree
/// has no cycle.
pub async fn concurrent_category_moves_never_make_a_cycle(store: Arc<dyn Store>) {
    for round in 0..5 {
        let a = category(&*store, &format!("a{round}"), None).await;
        let b = category(&*store, &format!("b{round}"), None).await;
        let moves = [(a.id, b.id), (b.id, a.id)].map(|(child, parent)| {
            let store = store.clone();
            tokio::spawn(async move {
                let patch = CategoryPatch::default().set_parent(Some(parent));
                store.update_category(child, patch, at(round)).await
            })
        });
        let mut won = 0;
        for task in moves {
            match task.await.expect("task") {
                Ok(_) => won += 1,
                Err(StoreError::Invalid(_)) => {}
                Err(other) => panic!("unexpected failure: {other:?}"),
            }
        }
        assert_eq!(won, 1, "round {round}");
        let all = store.all_categories().await.unwrap();
        let parent_of = |id: CategoryId| all.iter().find(|c| c.id == id).and_then(|c| c.parent_id);
        for c in &all {
            assert!(
                parent_allowed(c.id, c.parent_id, parent_of),
                "a cycle at {}",
                c.id
            );
        }
    }
}

/// Product slugs are unique among products, as category slugs are: a repeat is refused with
/// `Duplicate(ProductSlug)` on insert and on edit, and writes nothing; a product keeps its own
/// slug through an edit, and a slug given up is free again.
pub async fn repeated_product_slugs_are_refused(store: &dyn Store) {
    let kitchen = category(store, "kitchen", None).await;
    let kettle = product(store, "Kettle", kitchen.id, 0).await;
    let mixer = product(store, "Mixer", kitchen.id, 0).await;
    // A category's slug is another kind of value: a product may share it.
    let same_as_category = NewProduct::builder()
        .category_id(kitchen.id)
        .title("Kitchen".to_owned())
        .slug("kitchen".to_owned())
        .url("https://a.example".to_owned())
        .build();
    store.insert_product(same_as_category, at(0)).await.unwrap();
    let all = async || {
        let page = store
            .products(&ProductFilter::default(), page(1, 100))
            .await;
        page.unwrap().items
    };
    let before = all().await;
    let again = NewProduct::builder()
        .category_id(kitchen.id)
        .title("غلاية تانية".to_owned())
        .slug("kettle".to_owned())
        .url("https://b.example".to_owned())
        .build();
    let refused = store.insert_product(again, at(10)).await;
    assert!(
        matches!(refused, Err(StoreError::Duplicate(Unique::ProductSlug))),
        "{refused:?}"
    );
    let edit = ProductPatch::default().set_slug("kettle").set_title("خلاط");
    let refused = store.update_product(mixer.id, edit, at(10)).await;
    assert!(
        matches!(refused, Err(StoreError::Duplicate(Unique::ProductSlug))),
        "{refused:?}"
    );
    assert_eq!(all().await, before, "a refusal writes nothing");
    // Its own slug again is no repeat; a slug given up is free for another product.
    let own = ProductPatch::default().set_slug("kettle");
    store.update_product(kettle.id, own, at(20)).await.unwrap();
    let moved = ProductPatch::default().set_slug("kettle-1l");
    store
        .update_product(kettle.id, moved, at(30))
        .await
        .unwrap();
    let freed = ProductPatch::default().set_slug("kettle");
    let edited = store.update_product(mixer.id, freed, at(40)).await.unwrap();
    assert_eq!(edited.slug, "kettle");
    let taken = NewProduct::builder()
        .category_id(kitchen.id)
        .title("Kettle 1L".to_owned())
        .slug("kettle-1l".to_owned())
        .url("https://c.example".to_owned())
        .build();
    assert!(matches!(
        store.insert_product(taken, at(50)).await,
        Err(StoreError::Duplicate(Unique::ProductSlug))
    ));
}
