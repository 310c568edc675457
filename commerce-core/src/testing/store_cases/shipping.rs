//! Shipping options and rates.

use crate::model::*;
use crate::store::*;

use super::fixtures::*;

/// Rates are added, replaced per governorate, sorted by governorate and named by the store.
pub async fn shipping_rates_are_set_replaced_and_named(store: &dyn Store) {
    let g1 = store.insert_governorate("القاهرة".into()).await.unwrap();
    let g2 = store.insert_governorate("الجيزة".into()).await.unwrap();
    let g3 = store.insert_governorate("أسوان".into()).await.unwrap();
    assert_eq!(
        store.governorates().await.unwrap(),
        vec![g1.clone(), g2.clone(), g3.clone()]
    );
    let standard = store.insert_shipping_option("عادي".into()).await.unwrap();
    assert!(standard.active && standard.rates.is_empty());
    let express = store.insert_shipping_option("سريع".into()).await.unwrap();
    let rate = |g: GovernorateId, charge: &str| ShippingRate {
        governorate_id: g,
        governorate_name: "ignored".into(),
        delivery_charge: d(charge),
        shipping_tax_percent: d("14.00"),
        total_due_tax_percent: d("1.50"),
    };
    let after = store
        .set_shipping_rate(standard.id, rate(g2.id, "45.50"))
        .await
        .unwrap();
    assert_eq!(after.rates.len(), 1);
    assert_eq!(after.rates[0].governorate_name, "الجيزة");
    let after = store
        .set_shipping_rate(standard.id, rate(g1.id, "40.00"))
        .await
        .unwrap();
    assert_eq!(ids(&after.rates, |r| r.governorate_id), vec![g1.id, g2.id]);
    let after = store
        .set_shipping_rate(standard.id, rate(g2.id, "50.00"))
        .await
        .unwrap();
    assert_eq!(after.rates.len(), 2, "a governorate's rate is replaced");
    assert_eq!(
        after.rate(g2.id).unwrap().delivery_charge.to_string(),
        "50.00"
    );
    assert_eq!(after.rate(g1.id).unwrap().governorate_name, "القاهرة");
    assert_eq!(after.rate(g3.id), None);
    let stopped = store
        .set_shipping_option_active(express.id, false)
        .await
        .unwrap();
    assert!(!stopped.active);
    let all = store.shipping_options().await.unwrap();
    assert_eq!(all, vec![after.clone(), stopped]);
    assert_eq!(
        all[0].rates[1],
        ShippingRate {
            governorate_id: g2.id,
            governorate_name: "الجيزة".into(),
            delivery_charge: d("50.00"),
            shipping_tax_percent: d("14.00"),
            total_due_tax_percent: d("1.50"),
        }
    );
    let unknown_governorate = store
        .set_shipping_rate(standard.id, rate(g3.id.absent(), "1.00"))
        .await;
    assert!(
        matches!(unknown_governorate, Err(StoreError::Invalid(_))),
        "{unknown_governorate:?}"
    );
    let unknown_option = store
        .set_shipping_rate(express.id.absent(), rate(g1.id, "1.00"))
        .await;
    assert!(
        matches!(unknown_option, Err(StoreError::NotFound)),
        "{unknown_option:?}"
    );
    assert!(matches!(
        store
            .set_shipping_option_active(express.id.absent(), true)
            .await,
        Err(StoreError::NotFound)
    ));
    assert_eq!(store.shipping_options().await.unwrap()[0], after);
}
