//! [`WithdrawalStore`] for [`MemoryStore`]: withdrawal requests and their decisions.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::MemoryStore;
use crate::earnings::Withdrawn;
use crate::model::*;
use crate::store::*;

#[async_trait]
impl WithdrawalStore for MemoryStore {
    async fn request_withdrawal(
        &self,
        new: NewWithdrawal,
        held_after: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, WithdrawalRequestError> {
        // One lock over the balance read and the insert: requests are decided one at a time.
        let mut s = self.lock();
        if !s.accounts.contains_key(&new.account_id) {
            return Err(StoreError::NotFound.into());
        }
        let wallet = s
            .orders_by_account
            .get(&new.account_id)
            .map(|index| index.wallet.totals(held_after))
            .unwrap_or_default();
        let withdrawn = Withdrawn::of(
            s.withdrawals
                .values()
                .filter(|w| w.account_id == new.account_id),
        );
        new.admit(&wallet, withdrawn)?;
        let withdrawal = new.into_withdrawal(WithdrawalId::new(s.next_id("withdrawals")), now);
        s.withdrawals.insert(withdrawal.id, withdrawal.clone());
        Ok(withdrawal)
    }

    async fn decide_withdrawal(
        &self,
        id: WithdrawalId,
        decision: WithdrawalDecision,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, StoreError> {
        let mut s = self.lock();
        let withdrawal = s.withdrawals.get_mut(&id).ok_or(StoreError::NotFound)?;
        withdrawal.decide(decision, now)?;
        Ok(withdrawal.clone())
    }

    async fn withdrawals(&self, account: AccountId) -> Result<Vec<Withdrawal>, StoreError> {
        Ok(self
            .lock()
            .withdrawals
            .values()
            .filter(|w| w.account_id == account)
            .cloned()
            .collect())
    }

    async fn find_withdrawals(
        &self,
        query: &WithdrawalQuery,
        page: PageRequest,
    ) -> Result<Listing<Withdrawal>, StoreError> {
        let s = self.lock();
        let found = query.select(s.withdrawals.values());
        Ok(Listing::of_selected(found, page, query.count_limit))
    }

    async fn withdrawal_totals(
        &self,
        query: &WithdrawalQuery,
    ) -> Result<WithdrawalTotals, StoreError> {
        let s = self.lock();
        Ok(WithdrawalTotals::of(query.select(s.withdrawals.values())))
    }
}
