//! [`IdempotencyStore`] for [`MemoryStore`]: the records behind `Idempotency-Key`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::MemoryStore;
use crate::model::*;
use crate::store::*;

#[async_trait]
impl IdempotencyStore for MemoryStore {
    async fn begin_idempotent(
        &self,
        claim: &IdempotencyClaim,
        fingerprint: &str,
        now: DateTime<Utc>,
        expires_before: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> Result<IdempotencyBegin, StoreError> {
        let mut s = self.lock();
        Ok(s.idempotency
            .begin(claim, fingerprint, now, expires_before, stale_before))
    }

    async fn finish_idempotent(
        &self,
        claim: &IdempotencyClaim,
        response: StoredResponse,
    ) -> Result<(), StoreError> {
        self.lock().idempotency.finish(claim, response)
    }

    async fn abandon_idempotent(&self, claim: &IdempotencyClaim) -> Result<(), StoreError> {
        self.lock().idempotency.abandon(claim);
        Ok(())
    }

    async fn purge_idempotency(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        Ok(self.lock().idempotency.purge(before))
    }
}
