//! The billing meter.

use async_trait::async_trait;

use super::StoreError;
use crate::model::*;

/// The billing meter: products pulled and order operations per account and month.
///
/// Order operations are not counted through this trait: [`OrderStore::place_order`] and
/// [`OrderStore::change_order_status`] count one (when their `bill_month` is set) in their own
/// atomic operation, so that an order and its bill stand or fall together; the meter lives in
/// the same backend as orders.
///
/// [`OrderStore::place_order`]: super::OrderStore::place_order
/// [`OrderStore::change_order_status`]: super::OrderStore::change_order_status
#[async_trait]
pub trait MeterStore: Send + Sync {
    /// Records products pulled by an account in a month: each product counts once per account
    /// and month, however often it is recorded (concurrently too). One atomic write: every
    /// product of the call recorded or none, those recorded before skipped by the insert
    /// itself.
    async fn record_pulls(
        &self,
        account: AccountId,
        month: &BillingMonth,
        products: &[ProductId],
    ) -> Result<(), StoreError>;
    /// What the meter holds for an account and month: the distinct
    /// products recorded by [`record_pulls`](Self::record_pulls) and the order operations the
    /// order writes counted; zeros when nothing was recorded. One read: both figures from one
    /// snapshot.
    async fn meter(
        &self,
        account: AccountId,
        month: &BillingMonth,
    ) -> Result<MeterReading, StoreError>;
}
