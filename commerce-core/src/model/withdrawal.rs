//! Withdrawal requests and their decisions.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use super::*;

string_enum! {
    /// The state of a withdrawal request.
    WithdrawalStatus {
        /// Awaiting the team.
        Pending => "pending",
        /// Paid out.
        Completed => "completed",
        /// Refused.
        Rejected => "rejected",
    }
}

/// A withdrawal request made from the wallet page.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct Withdrawal {
    /// Id.
    pub id: WithdrawalId,
    /// Owning account.
    pub account_id: AccountId,
    /// Amount requested.
    pub amount: Decimal,
    /// Supply amount.
    pub supply_amount: Decimal,
    /// State.
    pub status: WithdrawalStatus,
    /// Wallet number to pay to.
    pub wallet_number: String,
    /// Wallet description.
    pub wallet_description: String,
    /// Notes.
    pub notes: Option<String>,
    /// Transfer reference once paid.
    pub transfer_reference: Option<String>,
    /// Receipt URL once paid.
    pub receipt_url: Option<String>,
    /// Request instant.
    pub created_at: DateTime<Utc>,
    /// Decision instant.
    pub decided_at: Option<DateTime<Utc>>,
}

/// A new withdrawal request: `NewWithdrawal::builder()`, with the account, the amount and
/// the mobile wallet it is paid to (number and description, e.g. "Vodafone Cash"); no
/// supply amount and no notes unless given.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct NewWithdrawal {
    /// Owning account.
    pub account_id: AccountId,
    /// Amount.
    pub amount: Decimal,
    /// Supply amount (`0.00` when the builder is not given one).
    #[builder(default)]
    pub supply_amount: Decimal,
    /// Wallet number.
    pub wallet_number: String,
    /// Wallet description.
    pub wallet_description: String,
    /// Notes.
    pub notes: Option<String>,
}

/// The team's decision on a withdrawal.
#[derive(Debug, Clone, PartialEq)]
// Exhaustive on purpose: a backend carries out every decision, so a new one is a change of the store contract.
pub enum WithdrawalDecision {
    /// Paid out.
    Complete {
        /// Transfer reference.
        transfer_reference: String,
        /// Receipt URL.
        receipt_url: Option<String>,
    },
    /// Refused.
    Reject {
        /// Why.
        notes: Option<String>,
    },
}

impl NewWithdrawal {
    /// The withdrawal as requested with `id` at `at` (pending).
    pub fn into_withdrawal(self, id: WithdrawalId, at: DateTime<Utc>) -> Withdrawal {
        Withdrawal {
            id,
            account_id: self.account_id,
            amount: self.amount,
            supply_amount: self.supply_amount,
            status: WithdrawalStatus::Pending,
            wallet_number: self.wallet_number,
            wallet_description: self.wallet_description,
            notes: self.notes,
            transfer_reference: None,
            receipt_url: None,
            created_at: at,
            decided_at: None,
        }
    }
}
