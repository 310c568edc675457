//! `POST /quotes` under an `Idempotency-Key`: the quote linked to the key's record in its
//! insert, recovered by a retry after its request died, fenced like an order's placement.

use std::sync::Arc;

use crate::model::*;
use crate::store::*;

use super::fixtures::*;
use super::quotes::{offer, quote, quote_ids, supply};

/// The supplier's quotes as of `now`, newest first.
async fn quotes_of(store: &dyn Store, account: AccountId, now: i64) -> Vec<QuoteId> {
    let found = store
        .quotes(account, &QuoteFilter::default(), page(1, 100), at(now))
        .await
        .expect("quotes");
    quote_ids(&found)
}

/// A quote inserted under a claim links the key's record: while fresh the record is in
/// flight; once stale, a retry recovers that quote (no second quote), holds the record
/// from then on and keeps its response, which the key replays.
pub async fn insert_quote_links_the_idempotency_record(store: &dyn Store) {
    let s = supply(store, 10).await;
    let me = s.supplier.id;
    let first = claim(me, "quote-1");
    let retry = another_request(&first, 2);
    assert_eq!(
        begin(store, &first, "f", at(0)).await,
        IdempotencyBegin::Started
    );
    let made = store
        .insert_quote(offer(me, s.v1.id, "45.00", 5), Some(&first), at(1))
        .await
        .expect("insert quote under a claim");
    assert_eq!(
        begin(store, &retry, "f", at(30)).await,
        IdempotencyBegin::InFlight
    );
    // The first request died after its insert: past the stale time, its quote is recovered.
    assert_eq!(
        begin(store, &retry, "f", at(61)).await,
        IdempotencyBegin::Recovered(Created::Quote(made.id))
    );
    assert_eq!(quotes_of(store, me, 62).await, vec![made.id]);
    let kept = StoredResponse {
        status: 201,
        body: b"the quote".to_vec(),
    };
    let late = store.finish_idempotent(&first, kept.clone()).await;
    assert!(matches!(late, Err(StoreError::NotFound)), "{late:?}");
    store.finish_idempotent(&retry, kept.clone()).await.unwrap();
    assert_eq!(
        begin(store, &another_request(&first, 3), "f", at(63)).await,
        IdempotencyBegin::Replay(kept)
    );
    // Without a claim nothing is linked: another key's record stays unlinked.
    let unlinked = claim(me, "quote-2");
    assert_eq!(
        begin(store, &unlinked, "f", at(0)).await,
        IdempotencyBegin::Started
    );
    store
        .insert_quote(offer(me, s.v2.id, "99.00", 1), None, at(2))
        .await
        .expect("insert quote without a claim");
    assert_eq!(
        begin(store, &another_request(&unlinked, 2), "f", at(61)).await,
        IdempotencyBegin::Started
    );
}

/// Fenced: a request that lost its record to a retry (it stalled past the stale time), or a
/// claim on a key never begun, registers no quote: no quote stands, the variant stays free
/// and the record is not linked (the retry inserts its own quote and the key recovers it).
pub async fn a_quote_under_a_lost_claim_inserts_nothing(store: &dyn Store) {
    let s = supply(store, 10).await;
    let me = s.supplier.id;
    let original = claim(me, "slow-quote");
    let retry = another_request(&original, 2);
    assert_eq!(
        begin(store, &original, "f", at(0)).await,
        IdempotencyBegin::Started
    );
    assert_eq!(
        begin(store, &retry, "f", at(61)).await,
        IdempotencyBegin::Started
    );
    let late = store
        .insert_quote(offer(me, s.v1.id, "45.00", 5), Some(&original), at(62))
        .await;
    assert!(
        matches!(late, Err(InsertQuoteError::IdempotencyLost)),
        "{late:?}"
    );
    let stranger = claim(me, "never-begun");
    let refused = store
        .insert_quote(offer(me, s.v2.id, "45.00", 5), Some(&stranger), at(62))
        .await;
    assert!(
        matches!(refused, Err(InsertQuoteError::IdempotencyLost)),
        "{refused:?}"
    );
    assert_eq!(quotes_of(store, me, 63).await, Vec::<QuoteId>::new());
    let variants = store
        .supply_variants(me, None, page(1, 100), at(63))
        .await
        .expect("supply variants");
    assert!(
        variants.items.iter().all(|v| v.pending_quote_id.is_none()),
        "{variants:?}"
    );
    // The retry's own quote is the key's: its record is linked to it, not the original's.
    let made = store
        .insert_quote(offer(me, s.v1.id, "44.00", 5), Some(&retry), at(63))
        .await
        .expect("the retry's quote");
    assert_eq!(
        begin(store, &another_request(&original, 3), "f", at(124)).await,
        IdempotencyBegin::Recovered(Created::Quote(made.id))
    );
}

