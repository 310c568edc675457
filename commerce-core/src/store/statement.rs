//! The suppliers' money: what a write of an order or of a withdrawal books on the suppliers'
//! statements, decided once here so that a backend only persists (decisions of
//! docs/supplier-statement.md).
//!
//! A backend calls [`SupplyBooking::of_order_write`] with the order before and after each
//! write of it (placing, moving, recording line outcomes), and [`SupplyBooking::of_withdrawal`]
//! / [`SupplyBooking::of_rejection`] with a withdrawal it registers or rejects and the side of
//! its account; then, for each
//! booking (by supplier id, the order in which the SQL stores lock the suppliers' rows), it
//! applies [`SupplierTotals::book`] to the supplier's kept totals, in the same atomic
//! operation as the write, and stores the entries it returns. A refusal writes nothing.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use super::StoreError;
use crate::domain::earnings::{EarningsTotals, WalletTotals};
use crate::domain::pieces;
use crate::model::*;
use crate::money::round_money;

/// What one write books for one supplier: the change of its `expected` figure and the
/// statement entries it writes.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct SupplyBooking {
    /// The supplier.
    pub supplier: AccountId,
    /// How much the supply value of its pieces on undelivered orders changes.
    pub expected: Decimal,
    /// The entries, in the order they are written (credits before debits, so that no
    /// entry's balance is below the operation's final one).
    pub entries: Vec<NewStatementEntry>,
}

/// One supplier's booking checked against its kept totals ([`SupplyBooking::check_all`](crate::store::SupplyBooking::check_all)):
/// what to write once every other refusal of the operation is decided.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct CheckedBooking {
    /// The supplier.
    pub supplier: AccountId,
    /// Its kept totals after the booking.
    pub totals: SupplierTotals,
    /// Its new statement entries, each with the balance it leaves, in order.
    pub entries: Vec<(NewStatementEntry, Decimal)>,
}

/// Whether an order's pieces count as delivered (delivered, or archived after delivery).
fn settled(order: &Order) -> bool {
    order.delivered_at.is_some()
        && matches!(order.status.family(), Family::Delivered | Family::Archived)
}

/// Whether an order's pieces count as expected (pending, confirmed, shipping).
fn expected(order: &Order) -> bool {
    order.delivered_at.is_none()
        && matches!(
            order.status.family(),
            Family::Pending | Family::Confirmed | Family::Shipping
        )
}

/// `pieces` at `price` each, in whole piastres.
fn value(pieces: i64, price: Decimal) -> Decimal {
    round_money(Decimal::from(pieces) * price)
}

impl SupplyBooking {
    fn for_supplier(bookings: &mut Vec<SupplyBooking>, supplier: AccountId) -> &mut SupplyBooking {
        let at = match bookings.binary_search_by_key(&supplier, |b| b.supplier) {
            Ok(at) => at,
            Err(at) => {
                bookings.insert(
                    at,
                    SupplyBooking {
                        supplier,
                        expected: Decimal::ZERO,
                        entries: Vec::new(),
                    },
                );
                at
            }
        };
        &mut bookings[at]
    }

    /// What a write of an order books, from the order before it (`None`: the order is being
    /// placed) and after it, at `at`: for each supplier named by the lines' snapshots
    /// ([`OrderLine::supplier_id`]), by supplier id:
    ///
    /// - `expected` moves by the supply value (`supply_price` × pieces) of its lines when the
    ///   order enters or leaves pending, confirmed and shipping;
    /// - when the order enters delivered or partially delivered, one `delivery` credit per
    ///   line with delivered pieces: those pieces at the line's `supply_price`;
    /// - when a delivered order's delivered pieces change (its line outcomes recorded
    ///   again), one `correction` per changed line, by the difference (a credit when pieces
    ///   were added, a debit when taken away).
    ///
    /// Lines without a supplier book nothing; neither does a write that changes none of the
    /// above.
    pub fn of_order_write(
        before: Option<&Order>,
        after: &Order,
        at: DateTime<Utc>,
    ) -> Vec<SupplyBooking> {
        let mut bookings = Vec::new();
        let was_expected = before.is_some_and(expected);
        let is_expected = expected(after);
        let delivery = !before.is_some_and(settled) && settled(after);
        for line in &after.lines {
            let Some(supplier) = line.supplier_id else {
                continue;
            };
            let line_before = before.and_then(|o| o.lines.iter().find(|l| l.id == line.id));
            let value_of = |pieces| value(pieces, line.supply_price);
            let mut expected_delta = Decimal::ZERO;
            if was_expected && line_before.is_some() {
                expected_delta -= value_of(line.quantity);
            }
            if is_expected {
                expected_delta += value_of(line.quantity);
            }
            let pieces_before = match (before, line_before) {
                (Some(order), Some(l)) => pieces::delivered_pieces(order, l),
                _ => 0,
            };
            let change = pieces::delivered_pieces(after, line) - pieces_before;
            if expected_delta.is_zero() && change == 0 {
                continue;
            }
            let booking = Self::for_supplier(&mut bookings, supplier);
            booking.expected += expected_delta;
            if change != 0 {
                booking.entries.push(NewStatementEntry {
                    kind: if delivery {
                        StatementEntryType::Delivery
                    } else {
                        StatementEntryType::Correction
                    },
                    order: Some((after.id, after.number.clone())),
                    variant_id: Some(line.variant_id),
                    quantity: Some(change.abs()),
                    unit_price: Some(line.supply_price),
                    amount: value_of(change.abs()),
                    direction: if change > 0 {
                        Direction::Credit
                    } else {
                        Direction::Debit
                    },
                    delivered_at: after.delivered_at,
                    withdrawal_id: None,
                    at,
                });
            }
        }
        for booking in &mut bookings {
            // Stable: credits first, each kind in line order.
            booking
                .entries
                .sort_by_key(|entry| entry.direction == Direction::Debit);
        }
        bookings
    }

