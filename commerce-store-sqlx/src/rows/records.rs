//! Rows of idempotency records and withdrawals.

use commerce_core::model::*;
use commerce_core::money::from_piastres;
use commerce_core::store::{IdempotencyRecord, StoreError};

use super::*;

db_row! {
    pub(crate) struct IdempotencyRow {
        pub(crate) fingerprint: String,
        pub(crate) created_at: i64,
        pub(crate) holder_token: i64,
        pub(crate) order_id: Option<i64>,
        pub(crate) response_status: Option<i32>,
        pub(crate) response_body: Option<Vec<u8>>,
    }
}

impl IdempotencyRow {
    /// The record as commerce-core's idempotency rule reads it.
    pub(crate) fn into_record(self) -> Result<IdempotencyRecord, StoreError> {
        let response = self.response()?;
        Ok(IdempotencyRecord::builder()
            .fingerprint(self.fingerprint)
            .created_at(instant(self.created_at))
            .token(IdempotencyToken(self.holder_token))
            .maybe_order_id(self.order_id.map(OrderId::new))
            .maybe_response(response)
            .build())
    }

    pub(crate) fn response(&self) -> Result<Option<StoredResponse>, StoreError> {
        match (self.response_status, &self.response_body) {
            (Some(status), Some(body)) => Ok(Some(StoredResponse::new(
                u16::try_from(status).map_err(|_| corrupt(format!("HTTP status {status}")))?,
                body.clone(),
            ))),
            (None, _) => Ok(None),
            (Some(_), None) => Err(corrupt("stored response without body")),
        }
    }
}

db_row! {
    pub(crate) struct WithdrawalRow {
        id: i64,
        account_id: i64,
        amount: i64,
        supply_amount: i64,
        status: String,
        wallet_number: String,
        wallet_description: String,
        notes: Option<String>,
        transfer_reference: Option<String>,
        receipt_url: Option<String>,
        created_at: i64,
        decided_at: Option<i64>,
    }
}

impl WithdrawalRow {
    pub(crate) fn into_domain(self) -> Result<Withdrawal, StoreError> {
        Ok(Withdrawal::builder()
            .id(WithdrawalId::new(self.id))
            .account_id(AccountId::new(self.account_id))
            .amount(from_piastres(self.amount))
            .supply_amount(from_piastres(self.supply_amount))
            .status(parse(
                &self.status,
                WithdrawalStatus::parse,
                "withdrawal status",
            )?)
            .wallet_number(self.wallet_number)
            .wallet_description(self.wallet_description)
            .maybe_notes(self.notes)
            .maybe_transfer_reference(self.transfer_reference)
            .maybe_receipt_url(self.receipt_url)
            .created_at(instant(self.created_at))
            .maybe_decided_at(self.decided_at.map(instant))
            .build())
    }
}
