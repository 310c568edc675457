//! A supplier's quote made while the operator moves its product to another supplier.

use std::sync::Arc;

use crate::model::*;
use crate::store::*;

use super::fixtures::*;
use super::quotes::{offer, supply};

/// A supplier's quote races the operator's move of its product to another supplier, 12
/// rounds: whichever comes first, the new supplier then quotes the variant at once (a pending
/// quote of the former supplier never blocks it, nor names its id), and afterwards no quote of
/// the former supplier on the variant is pending.
pub async fn a_quote_racing_its_products_move_never_blocks_the_new_supplier(store: Arc<dyn Store>) {
    let s = supply(&*store, 5).await;
    let mut owner = (s.supplier.id, s.rival.id);
    for round in 0..12_i64 {
        let (former, next) = owner;
        let moving = {
            let store = store.clone();
            let product = s.product.id;
            tokio::spawn(async move {
                let patch = ProductPatch {
                    supplier_id: Some(Some(next)),
                    ..ProductPatch::default()
                };
                store.update_product(product, patch, at(10 * round)).await
            })
        };
        let quoting = {
            let store = store.clone();
            let variant = s.v1.id;
            tokio::spawn(async move {
                let new = offer(former, variant, "10.00", 1);
                store.insert_quote(new, None, at(10 * round)).await
            })
        };
        moving.await.expect("task").expect("the move");
        // Before the move: made, or refused for its own quote of the round before (still
        // pending); after it: not its variant any more.
        match quoting.await.expect("task") {
            Ok(_) | Err(InsertQuoteError::NotSuppliers | InsertQuoteError::Pending { .. }) => {}
            Err(other) => panic!("round {round}: the former supplier's quote: {other:?}"),
        }
        let new = offer(next, s.v1.id, "11.00", 1);
        let quoted = store.insert_quote(new, None, at(10 * round + 1)).await;
        assert!(
            quoted.is_ok(),
            "round {round}: the new supplier: {quoted:?}"
        );
        let left = store
            .quotes(
                former,
                &QuoteFilter {
                    status: Some(QuoteStatus::Pending),
                    ..QuoteFilter::default()
                },
                page(1, 25),
                at(10 * round + 2),
            )
            .await
            .unwrap();
        assert_eq!(
            left.total, 0,
            "round {round}: the former supplier's pending quotes"
        );
        owner = (next, former);
    }
}