    fn of_withdrawal_entry(
        withdrawal: &Withdrawal,
        side: Side,
        kind: StatementEntryType,
        direction: Direction,
        at: DateTime<Utc>,
    ) -> Option<SupplyBooking> {
        (side == Side::Supplier).then(|| SupplyBooking {
            supplier: withdrawal.account_id,
            expected: Decimal::ZERO,
            entries: vec![NewStatementEntry {
                kind,
                order: None,
                variant_id: None,
                quantity: None,
                unit_price: None,
                amount: withdrawal.amount,
                direction,
                delivered_at: None,
                withdrawal_id: Some(withdrawal.id),
                at,
            }],
        })
    }

    /// What registering `withdrawal` of an account of `side` books: a `withdrawal` debit of
    /// its amount on a supplier's statement; nothing for another side's.
    pub fn of_withdrawal(withdrawal: &Withdrawal, side: Side) -> Option<SupplyBooking> {
        Self::of_withdrawal_entry(
            withdrawal,
            side,
            StatementEntryType::Withdrawal,
            Direction::Debit,
            withdrawal.created_at,
        )
    }

    /// What rejecting `withdrawal` of an account of `side` at `at` books: a
    /// `withdrawal_rejected` credit of its amount on a supplier's statement (the debit of
    /// [`of_withdrawal`](Self::of_withdrawal) given back); nothing for another side's.
    pub fn of_rejection(
        withdrawal: &Withdrawal,
        side: Side,
        at: DateTime<Utc>,
    ) -> Option<SupplyBooking> {
        Self::of_withdrawal_entry(
            withdrawal,
            side,
            StatementEntryType::WithdrawalRejected,
            Direction::Credit,
            at,
        )
    }
}

impl SupplierTotals {
    /// Applies `booking` to the supplier's kept totals: each entry with the balance it leaves,
    /// in order. Refused with [`StoreError::SupplierShortfall`] (the totals unchanged) when
    /// the balance would end below zero: a correction that takes away more than the supplier
    /// still has (it was withdrawn); the shortfall is how much is missing.
    pub fn book(
        &mut self,
        booking: &SupplyBooking,
    ) -> Result<Vec<(NewStatementEntry, Decimal)>, StoreError> {
        let mut next = *self;
        next.expected += booking.expected;
        let mut written = Vec::with_capacity(booking.entries.len());
        for entry in &booking.entries {
            next.balance += entry.signed();
            if entry.order.is_some() {
                next.settled += entry.signed();
            }
            next.entries += 1;
            written.push((entry.clone(), next.balance));
        }
        if next.balance < Decimal::ZERO {
            return Err(StoreError::SupplierShortfall {
                supplier: booking.supplier,
                shortfall: -next.balance,
            });
        }
        *self = next;
        Ok(written)
    }

    /// The supplier's wallet sums as [`OrderStore::wallet_totals`](super::OrderStore::wallet_totals)
    /// answers them: `expected` and `settled` as kept (no commission), and `held` the supply
    /// value of pieces delivered after the hold's cut-off (their deliveries and corrections
    /// added, `earliest_held_delivery` the earliest of those deliveries), but never more than
    /// the balance: what a correction took beyond the ready money is taken from the held one.
    /// So `ready + held` is always the balance, the newest entry's.
    pub fn wallet(
        &self,
        held: Decimal,
        earliest_held_delivery: Option<DateTime<Utc>>,
    ) -> WalletTotals {
        WalletTotals::new(
            EarningsTotals::new(self.expected, self.settled, Decimal::ZERO),
            held.min(self.balance).max(Decimal::ZERO),
            earliest_held_delivery,
        )
    }

    /// [`wallet`](Self::wallet) read off the supplier's own statement `entries`: `held` the
    /// signed sum of its order entries (deliveries and their corrections) whose order was
    /// delivered after `held_after`, with the earliest such delivery. The reference for a
    /// backend that keeps whole entries; the SQL stores sum the same in SQL, the memory store
    /// over its index of entries by delivery.
    pub fn wallet_of_entries<'a>(
        &self,
        entries: impl IntoIterator<Item = &'a StatementEntry>,
        held_after: DateTime<Utc>,
    ) -> WalletTotals {
        let mut held = Decimal::ZERO;
        let mut earliest: Option<DateTime<Utc>> = None;
        for entry in entries {
            if let (Some(_), Some(delivered)) = (entry.order_id, entry.delivered_at)
                && delivered > held_after
            {
                held += match entry.direction {
                    Direction::Credit => entry.amount,
                    Direction::Debit => -entry.amount,
                };
                earliest = Some(earliest.map_or(delivered, |e| e.min(delivered)));
            }
        }
        self.wallet(held, earliest)
    }
}
