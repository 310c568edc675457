//! The billing meter.

use async_trait::async_trait;

use super::StoreError;
use crate::model::*;

/// The billing meter: products pulled and order operations per account and month.
#[async_trait]
pub trait MeterStore: Send + Sync {
    /// Records products pulled by an account in a month: each product counts once per account
    /// and month, however often it is recorded (concurrently too).
    async fn record_pulls(
        &self,
        account: AccountId,
        month: &str,
        products: &[ProductId],
    ) -> Result<(), StoreError>;
    /// What the meter holds for an account and month (`YYYY-MM`, Cairo time).
    async fn meter(&self, account: AccountId, month: &str) -> Result<MeterReading, StoreError>;
}
