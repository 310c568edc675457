//! Stock adjustments: the rule that decides one ([`NewStockAdjustment::decide`]) and its
//! refusals ([`StockError`]). What an order's write moves is
//! [`stock_moves`](crate::domain::pieces::stock_moves).

use crate::domain::pieces::MAX_AVAILABLE;
use crate::model::{NewStockAdjustment, StockAdjustment};

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
    /// The delta would take `available` above [`MAX_AVAILABLE`] pieces.
    #[error("{available} pieces available: at most {max} may be")]
    AboveMaximum {
        /// Pieces available now.
        available: i64,
        /// The most a variant may hold ([`MAX_AVAILABLE`]).
        max: i64,
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
    /// to the variant's `available` read under the operation's lock and the pieces its orders
    /// `held` (reserved and not given back: [`held_by_orders`]): `available` after the
    /// adjustment, or the refusal (a compare-and-set whose expected quantity is not
    /// `available`: [`StockError::Conflict`]; a result below zero:
    /// [`StockError::Insufficient`]; a result that, with the pieces the orders may still give
    /// back, would pass [`MAX_AVAILABLE`]: [`StockError::AboveMaximum`]). So `available` never
    /// passes the bound, whatever is released or restocked later.
    pub fn decide(&self, available: i64, held: i64) -> Result<i64, StockError> {
        if let Some(expected) = self.expected_available
            && expected != available
        {
            return Err(StockError::Conflict {
                expected,
                available,
            });
        }
        // In i128: no delta, however large, wraps or saturates into a wrong answer.
        let after = i128::from(available) + i128::from(self.delta);
        if after < 0 {
            return Err(StockError::Insufficient {
                available,
                shortfall: i64::try_from(-after).unwrap_or(i64::MAX),
            });
        }
        let max = MAX_AVAILABLE.saturating_sub(held.max(0));
        if self.delta > 0 && after > i128::from(max) {
            return Err(StockError::AboveMaximum { available, max });
        }
        // Within 0..=available or 0..=MAX_AVAILABLE, so the sum did not overflow.
        Ok(available + self.delta)
    }
}

/// The pieces of a variant that its orders hold and may still give back (by a release or a
/// restock), from its history: the negated sum of its `reservation`, `release` and `restock`
/// entries.
pub fn held_by_orders<'a>(history: impl IntoIterator<Item = &'a StockAdjustment>) -> i64 {
    -history
        .into_iter()
        .filter(|a| a.reason.moves_with_an_order())
        .map(|a| a.delta)
        .sum::<i64>()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{StockReason, VariantId};

    #[test]
    fn a_delta_never_takes_stock_below_zero_and_a_set_compares_first() {
        let take = NewStockAdjustment::new(VariantId::new(1), -5, StockReason::Damaged);
        assert_eq!(take.decide(5, 0).unwrap(), 0);
        assert!(matches!(
            take.decide(3, 0),
            Err(StockError::Insufficient {
                available: 3,
                shortfall: 2
            })
        ));
        let count = NewStockAdjustment::cycle_count(VariantId::new(1), 10, 4);
        assert_eq!(count.delta, -6);
        assert_eq!(count.decide(10, 0).unwrap(), 4);
        let past_the_top = NewStockAdjustment::new(VariantId::new(1), i64::MAX, StockReason::Other);
        assert!(matches!(
            past_the_top.decide(1, 0),
            Err(StockError::AboveMaximum {
                available: 1,
                max: MAX_AVAILABLE
            })
        ));
        let past_the_bottom =
            NewStockAdjustment::new(VariantId::new(1), i64::MIN, StockReason::Other);
        assert!(matches!(
            past_the_bottom.decide(0, 0),
            Err(StockError::Insufficient {
                available: 0,
                shortfall: i64::MAX
            })
        ));
        // Pieces the orders hold count against the bound.
        let in_bound = NewStockAdjustment::new(VariantId::new(1), 10, StockReason::Received);
        assert!(matches!(
            in_bound.decide(MAX_AVAILABLE - 15, 6),
            Err(StockError::AboveMaximum { max, .. }) if max == MAX_AVAILABLE - 6
        ));
        assert_eq!(
            in_bound.decide(MAX_AVAILABLE - 15, 5).unwrap(),
            MAX_AVAILABLE - 5
        );
        assert_eq!(
            in_bound.decide(MAX_AVAILABLE - 15, 0).unwrap(),
            MAX_AVAILABLE - 5
        );
        assert!(matches!(
            count.decide(9, 0),
            Err(StockError::Conflict {
                expected: 10,
                available: 9
            })
        ));
    }
}
