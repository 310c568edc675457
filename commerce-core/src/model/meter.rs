//! What the billing meter holds.

/// What the billing meter holds for an account and month.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MeterReading {
    /// Distinct products pulled.
    pub pulled_products: u64,
    /// Order operations executed.
    pub order_operations: u64,
}