/// `abandon_idempotent` keeps a record linked to a quote (its quote stands): the key stays in
/// flight until stale, then recovers the quote; it is never started afresh.
pub async fn abandon_keeps_a_record_linked_to_a_quote(store: &dyn Store) {
    let s = supply(store, 10).await;
    let me = s.supplier.id;
    let linked = claim(me, "linked-quote");
    assert_eq!(
        begin(store, &linked, "f", at(0)).await,
        IdempotencyBegin::Started
    );
    let made = store
        .insert_quote(offer(me, s.v1.id, "45.00", 5), Some(&linked), at(1))
        .await
        .expect("insert quote under a claim");
    store.abandon_idempotent(&linked).await.unwrap();
    assert_eq!(
        begin(store, &linked, "f", at(2)).await,
        IdempotencyBegin::InFlight
    );
    assert_eq!(
        begin(store, &another_request(&linked, 2), "other data", at(3)).await,
        IdempotencyBegin::Mismatch
    );
    assert_eq!(
        begin(store, &another_request(&linked, 2), "f", at(300)).await,
        IdempotencyBegin::Recovered(Created::Quote(made.id))
    );
    assert_eq!(quotes_of(store, me, 301).await, vec![made.id]);
}

/// Fenced, raced: 12 keys, each begun by a quote request that then stalled past the stale
/// time; per key (each on its own variant), its late insert races a retry's takeover (and the
/// retry's own insert of the same quote). Each key ends with exactly one quote: either the
/// late insert won and the retry recovered its quote, or the retry took the record over and
/// the late insert was refused (its claim lost, or the retry's quote already pending), writing
/// nothing.
pub async fn concurrent_takeover_and_late_quote_insert_one_quote(store: Arc<dyn Store>) {
    const KEYS: usize = 12;
    let s = supply(&*store, 10).await;
    let me = s.supplier.id;
    let mut tasks = Vec::new();
    for k in 0..KEYS {
        let v = variant(&*store, s.product.id, &format!("مقاس {k}"), "50.00", 0, 0).await;
        let original = claim(me, &format!("quote-race-{k}"));
        assert_eq!(
            begin(&*store, &original, "f", at(0)).await,
            IdempotencyBegin::Started
        );
        let retry = another_request(&original, 2);
        let inserting = tokio::spawn({
            let store = store.clone();
            let original = original.clone();
            async move {
                let late = offer(me, v.id, "30.00", 4);
                store.insert_quote(late, Some(&original), at(1)).await
            }
        });
        let taking = tokio::spawn({
            let store = store.clone();
            async move {
                let begun = begin(&*store, &retry, "f", at(61)).await;
                let inserted = match begun {
                    IdempotencyBegin::Started => {
                        let own = offer(me, v.id, "30.00", 4);
                        Some(store.insert_quote(own, Some(&retry), at(61)).await)
                    }
                    _ => None,
                };
                (begun, inserted)
            }
        });
        tasks.push((inserting, taking));
    }
    let (mut late_won, mut retry_won) = (0, 0);
    for (inserting, taking) in tasks {
        let late = inserting.await.expect("task");
        let (begun, inserted) = taking.await.expect("task");
        match (late, begun, inserted) {
            (Ok(quote), IdempotencyBegin::Recovered(Created::Quote(id)), None)
                if quote.id == id =>
            {
                late_won += 1
            }
            (Err(InsertQuoteError::IdempotencyLost), IdempotencyBegin::Started, Some(Ok(_))) => {
                retry_won += 1
            }
            // The retry's quote came first: the late insert meets it as the variant's pending
            // quote (checked before the claim, as an order's duplicate reference is).
            (
                Err(InsertQuoteError::Pending { existing }),
                IdempotencyBegin::Started,
                Some(Ok(quote)),
            ) if existing == quote.id => retry_won += 1,
            other => panic!("two quotes or none for one key: {other:?}"),
        }
    }
    eprintln!("quote takeover race: late insert won {late_won}, retry won {retry_won}");
    assert_eq!(quotes_of(&*store, me, 62).await.len(), KEYS);
}

