//! Stock adjustments of [`MemoryStore`](super::MemoryStore): applied to the locked state, so
//! that any operation holding the lock (an adjustment of its own, an order's returned pieces,
//! a quote's received pieces) applies one in its own atomic operation.

use chrono::{DateTime, Utc};

use super::State;
use crate::domain::earnings::Withdrawn;
use crate::domain::pieces::{StockMove, held_by_orders};
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
        let held = held_by_orders(self.adjustments.get(&new.variant_id).into_iter().flatten());
        let variant = self
            .variant_mut(new.variant_id)
            .ok_or(StockError::NotFound)?;
        let after = new.decide(variant.available, held)?;
        variant.available = after;
        let product = variant.product_id;
        self.stamp_product(product, now)?;
        let id = StockAdjustmentId::new(self.next_id("stock_adjustments"));
        let adjustment = new.into_adjustment(id, after, now);
        self.adjustments
            .entry(adjustment.variant_id)
            .or_default()
            .push(adjustment.clone());
        Ok(adjustment)
    }

    /// The refusals of a write of `before` into `after` ([`Order::check_write`]) against the
    /// locked state: the stock it moves, to apply once everything is checked.
    pub(super) fn check_order_write(
        &self,
        before: &Order,
        after: &Order,
    ) -> Result<Vec<StockMove>, StoreError> {
        let account = before.account_id;
        let settled = || {
            self.orders_by_account
                .get(&account)
                .map(|index| index.wallet.totals(DateTime::<Utc>::MAX_UTC).totals.settled)
                .unwrap_or_default()
        };
        let withdrawn = || Withdrawn::of(self.withdrawals_of(account));
        before.check_write(after, settled, withdrawn, |v| {
            self.variant(v).map(|v| v.available)
        })
    }

    /// Applies the stock an order's write moves, checked by
    /// [`check_order_write`](Self::check_order_write):
    /// each move kept in its variant's history naming `order`, the products stamped.
    pub(super) fn apply_order_stock(
        &mut self,
        order: OrderId,
        moves: Vec<StockMove>,
        now: DateTime<Utc>,
    ) {
        for m in moves {
            let Some(variant) = self.variant_mut(m.variant_id) else {
                continue;
            };
            variant.available += m.delta;
            let after = variant.available;
            let product = variant.product_id;
            // A variant's owner is always there: nothing to stamp otherwise.
            let _ = self.stamp_product(product, now);
            let id = StockAdjustmentId::new(self.next_id("stock_adjustments"));
            let kept = NewStockAdjustment::new(m.variant_id, m.delta, m.reason)
                .for_order(order)
                .into_adjustment(id, after, now);
            self.adjustments.entry(m.variant_id).or_default().push(kept);
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
        Page::of_items(kept.iter().rev(), page).cloned()
    }
}
