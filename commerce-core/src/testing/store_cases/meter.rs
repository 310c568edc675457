//! The billing meter.

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

/// Pulls count each product once per account and month.
pub async fn pulls_are_counted_once_per_product_and_month(store: &dyn Store) {
    let (march, april) = (month(MONTH), month("2026-04"));
    let a = account(store, "Alpha").await;
    let b = account(store, "Beta").await;
    let cat = category(store, "kitchen", None).await;
    let p: Vec<ProductId> = {
        let mut v = Vec::new();
        for t in ["A", "B", "C"] {
            v.push(product(store, t, cat.id, 0).await.id);
        }
        v
    };
    assert_eq!(
        store.meter(a.id, &march).await.unwrap(),
        MeterReading::default()
    );
    store
        .record_pulls(a.id, &march, &[p[0], p[1], p[0]])
        .await
        .unwrap();
    assert_eq!(store.meter(a.id, &march).await.unwrap().pulled_products, 2);
    store
        .record_pulls(a.id, &march, &[p[1], p[2]])
        .await
        .unwrap();
    store.record_pulls(a.id, &march, &[]).await.unwrap();
    assert_eq!(
        store.meter(a.id, &march).await.unwrap(),
        MeterReading {
            pulled_products: 3,
            order_operations: 0
        }
    );
    store.record_pulls(a.id, &april, &[p[0]]).await.unwrap();
    assert_eq!(store.meter(a.id, &april).await.unwrap().pulled_products, 1);
    assert_eq!(store.meter(a.id, &march).await.unwrap().pulled_products, 3);
    assert_eq!(store.meter(b.id, &march).await.unwrap().pulled_products, 0);
    store.record_pulls(b.id, &march, &[p[0]]).await.unwrap();
    assert_eq!(store.meter(b.id, &march).await.unwrap().pulled_products, 1);
    assert_eq!(store.meter(a.id, &march).await.unwrap().pulled_products, 3);
}
