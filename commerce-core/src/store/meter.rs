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

/// The meter of a backend that keeps it in process memory, with the operations of
/// [`MeterStore`] and the order operations the order writes count (the caller holds its lock
/// across each call, the same lock as its orders').
#[derive(Debug, Default)]
pub struct MeterCounts {
    /// Every product pulled, per account and month.
    pulls: std::collections::HashSet<(AccountId, BillingMonth, ProductId)>,
    /// How many distinct products each account pulled in each month.
    pulled: std::collections::HashMap<(AccountId, BillingMonth), u64>,
    /// How many order operations each account was billed in each month.
    operations: std::collections::HashMap<(AccountId, BillingMonth), u64>,
}

impl MeterCounts {
    /// [`MeterStore::record_pulls`]: each product counts once per account and month.
    pub fn record_pulls(
        &mut self,
        account: AccountId,
        month: &BillingMonth,
        products: &[ProductId],
    ) {
        for product in products {
            if self.pulls.insert((account, month.clone(), *product)) {
                *self.pulled.entry((account, month.clone())).or_default() += 1;
            }
        }
    }

    /// Counts one order operation of `account` in `month` (nothing when an order write is not
    /// billed: `None`).
    pub fn bill_order_operation(&mut self, account: AccountId, month: Option<&BillingMonth>) {
        if let Some(month) = month {
            *self.operations.entry((account, month.clone())).or_default() += 1;
        }
    }

    /// [`MeterStore::meter`]: zeros when nothing was recorded.
    pub fn reading(&self, account: AccountId, month: &BillingMonth) -> MeterReading {
        let key = (account, month.clone());
        let count = |counts: &std::collections::HashMap<_, u64>| counts.get(&key).copied();
        MeterReading::new(
            count(&self.pulled).unwrap_or(0),
            count(&self.operations).unwrap_or(0),
        )
    }
}
