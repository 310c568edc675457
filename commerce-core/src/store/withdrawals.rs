//! Withdrawal requests.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use rust_decimal::Decimal;

use super::StoreError;
use crate::model::*;

/// Why [`WithdrawalStore::request_withdrawal`] registered nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum WithdrawalRequestError {
    /// The amount is more than the ready balance.
    #[error("{requested} is more than the ready balance of {ready}")]
    OverReadyBalance {
        /// The amount asked for.
        requested: Decimal,
        /// The ready balance when the request was decided.
        ready: Decimal,
    },
    /// The storage failed, or the account does not exist (`NotFound`).
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Withdrawal requests and their decisions.
#[async_trait]
pub trait WithdrawalStore: Send + Sync {
    /// Registers a withdrawal request ([`NewWithdrawal::into_withdrawal`]: pending) if the
    /// account's ready balance covers it ([`NewWithdrawal::admit`]), reading the balance in
    /// the same atomic operation as the insert: requests made at once, from one instance or
    /// several, never together exceed it. The balance is [`WalletTotals::ready`](crate::domain::earnings::WalletTotals::ready) of what
    /// [`OrderStore::wallet_totals`](super::OrderStore::wallet_totals) answers for
    /// `held_after` (read inside this operation, not by a separate call) and of the
    /// account's withdrawals ([`Withdrawn::of`](crate::domain::earnings::Withdrawn::of)). An account
    /// that does not exist is `Store(NotFound)` (the SQL store locks the account's row, which
    /// also puts one account's requests in a row). A refusal writes nothing; no meter entry,
    /// no webhook event.
    async fn request_withdrawal(
        &self,
        new: NewWithdrawal,
        held_after: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, WithdrawalRequestError>;
    /// Completes or rejects a pending withdrawal ([`Withdrawal::decide`], checked against the
    /// status read in the same atomic operation, so a withdrawal is decided once); `NotFound`
    /// when there is none. In the same atomic operation (the outbox), one pending delivery of
    /// [`NewEvent::withdrawal`]`(&withdrawal, Pending)` for each enabled endpoint of the
    /// withdrawal's account that receives `withdrawal.updated`.
    async fn decide_withdrawal(
        &self,
        id: WithdrawalId,
        decision: WithdrawalDecision,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, StoreError>;
    /// An account's withdrawals, oldest first: one read (one statement on the SQL stores).
    async fn withdrawals(&self, account: AccountId) -> Result<Vec<Withdrawal>, StoreError>;
    /// The withdrawals of any account that `query` matches ([`WithdrawalQuery::select`]: its
    /// filters and order), one page, with how many match counted up to the query's
    /// `count_limit` ([`Listing::of_selected`]): the payout queue and the back office's lists.
    /// One read, not one snapshot: the SQL stores read the page and the count in separate
    /// statements.
    async fn find_withdrawals(
        &self,
        query: &WithdrawalQuery,
        page: PageRequest,
    ) -> Result<Listing<Withdrawal>, StoreError>;
    /// How many withdrawals `query` matches and their amounts added
    /// ([`WithdrawalTotals::of`]), every one counted (the query's `count_limit` does not
    /// apply), in one operation: the count and the sum from one snapshot (one statement on
    /// the SQL stores), so they agree.
    async fn withdrawal_totals(
        &self,
        query: &WithdrawalQuery,
    ) -> Result<WithdrawalTotals, StoreError>;
}
