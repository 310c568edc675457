//! Stock adjustments: the rule that decides one ([`NewStockAdjustment::decide`]) and its
//! refusals ([`StockError`]). What an order's write moves is
//! [`stock_moves`](crate::domain::pieces::stock_moves).

use crate::domain::pieces::MAX_AVAILABLE;
use crate::model::NewStockAdjustment;

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
        // In i128: no delta, however large, wraps or saturates into a wrong answer.
        let after = i128::from(available) + i128::from(self.delta);
        if after < 0 {
            return Err(StockError::Insufficient {
                available,
                shortfall: i64::try_from(-after).unwrap_or(i64::MAX),
            });
        }
        if after > i128::from(MAX_AVAILABLE) {
            return Err(StockError::AboveMaximum {
                available,
                max: MAX_AVAILABLE,
            });
        }
        // Within 0..=MAX_AVAILABLE, so the sum did not overflow.
        Ok(available + self.delta)
    }
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
        let past_the_top = NewStockAdjustment::new(VariantId::new(1), i64::MAX, StockReason::Other);
        assert!(matches!(
            past_the_top.decide(1),
            Err(StockError::AboveMaximum {
                available: 1,
                max: MAX_AVAILABLE
            })
        ));
        let past_the_bottom =
            NewStockAdjustment::new(VariantId::new(1), i64::MIN, StockReason::Other);
        assert!(matches!(
            past_the_bottom.decide(0),
            Err(StockError::Insufficient {
                available: 0,
                shortfall: i64::MAX
            })
        ));
        assert!(matches!(
            count.decide(9),
            Err(StockError::Conflict {
                expected: 10,
                available: 9
            })
        ));
    }
}
