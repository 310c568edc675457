//! The store conformance suite on [`MemoryStore`].

use std::sync::Arc;

use chrono::{TimeZone, Utc};
use commerce_core::model::{NewStockAdjustment, Product, StockReason, VariantPatch};
use commerce_core::store::{MemoryStore, prelude::*};
use commerce_core::{Engine, sandbox};

async fn fresh_store() -> Arc<dyn Store> {
    Arc::new(MemoryStore::new())
}

commerce_core::store_conformance_tests!(fresh_store());

/// A product handed out is never written in place: each kind of write to it while a
/// reader holds it makes a new record, and with no write the same record comes back (what
/// the rendered-product cache's pointer check relies on). Categories likewise.
#[tokio::test]
async fn shared_records_are_never_written_in_place() {
    let store = Arc::new(MemoryStore::new());
    let engine = Engine::new(store.clone());
    let fixture = sandbox::seed(&engine).await.unwrap();
    let id = fixture.featured_product;
    let variant = fixture.featured_variants[0];
    let now = Utc.with_ymd_and_hms(2030, 1, 1, 0, 0, 0).unwrap();
    let read = || async { store.shared_product(id).await.unwrap().unwrap() };
    let held = read().await;
    assert!(
        Arc::ptr_eq(&held, &read().await),
        "no write: the same record"
    );
    let held_categories = store.shared_categories().await.unwrap();
    assert!(Arc::ptr_eq(
        &held_categories,
        &store.shared_categories().await.unwrap()
    ));
    let patch = VariantPatch::default().set_label("مقاس جديد");
    let warranty = fixture.featured_warranties[0];
    let mut held = held;
    for what in ["variant", "stock", "activity", "warranty"] {
        let before = Product::clone(&held);
        match what {
            "variant" => store
                .update_variant(variant, patch.clone(), now)
                .await
                .map(drop),
            "stock" => {
                let received = NewStockAdjustment::new(variant, 3, StockReason::Received);
                let done = store.adjust_stock(received, now).await;
                assert!(done.is_ok(), "{done:?}");
                Ok(())
            }
            "activity" => store.set_product_active(id, true, now).await.map(drop),
            _ => store
                .set_warranty_active(warranty, false, now)
                .await
                .map(drop),
        }
        .unwrap();
        assert_eq!(*held, before, "{what}: the held record is unchanged");
        let after = read().await;
        assert!(!Arc::ptr_eq(&held, &after), "{what}: a new record");
        assert_ne!(*after, before, "{what}: the new record shows the write");
        held = after;
    }
    store
        .set_category_active(fixture.child_category, false)
        .await
        .unwrap();
    let categories = store.shared_categories().await.unwrap();
    assert!(!Arc::ptr_eq(&held_categories, &categories));
    assert_eq!(*categories, *store.all_categories().await.unwrap());
    assert!(
        held_categories
            .iter()
            .any(|c| c.id == fixture.child_category && c.active)
    );
}
