//! A withdrawal request's JSON shape: `GET /wallet`'s pending items and the
//! `withdrawal.updated` event's `data.withdrawal`.

use serde::Serialize;
use utoipa::ToSchema;

use super::{Money, Stamp};
use crate::model::*;
use crate::render::messages;

/// A withdrawal request.
#[derive(Debug, Serialize, ToSchema)]
pub struct WithdrawalView<'a> {
    id: WithdrawalId,
    amount: Money,
    supply_amount: Money,
    status: WithdrawalStatusView,
    wallet_number: &'a str,
    wallet_description: &'a str,
    notes: Option<&'a str>,
    transfer_reference: Option<&'a str>,
    receipt_url: Option<&'a str>,
    created_at: Stamp,
    decided_at: Option<Stamp>,
}

impl<'a> WithdrawalView<'a> {
    /// The view of `withdrawal`.
    pub fn new(withdrawal: &'a Withdrawal) -> Self {
        Self {
            id: withdrawal.id,
            amount: Money(withdrawal.amount),
            supply_amount: Money(withdrawal.supply_amount),
            status: WithdrawalStatusView::of(withdrawal.status),
            wallet_number: &withdrawal.wallet_number,
            wallet_description: &withdrawal.wallet_description,
            notes: withdrawal.notes.as_deref(),
            transfer_reference: withdrawal.transfer_reference.as_deref(),
            receipt_url: withdrawal.receipt_url.as_deref(),
            created_at: Stamp(withdrawal.created_at),
            decided_at: withdrawal.decided_at.map(Stamp),
        }
    }
}

/// `{key, label}` of a withdrawal's status.
#[derive(Debug, Serialize, ToSchema)]
pub struct WithdrawalStatusView {
    #[schema(value_type = WithdrawalStatus)]
    key: &'static str,
    label: &'static str,
}

impl WithdrawalStatusView {
    /// The view of `status`.
    pub fn of(status: WithdrawalStatus) -> Self {
        Self {
            key: status.as_str(),
            label: messages::withdrawal_status_label(status),
        }
    }
}