/// Quotes follow their product: when the product moves to another supplier, the old
/// supplier's pending quote on its variants ends `withdrawn` in the same operation, with the
/// platform's note, so the new supplier can quote at once; the old one can no more.
pub async fn a_product_moved_to_another_supplier_ends_the_old_ones_pending_quotes(
    store: &dyn Store,
) {
    let s = supply(store, 5).await;
    let pending = store
        .insert_quote(offer(s.supplier.id, s.v1.id, "45.50", 30), None, at(10))
        .await
        .expect("insert quote");
    let patch = ProductPatch {
        supplier_id: Some(Some(s.rival.id)),
        ..ProductPatch::default()
    };
    store
        .update_product(s.product.id, patch, at(20))
        .await
        .unwrap();
    let ended = store
        .quote(None, pending.id, at(30))
        .await
        .unwrap()
        .expect("the quote");
    assert_eq!(ended.status, QuoteStatus::Withdrawn);
    assert_eq!(
        ended.decision_note.as_deref(),
        Some(crate::domain::supply::MOVED_PRODUCT_NOTE)
    );
    assert_eq!(ended.decided_at, Some(at(20)));
    let theirs = store
        .insert_quote(offer(s.rival.id, s.v1.id, "40.00", 10), None, at(40))
        .await
        .expect("the new supplier quotes at once");
    assert_eq!(theirs.status, QuoteStatus::Pending);
    let refused = store
        .insert_quote(offer(s.supplier.id, s.v2.id, "10.00", 1), None, at(50))
        .await;
    assert!(
        matches!(refused, Err(InsertQuoteError::NotSuppliers)),
        "{refused:?}"
    );
    // The supply lists follow the product too.
    let listed = |supplier: AccountId| async move {
        let found = store
            .supply_variants(supplier, None, page(1, 25), at(60))
            .await
            .unwrap();
        ids(&found.items, |v| v.product_id)
    };
    assert!(!listed(s.supplier.id).await.contains(&s.product.id));
    assert!(listed(s.rival.id).await.contains(&s.product.id));
}

/// The supplier's variants: its products' only, by id, with title, supply price, exact
/// stock and pending quote; `updated_since` on the product's `updated_at`.
pub async fn supply_variants_are_the_suppliers_own(store: &dyn Store) {
    let s = supply(store, 250).await;
    let me = s.supplier.id;
    let q = quote(store, offer(me, s.v2.id, "5.00", 1), 10).await;
    let found = store
        .supply_variants(me, None, page(1, 25), at(20))
        .await
        .unwrap();
    assert_eq!(found.total, 2);
    let first = &found.items[0];
    assert_eq!((first.id, first.product_id), (s.v1.id, s.product.id));
    assert_eq!(first.product_title, "Supplied Fan");
    assert_eq!((first.label.as_str(), first.available), ("صغير", 250));
    assert_eq!(
        (first.supply_price, first.pending_quote_id),
        (s.v1.supply_price, None)
    );
    assert_eq!(found.items[1].id, s.v2.id);
    assert_eq!(found.items[1].pending_quote_id, Some(q.id));
    let second = store
        .supply_variants(me, None, page(2, 1), at(20))
        .await
        .unwrap();
    assert_eq!(
        (ids(&second.items, |v| v.id), second.total),
        (vec![s.v2.id], 2)
    );
    let rivals = store
        .supply_variants(s.rival.id, None, page(1, 25), at(20))
        .await
        .unwrap();
    assert_eq!(ids(&rivals.items, |v| v.id), vec![s.w.id]);
    let marketer = store
        .supply_variants(s.f.account.id, None, page(1, 25), at(20))
        .await
        .unwrap();
    assert_eq!((marketer.items.len(), marketer.total), (0, 0));
    let late = store
        .supply_variants(me, Some(at(25)), page(1, 25), at(30))
        .await
        .unwrap();
    assert_eq!(late.total, 0);
    store
        .decide_quote(None, q.id, QuoteDecision::Accept { note: None }, at(40))
        .await
        .unwrap();
    let since = store
        .supply_variants(me, Some(at(40)), page(1, 25), at(50))
        .await
        .unwrap();
    assert_eq!(
        ids(&since.items, |v| v.id),
        vec![s.v1.id, s.v2.id],
        "the product was bumped"
    );
    assert_eq!(since.items[1].available, 4);
}
