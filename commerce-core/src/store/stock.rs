//! Stock adjustments: the rule that decides one ([`NewStockAdjustment::decide`]), its refusals
//! ([`StockError`]), and the rule that turns a change of a line's outcome into returned pieces
//! ([`restock_delta`]).

use crate::model::{Family, LineId, LineOutcome, NewStockAdjustment, OrderStatus, VariantId};

use super::StoreError;

/// Why [`CatalogStore::adjust_stock`](super::CatalogStore::adjust_stock) changed nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StockError {
    /// No such variant.
    #[error("variant not found")]
    NotFound,
    /// The delta would take `available` below zero: `shortfall` pieces are missing.
    #[error("only {available} pieces available, {shortfall} short")]
    Insufficient {
        /// Pieces available now.
        available: i64,
        /// Pieces missing for the delta.
        shortfall: i64,
    },
    /// A compare-and-set ([`NewStockAdjustment::cycle_count`]) found another quantity than the
    /// one the caller read: stock moved since (an order, another adjustment).
    #[error("available is {available}, not the expected {expected}")]
    Conflict {
        /// The quantity the caller expected.
        expected: i64,
        /// The quantity now.
        available: i64,
    },
    /// The storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

impl NewStockAdjustment {
    /// The rule of [`CatalogStore::adjust_stock`](super::CatalogStore::adjust_stock), applied
    /// to the variant's `available` read under the operation's lock: `available` after the
    /// adjustment, or the refusal (a compare-and-set whose expected quantity is not
    /// `available`: [`StockError::Conflict`]; a result below zero:
    /// [`StockError::Insufficient`]).
    pub fn decide(&self, available: i64) -> Result<i64, StockError> {
        if let Some(expected) = self.expected_available
            && expected != available
        {
            return Err(StockError::Conflict {
                expected,
                available,
            });
        }
        let after = available.saturating_add(self.delta);
        if after < 0 {
            return Err(StockError::Insufficient {
                available,
                shortfall: -after,
            });
        }
        Ok(after)
    }
}

/// The pieces of a line that go back to stock when its outcome changes from `previous` to
/// `next`: the returned pieces newly recorded (`next`'s `returned_quantity` minus
/// `previous`'s; negative when a correction returns fewer). Damaged, lost and destroyed pieces
/// never come back. A store applies it in the same atomic operation as the outcome's change
/// (a status move with outcomes, or [`set_line_outcomes`](super::OrderStore::set_line_outcomes)),
/// as an adjustment of reason `restock` naming the order, through [`restock_within`]; a repeated
/// identical outcome moves nothing.
pub fn restock_delta(previous: &LineOutcome, next: &LineOutcome) -> i64 {
    next.returned_quantity.unwrap_or(0) - previous.returned_quantity.unwrap_or(0)
}

/// Whether returned pieces of an order whose timeline holds `statuses` (after the write,
/// the move's status included) go back to stock: only once its pieces left the warehouse
/// (shipped, delivered or returned), and never for an order that entered the cancelled family
/// (it gave all its pieces back then; a cancelled order never shipped).
pub fn restocks_returns(statuses: impl IntoIterator<Item = OrderStatus>) -> bool {
    let mut left = false;
    for status in statuses {
        match status.family() {
            Family::Cancelled => return false,
            Family::Shipping | Family::Delivered | Family::Returned => left = true,
            _ => {}
        }
    }
    left
}

/// The pieces that go back to stock when `outcomes` are recorded on the lines of an order
/// whose timeline holds `statuses` after the write (see [`restocks_returns`]) and whose lines
/// are `lines` (each line's id, variant and outcome before the write): per variant (by id,
/// the order a store locks them in), the sum of the lines' [`restock_delta`], variants whose
/// sum is zero left out.
pub fn restocks<'a>(
    statuses: impl IntoIterator<Item = OrderStatus>,
    lines: impl IntoIterator<Item = (LineId, VariantId, &'a LineOutcome)>,
    outcomes: &[(LineId, LineOutcome)],
) -> Vec<(VariantId, i64)> {
    let mut by_variant: std::collections::BTreeMap<VariantId, i64> = Default::default();
    if outcomes.is_empty() || !restocks_returns(statuses) {
        return Vec::new();
    }
    for (line, variant, previous) in lines {
        // The last outcome named for a line is the one written.
        if let Some((_, next)) = outcomes.iter().rev().find(|(id, _)| *id == line) {
            *by_variant.entry(variant).or_default() += restock_delta(previous, next);
        }
    }
    by_variant.into_iter().filter(|(_, by)| *by != 0).collect()
}

/// The restock a store applies for a line's [`restock_delta`] of `delta` on a variant with
/// `available` pieces now: `delta` itself, except that a negative one (a correction returning
/// fewer pieces than recorded before) takes at most what is available. Those pieces may have
/// been ordered since they came back; stock never goes below zero, and the rest is the
/// platform's to settle (a `correction` adjustment once it knows).
pub fn restock_within(delta: i64, available: i64) -> i64 {
    delta.max(-available.max(0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{StockReason, VariantId};

    #[test]
    fn a_delta_never_takes_stock_below_zero_and_a_set_compares_first() {
        let take = NewStockAdjustment::new(VariantId::new(1), -5, StockReason::Damaged);
        assert_eq!(take.decide(5).unwrap(), 0);
        assert!(matches!(
            take.decide(3),
            Err(StockError::Insufficient {
                available: 3,
                shortfall: 2
            })
        ));
        let count = NewStockAdjustment::cycle_count(VariantId::new(1), 10, 4);
        assert_eq!(count.delta, -6);
        assert_eq!(count.decide(10).unwrap(), 4);
        assert!(matches!(
            count.decide(9),
            Err(StockError::Conflict {
                expected: 10,
                available: 9
            })
        ));
    }

    #[test]
    fn only_newly_returned_pieces_come_back() {
        let none = LineOutcome::default();
        let two = LineOutcome::partly_delivered(1, 2);
        assert_eq!(restock_delta(&none, &two), 2);
        assert_eq!(restock_delta(&two, &two), 0);
        let one = LineOutcome::partly_delivered(2, 1);
        assert_eq!(restock_delta(&two, &one), -1);
        let damaged = LineOutcome {
            damaged_quantity: 3,
            ..LineOutcome::default()
        };
        assert_eq!(restock_delta(&none, &damaged), 0);
        assert_eq!(restock_within(-3, 1), -1);
        use OrderStatus::*;
        assert!(!restocks_returns([Pending, Confirmed]));
        assert!(restocks_returns([Pending, Confirmed, Shipped, Returned]));
        assert!(restocks_returns([Delivered]));
        assert!(!restocks_returns([Pending, Cancelled, Archived]));
        assert_eq!(restock_within(2, 0), 2);
    }
}
