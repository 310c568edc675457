//! [`MeterStore`] for [`MemoryStore`]: products pulled and order operations per account and
//! month, in a [`MeterCounts`].

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
        self.lock().meter.record_pulls(account, month, products);
        Ok(())
    }

    async fn meter(
        &self,
        account: AccountId,
        month: &BillingMonth,
    ) -> Result<MeterReading, StoreError> {
        Ok(self.lock().meter.reading(account, month))
    }
}
