//! The demo supplier's quotes: one `rejected`, one `accepted`, one `pending`, made and decided
//! as a supplier and the platform would (the accepted one received its pieces into stock).

use chrono::Duration;
use rust_decimal::Decimal;

use crate::engine::Engine;
use crate::model::*;
use crate::operator::OperatorError;
use crate::store::StoreError;

/// The quotes, on the supplier's variants (none when it owns none): `[pending, accepted,
/// rejected]`. The accepted one avoids `busy` (variants the seed's tests count on) when it can.
pub(super) async fn seed(
    engine: &Engine,
    supplier: AccountId,
    busy: &[VariantId],
) -> Result<Vec<QuoteId>, OperatorError> {
    let store = engine.store();
    let op = engine.operator();
    let page = const { PageRequest::new(1, 100).expect("a valid page") };
    let variants: Vec<VariantId> = store
        .supply_variants(supplier, None, page, engine.now())
        .await?
        .items
        .iter()
        .map(|v| v.id)
        .collect();
    let (Some(&first), Some(&last)) = (variants.first(), variants.last()) else {
        return Ok(Vec::new());
    };
    let received = variants
        .iter()
        .copied()
        .find(|v| !busy.contains(v))
        .unwrap_or(last);
    let offer = |variant: VariantId, price: i64, quantity: i64, note: &str| {
        let now = engine.now();
        NewQuote::builder()
            .account_id(supplier)
            .variant_id(variant)
            .unit_price(Decimal::new(price, 2))
            .quantity(quantity)
            .valid_until(now + Duration::days(30))
            .note(note.to_owned())
            .build()
    };
    let insert = |new: NewQuote| async move {
        store
            .insert_quote(new, None, engine.now())
            .await
            .map_err(|error| OperatorError::Store(StoreError::Invalid(error.to_string())))
    };
    let rejected = insert(offer(first, 9_000, 50, "دفعة تجريبية")).await?;
    op.reject_quote(rejected.id, Some("السعر أعلى من السوق".into()))
        .await?;
    let accepted = insert(offer(received, 3_500, 20, "دفعة الشهر")).await?;
    op.accept_quote(accepted.id, Some("تم الاستلام".into()))
        .await?;
    let pending = insert(offer(first, 3_250, 100, "دفعة جاية")).await?;
    Ok(vec![pending.id, accepted.id, rejected.id])
}
