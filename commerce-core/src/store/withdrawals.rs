//! Withdrawal requests.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreError;
use crate::model::*;

/// Withdrawal requests and their decisions.
#[async_trait]
pub trait WithdrawalStore: Send + Sync {
    /// Registers a withdrawal request ([`NewWithdrawal::into_withdrawal`]: pending);
    /// `NotFound` when the account does not exist.
    async fn insert_withdrawal(
        &self,
        new: NewWithdrawal,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, StoreError>;
    /// Completes or rejects a pending withdrawal ([`Withdrawal::decide`]); `NotFound` when
    /// there is none.
    async fn decide_withdrawal(
        &self,
        id: WithdrawalId,
        decision: WithdrawalDecision,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, StoreError>;
    /// An account's withdrawals, oldest first.
    async fn withdrawals(&self, account: AccountId) -> Result<Vec<Withdrawal>, StoreError>;
}

impl Withdrawal {
    /// The rule of [`WithdrawalStore::decide_withdrawal`]: only a pending withdrawal is
    /// decided (`StoreError::Invalid` otherwise); completing keeps the transfer reference and
    /// receipt, rejecting keeps the notes when given; either way `decided_at` is `now`.
    pub fn decide(
        &mut self,
        decision: WithdrawalDecision,
        now: DateTime<Utc>,
    ) -> Result<(), StoreError> {
        if self.status != WithdrawalStatus::Pending {
            return Err(StoreError::Invalid(format!(
                "withdrawal {} is already decided",
                self.id
            )));
        }
        match decision {
            WithdrawalDecision::Complete {
                transfer_reference,
                receipt_url,
            } => {
                self.status = WithdrawalStatus::Completed;
                self.transfer_reference = Some(transfer_reference);
                self.receipt_url = receipt_url;
            }
            WithdrawalDecision::Reject { notes } => {
                self.status = WithdrawalStatus::Rejected;
                if notes.is_some() {
                    self.notes = notes;
                }
            }
        }
        self.decided_at = Some(now);
        Ok(())
    }
}
