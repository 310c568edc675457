//! [`WithdrawalStore`] for [`MemoryStore`]: withdrawal requests and their decisions.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::MemoryStore;
use crate::domain::earnings::Withdrawn;
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
        let Some(side) = s.accounts.get(&new.account_id).map(|a| a.side) else {
            return Err(StoreError::NotFound.into());
        };
        let wallet = s.wallet_totals(new.account_id, held_after);
        let withdrawn = Withdrawn::of(s.withdrawals_of(new.account_id));
        new.admit(&wallet, withdrawn)?;
        let withdrawal = new.into_withdrawal(WithdrawalId::new(s.peek_id("withdrawals", 1)), now);
        let supply = s.supply.check(
            SupplyBooking::of_withdrawal(&withdrawal, side)
                .into_iter()
                .collect(),
        )?;
        s.next_id("withdrawals");
        s.withdrawals.insert(withdrawal.id, withdrawal.clone());
        s.withdrawals_by_account
            .entry(withdrawal.account_id)
            .or_default()
            .push(withdrawal.id);
        s.supply.write(supply);
        Ok(withdrawal)
    }

    async fn decide_withdrawal(
        &self,
        id: WithdrawalId,
        decision: WithdrawalDecision,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, StoreError> {
        let mut s = self.lock();
        let mut withdrawal = s.withdrawals.get(&id).ok_or(StoreError::NotFound)?.clone();
        withdrawal.decide(decision, now)?;
        let side = s.accounts.get(&withdrawal.account_id).map(|a| a.side);
        let rejected = match (withdrawal.status, side) {
            (WithdrawalStatus::Rejected, Some(side)) => {
                SupplyBooking::of_rejection(&withdrawal, side, now)
            }
            _ => None,
        };
        let supply = s.supply.check(rejected.into_iter().collect())?;
        let event = s.outbox_event(withdrawal.account_id, EventType::WithdrawalUpdated, || {
            NewEvent::withdrawal(&withdrawal, WithdrawalStatus::Pending)
        });
        s.withdrawals.insert(id, withdrawal.clone());
        s.supply.write(supply);
        s.queue_outbox_event(event);
        Ok(withdrawal)
    }

    async fn withdrawals(&self, account: AccountId) -> Result<Vec<Withdrawal>, StoreError> {
        Ok(self.lock().withdrawals_of(account).cloned().collect())
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
