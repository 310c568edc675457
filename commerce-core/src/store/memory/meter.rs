//! [`MeterStore`] for [`MemoryStore`]: products pulled and order operations per account and month.

use async_trait::async_trait;

use super::MemoryStore;
use crate::model::*;
use crate::store::*;

#[async_trait]
impl MeterStore for MemoryStore {
    async fn record_pulls(
        &self,
        account: AccountId,
        month: &BillingMonth,
        products: &[ProductId],
    ) -> Result<(), StoreError> {
        let mut s = self.lock();
        for product in products {
            if s.pulls.insert((account, month.clone(), *product)) {
                *s.pull_counts.entry((account, month.clone())).or_default() += 1;
            }
        }
        Ok(())
    }

    async fn meter(
        &self,
        account: AccountId,
        month: &BillingMonth,
    ) -> Result<MeterReading, StoreError> {
        let s = self.lock();
        let key = (account, month.clone());
        Ok(MeterReading {
            pulled_products: s.pull_counts.get(&key).copied().unwrap_or(0),
            order_operations: s.order_operations.get(&key).copied().unwrap_or(0),
        })
    }
}
