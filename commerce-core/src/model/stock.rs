//! Stock adjustments: a variant's `available` moves by deltas, never by a blind set, and each
//! change is kept with its cause (the reason, and the order or quote that caused it).

use chrono::{DateTime, Utc};

use super::*;

string_enum! {
    /// Why a variant's stock moved (Shopify's names for inventory adjustments).
    StockReason {
        /// A variant's stock when it was created.
        Initial => "initial",
        /// Pieces taken by an order when it was placed (naming the order).
        Reservation => "reservation",
        /// Pieces an order gave back when it was cancelled (naming the order).
        Release => "release",
        /// Pieces received from a supplier (an accepted quote, a delivery).
        Received => "received",
        /// Pieces back from customers (returned pieces of an order).
        Restock => "restock",
        /// A correction of an earlier mistake.
        Correction => "correction",
        /// A count of the shelf: the set of a new quantity on the one last read.
        CycleCount => "cycle_count",
        /// Pieces found damaged.
        Damaged => "damaged",
        /// Pieces lost or stolen.
        Shrinkage => "shrinkage",
        /// Anything else (say why in the note).
        Other => "other",
    }
}

impl StockReason {
    /// Whether entries of this reason are an order's moves (its reservation, release and
    /// restocks), written by the stores with each order's write and never by the operator.
    pub fn moves_with_an_order(self) -> bool {
        matches!(
            self,
            StockReason::Reservation | StockReason::Release | StockReason::Restock
        )
    }
}

/// One change of a variant's `available`, as kept ([`CatalogStore::adjust_stock`]).
///
/// [`CatalogStore::adjust_stock`]: crate::store::CatalogStore::adjust_stock
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct StockAdjustment {
    /// Id (increasing in the order the adjustments were applied).
    pub id: StockAdjustmentId,
    /// The variant.
    pub variant_id: VariantId,
    /// Pieces added (negative: taken away).
    pub delta: i64,
    /// Why.
    pub reason: StockReason,
    /// A note of the operator.
    pub note: Option<String>,
    /// The order that caused it (returned pieces).
    pub order_id: Option<OrderId>,
    /// The quote that caused it (pieces received).
    pub quote_id: Option<QuoteId>,
    /// The variant's `available` after it.
    pub available_after: i64,
    /// When.
    pub at: DateTime<Utc>,
}

/// A stock adjustment to apply: `NewStockAdjustment::builder()` (a delta, with the variant,
/// the delta and the reason) or [`NewStockAdjustment::cycle_count`] (a compare-and-set).
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct NewStockAdjustment {
    /// The variant.
    pub variant_id: VariantId,
    /// Pieces added (negative: taken away).
    pub delta: i64,
    /// Why.
    pub reason: StockReason,
    /// A note.
    pub note: Option<String>,
    /// The order that caused it.
    pub order_id: Option<OrderId>,
    /// The quote that caused it.
    pub quote_id: Option<QuoteId>,
    /// Applied only when the variant's `available` is exactly this at write time (a
    /// compare-and-set: the quantity the caller last read); `None` for a plain delta. The
    /// builder has no setter for it: [`cycle_count`](Self::cycle_count) makes one, with a
    /// delta that agrees with it.
    #[builder(skip)]
    pub expected_available: Option<i64>,
}

impl NewStockAdjustment {
    /// A count of the shelf: `available` becomes `new` if it is `expected` (the quantity the
    /// caller last read) when written; reason [`StockReason::CycleCount`], delta
    /// `new - expected`, with the operator's `note` if any.
    pub fn cycle_count(
        variant_id: VariantId,
        expected: i64,
        new: i64,
        note: Option<String>,
    ) -> Self {
        Self {
            variant_id,
            delta: new.saturating_sub(expected),
            reason: StockReason::CycleCount,
            note,
            order_id: None,
            quote_id: None,
            expected_available: Some(expected),
        }
    }

    /// The adjustment as kept with `id`, leaving `available_after` pieces, at `at`.
    pub fn into_adjustment(
        self,
        id: StockAdjustmentId,
        available_after: i64,
        at: DateTime<Utc>,
    ) -> StockAdjustment {
        StockAdjustment {
            id,
            variant_id: self.variant_id,
            delta: self.delta,
            reason: self.reason,
            note: self.note,
            order_id: self.order_id,
            quote_id: self.quote_id,
            available_after,
            at,
        }
    }
}
