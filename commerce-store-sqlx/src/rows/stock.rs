//! Rows of stock adjustments.

use commerce_core::model::*;
use commerce_core::store::StoreError;

use super::*;

/// The columns of `stock_adjustments`, in the order of [`AdjustmentRow`].
macro_rules! adjustment_cols {
    () => {
        "id, variant_id, delta, reason, note, order_id, quote_id, available_after, at"
    };
}

db_row! {
    pub(crate) struct AdjustmentRow {
        id: i64,
        variant_id: i64,
        delta: i64,
        reason: String,
        note: Option<String>,
        order_id: Option<i64>,
        quote_id: Option<i64>,
        available_after: i64,
        at: i64,
    }
}

db_row! {
    /// An adjustment of a page, with the number of the variant's adjustments.
    pub(crate) struct PagedAdjustmentRow {
        @flatten pub(crate) row: AdjustmentRow,
        pub(crate) total: i64,
    }
}

impl AdjustmentRow {
    pub(crate) fn into_domain(self) -> Result<StockAdjustment, StoreError> {
        let reason = StockReason::parse(&self.reason)
            .ok_or_else(|| corrupt(format!("stock reason {}", self.reason)))?;
        Ok(StockAdjustment::builder()
            .id(StockAdjustmentId::new(self.id))
            .variant_id(VariantId::new(self.variant_id))
            .delta(self.delta)
            .reason(reason)
            .maybe_note(self.note)
            .maybe_order_id(self.order_id.map(OrderId::new))
            .maybe_quote_id(self.quote_id.map(QuoteId::new))
            .available_after(self.available_after)
            .at(instant(self.at))
            .build())
    }
}
pub(crate) use adjustment_cols;
