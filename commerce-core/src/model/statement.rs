//! A supplier's statement: the ledger of what the platform owes it, entry by entry.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use super::*;

string_enum! {
    /// What caused a statement entry.
    StatementEntryType {
        /// Pieces of the supplier's variants delivered on an order (the order entered
        /// delivered or partially delivered).
        Delivery => "delivery",
        /// A later change of those delivered pieces (line outcomes recorded again).
        Correction => "correction",
        /// A withdrawal the supplier requested.
        Withdrawal => "withdrawal",
        /// A withdrawal the platform rejected: its amount back.
        WithdrawalRejected => "withdrawal_rejected",
    }
}

string_enum! {
    /// Whether an entry adds to the supplier's balance or takes from it.
    Direction {
        /// Adds to the balance.
        Credit => "credit",
        /// Takes from the balance.
        Debit => "debit",
    }
}

/// One entry of a supplier's statement, as stored.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct StatementEntry {
    /// Id: entries of one supplier are numbered in the order they were written.
    pub id: StatementEntryId,
    /// The supplier.
    pub supplier_id: AccountId,
    /// What caused it.
    pub kind: StatementEntryType,
    /// The order (deliveries and corrections).
    pub order_id: Option<OrderId>,
    /// The order's number.
    pub order_number: Option<String>,
    /// The variant whose pieces it counts (deliveries and corrections).
    pub variant_id: Option<VariantId>,
    /// Pieces (deliveries and corrections).
    pub quantity: Option<i64>,
    /// Supply price per piece, as kept on the order line.
    pub unit_price: Option<Decimal>,
    /// Amount, never negative: [`direction`](Self::direction) says which way it goes.
    pub amount: Decimal,
    /// Credit or debit.
    pub direction: Direction,
    /// The supplier's balance after this entry.
    pub balance: Decimal,
    /// When the order was delivered (deliveries and corrections): the entry is held until
    /// the hold period after it is over.
    pub delivered_at: Option<DateTime<Utc>>,
    /// The withdrawal (withdrawals and their rejections).
    pub withdrawal_id: Option<WithdrawalId>,
    /// When it was written.
    pub at: DateTime<Utc>,
}

/// A statement entry about to be written: [`StatementEntry`] without the id, the supplier
/// and the balance, which the store gives it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct NewStatementEntry {
    /// What caused it.
    pub kind: StatementEntryType,
    /// The order and its number (deliveries and corrections).
    pub order: Option<(OrderId, String)>,
    /// The variant (deliveries and corrections).
    pub variant_id: Option<VariantId>,
    /// Pieces (deliveries and corrections).
    pub quantity: Option<i64>,
    /// Supply price per piece (deliveries and corrections).
    pub unit_price: Option<Decimal>,
    /// Amount, never negative.
    pub amount: Decimal,
    /// Credit or debit.
    pub direction: Direction,
    /// When the order was delivered (deliveries and corrections).
    pub delivered_at: Option<DateTime<Utc>>,
    /// The withdrawal (withdrawals and their rejections).
    pub withdrawal_id: Option<WithdrawalId>,
    /// When.
    pub at: DateTime<Utc>,
}

impl NewStatementEntry {
    /// The amount with its sign: positive for a credit, negative for a debit.
    pub fn signed(&self) -> Decimal {
        match self.direction {
            Direction::Credit => self.amount,
            Direction::Debit => -self.amount,
        }
    }

    /// The entry as stored with `id`, for `supplier`, leaving `balance`.
    pub fn into_entry(
        self,
        id: StatementEntryId,
        supplier: AccountId,
        balance: Decimal,
    ) -> StatementEntry {
        let (order_id, order_number) = self.order.unzip();
        StatementEntry {
            id,
            supplier_id: supplier,
            kind: self.kind,
            order_id,
            order_number,
            variant_id: self.variant_id,
            quantity: self.quantity,
            unit_price: self.unit_price,
            amount: self.amount,
            direction: self.direction,
            balance,
            delivered_at: self.delivered_at,
            withdrawal_id: self.withdrawal_id,
            at: self.at,
        }
    }
}

/// Which entries of a statement to list: those written in `[from, to)`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct StatementFilter {
    /// Written at or after this instant.
    pub from: Option<DateTime<Utc>>,
    /// Written before this instant.
    pub to: Option<DateTime<Utc>>,
}

impl StatementFilter {
    /// Entries written in `[from, to)` (either end open when `None`).
    pub fn new(from: Option<DateTime<Utc>>, to: Option<DateTime<Utc>>) -> Self {
        Self { from, to }
    }

    /// Whether the filter limits anything.
    pub fn is_empty(&self) -> bool {
        self.from.is_none() && self.to.is_none()
    }

    /// Whether an entry written `at` matches.
    pub fn matches(&self, at: DateTime<Utc>) -> bool {
        self.from.is_none_or(|from| at >= from) && self.to.is_none_or(|to| at < to)
    }
}

/// What a store keeps per supplier, updated in the same atomic operation as every entry
/// written ([`SupplierTotals::book`]), so that the wallet and
/// a statement's total cost no scan of the entries.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct SupplierTotals {
    /// Supply value of the supplier's pieces on orders not yet delivered (pending,
    /// confirmed, shipping).
    pub expected: Decimal,
    /// Supply value of the supplier's delivered pieces: the deliveries and corrections added.
    pub settled: Decimal,
    /// The balance: every entry added (the newest entry's `balance`).
    pub balance: Decimal,
    /// How many entries the statement has.
    pub entries: u64,
}

impl SupplierTotals {
    /// The kept sums.
    pub fn new(expected: Decimal, settled: Decimal, balance: Decimal, entries: u64) -> Self {
        Self {
            expected,
            settled,
            balance,
            entries,
        }
    }
}
