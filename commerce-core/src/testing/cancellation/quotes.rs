//! Quotes cut short: inserts, acceptances and withdrawals whose futures are dropped at random
//! points happen whole or not at all.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration as StdDuration;

use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};
use rust_decimal::Decimal;

use super::Cut;
use crate::model::*;
use crate::testing::http::Harness;

const TASKS: usize = 6;
const ROUNDS: usize = 40;

/// The supplier's variants with their `available` and `supply_price` now.
async fn supplier_variants(h: &Harness) -> Vec<SupplyVariant> {
    let page = PageRequest::new(1, 100).expect("a valid page");
    h.engine
        .store()
        .supply_variants(h.fixture.supplier, None, page, h.engine.now())
        .await
        .expect("supply variants")
        .items
}

/// Every quote of the supplier, as of now.
async fn all_quotes(h: &Harness) -> Vec<Quote> {
    let mut quotes = Vec::new();
    for page in 1.. {
        let request = PageRequest::new(page, 100).expect("a valid page");
        let found = h
            .engine
            .store()
            .quotes(
                h.fixture.supplier,
                &QuoteFilter::default(),
                request,
                h.engine.now(),
            )
            .await
            .expect("quotes");
        let done = found.items.len() < 100;
        quotes.extend(found.items);
        if done {
            break;
        }
    }
    quotes
}

/// Every stock adjustment of a variant.
async fn adjustments(h: &Harness, variant: VariantId) -> Vec<StockAdjustment> {
    let mut all = Vec::new();
    for page in 1.. {
        let request = PageRequest::new(page, 100).expect("a valid page");
        let found = h
            .engine
            .store()
            .stock_adjustments(variant, request)
            .await
            .expect("adjustments");
        let done = found.items.len() < 100;
        all.extend(found.items);
        if done {
            break;
        }
    }
    all
}

/// Quote inserts, acceptances (through the operator) and withdrawals from several tasks, a
/// share of each dropped at a random point: afterwards each variant's `available` is what it
/// was plus the quantities of the quotes accepted, each accepted quote has exactly one
/// `received` adjustment, no variant has two pending quotes, and the supplier's endpoints
/// answer.
pub async fn quote_writes_dropped_at_any_await_are_whole_or_nothing(h: &Harness) {
    let before = supplier_variants(h).await;
    assert!(!before.is_empty(), "the demo supplier owns variants");
    let initial: HashMap<VariantId, i64> = before.iter().map(|v| (v.id, v.available)).collect();
    // The seed's quotes were decided before the stock was read.
    let seeded: Vec<QuoteId> = all_quotes(h).await.iter().map(|q| q.id).collect();
    let variants: Arc<Vec<VariantId>> = Arc::new(before.iter().map(|v| v.id).collect());
    let h = Arc::new(h.clone_handle());
    let mut tasks = Vec::new();
    for _ in 0..TASKS {
        let (h, variants) = (h.clone(), variants.clone());
        tasks.push(tokio::spawn(async move {
            let mut rng = StdRng::from_rng(&mut rand::rng());
            let store = h.engine.store();
            let op = h.engine.operator();
            let max_delay = StdDuration::from_millis(3);
            for _ in 0..ROUNDS {
                let variant = variants[rng.random_range(0..variants.len())];
                let new = NewQuote::builder()
                    .account_id(h.fixture.supplier)
                    .variant_id(variant)
                    .unit_price(Decimal::new(rng.random_range(100..10_000), 2))
                    .quantity(rng.random_range(1..50))
                    .build();
                let cut = Cut::random(&mut rng, 6, max_delay);
                let made = cut.run(store.insert_quote(new, None, h.engine.now())).await;
                let Some(Ok(quote)) = made else { continue };
                let cut = Cut::random(&mut rng, 6, max_delay);
                if rng.random_bool(0.7) {
                    let _ = cut.run(op.accept_quote(quote.id, None)).await;
                } else {
                    let withdraw = QuoteDecision::Withdraw;
                    let account = Some(h.fixture.supplier);
                    let now = h.engine.now();
                    let _ = cut
                        .run(store.decide_quote(account, quote.id, withdraw, now))
                        .await;
                }
            }
        }));
    }
    for task in tasks {
        task.await.expect("task finished");
    }
    let quotes: Vec<Quote> = all_quotes(&h)
        .await
        .into_iter()
        .filter(|q| !seeded.contains(&q.id))
        .collect();
    let mut received: HashMap<VariantId, i64> = HashMap::new();
    let mut pending: HashMap<VariantId, usize> = HashMap::new();
    for quote in &quotes {
        match quote.status {
            QuoteStatus::Accepted => {
                *received.entry(quote.variant_id).or_default() += quote.quantity
            }
            QuoteStatus::Pending => *pending.entry(quote.variant_id).or_default() += 1,
            _ => {}
        }
    }
    assert!(pending.values().all(|n| *n <= 1), "{pending:?}");
    for variant in supplier_variants(&h).await {
        let expected = initial[&variant.id] + received.get(&variant.id).copied().unwrap_or(0);
        assert_eq!(variant.available, expected, "variant {}", variant.id);
        let history = adjustments(&h, variant.id).await;
        for quote in quotes.iter().filter(|q| q.variant_id == variant.id) {
            let kept = history
                .iter()
                .filter(|a| a.quote_id == Some(quote.id))
                .count();
            let wanted = usize::from(quote.status == QuoteStatus::Accepted);
            assert_eq!(
                kept, wanted,
                "adjustments of quote {} ({})",
                quote.id, quote.status
            );
        }
    }
    for path in ["/api/v1/quotes?per_page=100", "/api/v1/supply/variants"] {
        for _ in 0..8 {
            h.get("sk_demo_supplier", path).await.assert_ok(path);
        }
    }
}
