//! The operator's stock: adjustments by deltas, the compare-and-set of a count, and a
//! variant's history.

use crate::domain::fields::{MAX_NOTE, TextKind, clean_text};
use crate::domain::pieces::MAX_AVAILABLE;
use crate::model::*;

use super::{Operator, OperatorError, OperatorResult};

impl Operator {
    /// Moves a variant's stock by `new.delta` pieces (not zero) for its reason (not one of an
    /// order's moves, `reservation`, `release` and `restock`, nor `initial`: refused on
    /// `reason`), kept with its note and cause: an `order_id` that names no order is refused
    /// on `order_id`, a `quote_id` that names no quote of this variant (in any status) on
    /// `quote_id`, so the history never names a cause that is not one. A delta that would,
    /// with the pieces the variant's orders may still give back, take `available` past
    /// [`MAX_AVAILABLE`] is refused on `delta` ([`Problem::OutOfRange`] naming the bound)
    /// ([`CatalogStore::adjust_stock`](crate::store::CatalogStore::adjust_stock)).
    /// A delta that would take `available` below zero is refused on `delta`
    /// ([`Problem::StockShortfall`], naming the pieces missing), writing nothing; a
    /// compare-and-set ([`NewStockAdjustment::cycle_count`]) whose expected quantity is not the
    /// stock now is [`Conflict::StockChanged`](super::Conflict::StockChanged). The note is
    /// multi-line printable text of at most [`MAX_NOTE`] characters (blank: none).
    pub async fn adjust_stock(
        &self,
        mut new: NewStockAdjustment,
    ) -> OperatorResult<StockAdjustment> {
        if new.delta == 0 && new.expected_available.is_none() {
            return Err(OperatorError::field(
                "delta",
                Problem::OutOfRange {
                    min: -i64::from(i32::MAX),
                    max: -1,
                },
            ));
        }
        // An order's moves and a variant's first stock are the stores' to write.
        if new.reason.moves_with_an_order() || new.reason == StockReason::Initial {
            return Err(OperatorError::field("reason", Problem::UnknownValue));
        }
        if let Some(order) = new.order_id
            && self.store().order(None, order).await?.is_none()
        {
            return Err(OperatorError::field("order_id", Problem::UnknownValue));
        }
        if let Some(quote) = new.quote_id {
            let quoted = self.store().quote(None, quote, self.now()).await?;
            if quoted.is_none_or(|q| q.variant_id != new.variant_id) {
                return Err(OperatorError::field("quote_id", Problem::UnknownValue));
            }
        }
        if let Some(note) = &new.note {
            new.note = clean_text(note, MAX_NOTE, TextKind::MultiLine)
                .map_err(|problem| OperatorError::field("note", problem))?;
        }
        Ok(self.store().adjust_stock(new, self.now()).await?)
    }

    /// Sets a variant's stock to `new_available` pieces if it is `expected_available` (the
    /// quantity the caller last read) when written: a compare-and-set, kept as an adjustment
    /// of reason `cycle_count` with the delta between them. Stock that moved since (an order
    /// placed, another adjustment) is [`Conflict::StockChanged`](super::Conflict::StockChanged),
    /// writing nothing: a blind set would undo the reservations of orders placed in between.
    pub async fn set_stock(
        &self,
        variant: VariantId,
        expected_available: i64,
        new_available: i64,
        note: Option<&str>,
    ) -> OperatorResult<StockAdjustment> {
        if !(0..=MAX_AVAILABLE).contains(&new_available) {
            return Err(OperatorError::field(
                "available",
                Problem::OutOfRange {
                    min: 0,
                    max: MAX_AVAILABLE,
                },
            ));
        }
        let new = NewStockAdjustment::cycle_count(
            variant,
            expected_available,
            new_available,
            note.map(str::to_owned),
        );
        self.adjust_stock(new).await
    }

    /// A variant's stock adjustments, newest first, one page.
    pub async fn stock_adjustments(
        &self,
        variant: VariantId,
        page: PageRequest,
    ) -> OperatorResult<Page<StockAdjustment>> {
        Ok(self.store().stock_adjustments(variant, page).await?)
    }
}
