//! The variants' stock in [`CatalogTables`]: adjustments (of their own, an order's moves, a
//! quote's received pieces), each kept in its variant's history, and the history's pages.

use chrono::{DateTime, Utc};

use super::{CatalogTables, next};
use crate::domain::pieces::{MAX_AVAILABLE, StockMove, held_by_orders};
use crate::model::*;
use crate::store::{QuoteDecisionError, StockError, StoreError};

impl CatalogTables {
    /// [`CatalogStore::adjust_stock`](crate::store::CatalogStore::adjust_stock): the rule
    /// ([`NewStockAdjustment::decide`], against the stock now and what orders hold) first,
    /// then `available`, the kept adjustment and the product's `updated_at`; a refusal writes
    /// nothing.
    pub fn adjust_stock(
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
        self.stamp(product, now)?;
        let id = StockAdjustmentId::new(next(&mut self.last.stock_adjustments));
        let adjustment = new.into_adjustment(id, after, now);
        self.adjustments
            .entry(adjustment.variant_id)
            .or_default()
            .push(adjustment.clone());
        Ok(adjustment)
    }

    /// Applies the stock an order's write moves, checked by the caller
    /// ([`NewOrder::check_placement`], [`Order::check_write`] against
    /// [`variant`](Self::variant)): each move kept in its variant's history naming `order`,
    /// the products stamped. A move of a variant that does not exist is skipped. It checks
    /// nothing itself (a move the caller did not check trips a debug assertion).
    pub fn move_order_stock(&mut self, order: OrderId, moves: Vec<StockMove>, now: DateTime<Utc>) {
        for m in moves {
            let Some(variant) = self.variant_mut(m.variant_id) else {
                continue;
            };
            variant.available += m.delta;
            let after = variant.available;
            debug_assert!(
                (0..=MAX_AVAILABLE).contains(&after),
                "an order's stock move its caller did not check: {m:?}"
            );
            let product = variant.product_id;
            // A variant's owner is always there: nothing to stamp otherwise.
            let _ = self.stamp(product, now);
            let id = StockAdjustmentId::new(next(&mut self.last.stock_adjustments));
            let kept = NewStockAdjustment::builder()
                .variant_id(m.variant_id)
                .delta(m.delta)
                .reason(m.reason)
                .order_id(order)
                .build()
                .into_adjustment(id, after, now);
            self.adjustments.entry(m.variant_id).or_default().push(kept);
        }
    }

    /// Accepting `quote` ([`SupplyStore::decide_quote`](crate::store::SupplyStore::decide_quote)):
    /// the pieces received, then the variant's supply price and its product's revision. The
    /// pieces first: their refusal (above
    /// [`MAX_AVAILABLE`](crate::domain::pieces::MAX_AVAILABLE), or no such variant) writes
    /// nothing, and nothing after them can refuse.
    pub fn receive(&mut self, quote: &Quote, now: DateTime<Utc>) -> Result<(), QuoteDecisionError> {
        let adjustment = quote.received_pieces();
        self.adjust_stock(adjustment, now)?;
        let variant = self
            .variant_mut(quote.variant_id)
            .ok_or(QuoteDecisionError::Store(StoreError::NotFound))?;
        variant.supply_price = quote.unit_price;
        let product = variant.product_id;
        self.product_mut(product)?.revision += 1;
        Ok(())
    }

    /// [`CatalogStore::stock_adjustments`](crate::store::CatalogStore::stock_adjustments): a
    /// variant's adjustments, newest first, one page.
    pub fn stock_adjustments(
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
