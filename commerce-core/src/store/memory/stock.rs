//! Stock adjustments of [`MemoryStore`](super::MemoryStore): applied to the locked state, so
//! that any operation holding the lock (an adjustment of its own, an order's returned pieces,
//! a quote's received pieces) applies one in its own atomic operation.

use chrono::{DateTime, Utc};

use super::State;
use crate::model::*;
use crate::store::*;

impl State {
    /// Applies one stock adjustment to the locked state ([`CatalogStore::adjust_stock`]): the
    /// rule ([`NewStockAdjustment::decide`]) first, then `available`, the kept adjustment and
    /// the product's `updated_at`; a refusal writes nothing.
    pub(super) fn apply_stock_adjustment(
        &mut self,
        new: NewStockAdjustment,
        now: DateTime<Utc>,
    ) -> Result<StockAdjustment, StockError> {
        let variant = self
            .variant_mut(new.variant_id)
            .ok_or(StockError::NotFound)?;
        let after = new.decide(variant.available)?;
        variant.available = after;
        let product = variant.product_id;
        let owner = self.product_mut(product)?;
        owner.updated_at = next_updated_at(owner.updated_at, now);
        let id = StockAdjustmentId::new(self.next_id("stock_adjustments"));
        let adjustment = new.into_adjustment(id, after, now);
        self.adjustments
            .entry(adjustment.variant_id)
            .or_default()
            .push(adjustment.clone());
        Ok(adjustment)
    }

    /// Gives back the pieces that `outcomes` record as returned on `order`, called before they
    /// are written (the stored order's lines and timeline, plus `moving_to` when the write is
    /// a move): one `restock` adjustment per variant ([`restocks`]), a negative one
    /// taking at most what is available ([`restock_within`]).
    pub(super) fn restock_returned(
        &mut self,
        order: OrderId,
        moving_to: Option<OrderStatus>,
        outcomes: &[(LineId, LineOutcome)],
        now: DateTime<Utc>,
    ) {
        let Some(stored) = self.orders.get(&order) else {
            return;
        };
        let statuses = stored.timeline.iter().map(|t| t.status).chain(moving_to);
        let lines = stored
            .lines
            .iter()
            .map(|l| (l.id, l.variant_id, &l.outcome));
        for (variant, by) in restocks(statuses, lines, outcomes) {
            let Some(available) = self.variant_mut(variant).map(|v| v.available) else {
                continue;
            };
            let by = restock_within(by, available);
            if by != 0 {
                let new =
                    NewStockAdjustment::new(variant, by, StockReason::Restock).for_order(order);
                // Within the available pieces: the rule cannot refuse it.
                let _ = self.apply_stock_adjustment(new, now);
            }
        }
    }

    /// A variant's adjustments, newest first, one page.
    pub(super) fn stock_adjustments(
        &self,
        variant: VariantId,
        page: PageRequest,
    ) -> Page<StockAdjustment> {
        let kept = self
            .adjustments
            .get(&variant)
            .map(Vec::as_slice)
            .unwrap_or_default();
        super::paginate(kept.iter().rev(), page)
    }
}
