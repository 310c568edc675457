//! Stock adjustments' refusals ([`StockError`]); the rule that decides one is
//! [`NewStockAdjustment::decide`](crate::model::NewStockAdjustment::decide). What an order's write moves is
//! [`stock_moves`](crate::domain::pieces::stock_moves).

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
    /// The delta would take `available` above [`MAX_AVAILABLE`](crate::domain::pieces::MAX_AVAILABLE) pieces.
    #[error("{available} pieces available: at most {max} may be")]
    AboveMaximum {
        /// Pieces available now.
        available: i64,
        /// The most a variant may hold ([`MAX_AVAILABLE`](crate::domain::pieces::MAX_AVAILABLE)).
        max: i64,
    },
    /// A compare-and-set ([`NewStockAdjustment::cycle_count`](crate::model::NewStockAdjustment::cycle_count)) found another quantity than the
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
