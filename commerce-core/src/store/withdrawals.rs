//! Withdrawal requests.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreError;
use crate::model::*;

/// Withdrawal requests and their decisions.
#[async_trait]
pub trait WithdrawalStore: Send + Sync {
    /// Registers a withdrawal request (pending).
    async fn insert_withdrawal(
        &self,
        new: NewWithdrawal,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, StoreError>;
    /// Completes or rejects a pending withdrawal.
    async fn decide_withdrawal(
        &self,
        id: WithdrawalId,
        decision: WithdrawalDecision,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, StoreError>;
    /// An account's withdrawals, oldest first.
    async fn withdrawals(&self, account: AccountId) -> Result<Vec<Withdrawal>, StoreError>;
}
