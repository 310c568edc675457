//! Rows of idempotency records, withdrawals, statement entries and quotes.

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
        pub(crate) quote_id: Option<i64>,
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
            .token(IdempotencyToken::new(self.holder_token))
            .maybe_order_id(self.order_id.map(OrderId::new))
            .maybe_quote_id(self.quote_id.map(QuoteId::new))
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

db_row! {
    pub(crate) struct StatementEntryRow {
        id: i64,
        supplier_id: i64,
        kind: String,
        order_id: Option<i64>,
        order_number: Option<String>,
        variant_id: Option<i64>,
        quantity: Option<i64>,
        unit_price: Option<i64>,
        amount: i64,
        direction: String,
        balance: i64,
        delivered_at: Option<i64>,
        withdrawal_id: Option<i64>,
        at: i64,
    }
}

impl StatementEntryRow {
    pub(crate) fn into_domain(self) -> Result<StatementEntry, StoreError> {
        Ok(StatementEntry::builder()
            .id(StatementEntryId::new(self.id))
            .supplier_id(AccountId::new(self.supplier_id))
            .kind(parse(
                &self.kind,
                StatementEntryType::parse,
                "statement entry type",
            )?)
            .maybe_order_id(self.order_id.map(OrderId::new))
            .maybe_order_number(self.order_number)
            .maybe_variant_id(self.variant_id.map(VariantId::new))
            .maybe_quantity(self.quantity)
            .maybe_unit_price(self.unit_price.map(from_piastres))
            .amount(from_piastres(self.amount))
            .direction(parse(&self.direction, Direction::parse, "direction")?)
            .balance(from_piastres(self.balance))
            .maybe_delivered_at(self.delivered_at.map(instant))
            .maybe_withdrawal_id(self.withdrawal_id.map(WithdrawalId::new))
            .at(instant(self.at))
            .build())
    }
}

db_row! {
    /// A quote with its product's title and its variant's label.
    pub(crate) struct QuoteRow {
        id: i64,
        account_id: i64,
        variant_id: i64,
        product_id: i64,
        title: String,
        label: String,
        unit_price: i64,
        quantity: i64,
        status: String,
        valid_until: Option<i64>,
        note: Option<String>,
        decision_note: Option<String>,
        decided_at: Option<i64>,
        created_at: i64,
        updated_at: i64,
    }
}

db_row! {
    /// A statement entry of a page, with the page's total (read in the same statement).
    pub(crate) struct StatementEntryPageRow {
        @flatten pub(crate) entry: StatementEntryRow,
        pub(crate) total: i64,
    }
}

db_row! {
    /// A quote of a page, with the page's total (`COUNT(*) OVER ()`).
    pub(crate) struct QuotePageRow {
        @flatten pub(crate) quote: QuoteRow,
        pub(crate) total: i64,
    }
}

impl QuoteRow {
    /// The quote as stored (its status not yet read as of an instant: [`Quote::as_of`]).
    pub(crate) fn into_domain(self) -> Result<Quote, StoreError> {
        Ok(Quote::builder()
            .id(QuoteId::new(self.id))
            .account_id(AccountId::new(self.account_id))
            .variant_id(VariantId::new(self.variant_id))
            .product_id(ProductId::new(self.product_id))
            .title(self.title)
            .label(self.label)
            .unit_price(from_piastres(self.unit_price))
            .quantity(self.quantity)
            .status(parse(&self.status, QuoteStatus::parse, "quote status")?)
            .maybe_valid_until(self.valid_until.map(instant))
            .maybe_note(self.note)
            .maybe_decision_note(self.decision_note)
            .maybe_decided_at(self.decided_at.map(instant))
            .created_at(instant(self.created_at))
            .updated_at(instant(self.updated_at))
            .build())
    }
}

db_row! {
    /// One of a supplier's variants, with its product's title, its pending quote and the
    /// page's total (`COUNT(*) OVER ()`).
    pub(crate) struct SupplyVariantRow {
        pub(crate) id: i64,
        pub(crate) product_id: i64,
        pub(crate) product_title: String,
        pub(crate) label: String,
        pub(crate) supply_price: i64,
        pub(crate) available: i64,
        pub(crate) pending_quote_id: Option<i64>,
        pub(crate) total: i64,
    }
}
