//! The rules of a write of an order, for a backend that holds whole records (the memory
//! store, a backend written from the contract such as `tests/small_store.rs`): the order a
//! status move or an outcome leaves ([`StatusChange::applied_to`], [`Order::with_outcomes`]),
//! what the write may take from the marketer ([`Order::marketer_covers`]), from the stock
//! ([`StockMove::fits`]; both in [`Order::check_write`]) and from the suppliers ([`SupplyBooking::check_all`]). Each store
//! reads what a rule needs inside the write's own atomic operation, then applies it; nothing
//! here writes.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use crate::domain::earnings::{OrderEarnings, Withdrawn, settled_taken, shortfall};
use crate::domain::pieces::{StockMove, stock_moves};
use crate::model::*;
use crate::store::{
    CheckedBooking, StatusChange, StatusChangeError, StatusMove, StoreError, SupplyBooking,
    next_updated_at, unchanged_since,
};

impl StatusChange {
    /// The order as this change leaves it, for a backend that holds whole orders, nothing
    /// written: [`StatusMove::check`], then [`unchanged_since`] with
    /// [`read_at`](StatusChange::read_at), then `NotFound` when an outcome names a line the
    /// order lacks ([`StatusMove::names_unknown_line`]), then the move
    /// ([`StatusMove::apply`]).
    pub fn applied_to(&self, order: &Order) -> Result<Order, StatusChangeError> {
        let step = StatusMove::check(self, order.account_id, order.status)?;
        unchanged_since(self.read_at, order.updated_at)?;
        if step.names_unknown_line(&order.lines) {
            return Err(StatusChangeError::NotFound);
        }
        let mut moved = order.clone();
        step.apply(&mut moved);
        Ok(moved)
    }
}

impl Order {
    /// The rule of [`OrderStore::set_line_outcomes`](crate::store::OrderStore::set_line_outcomes)
    /// for a backend that holds whole orders, nothing written: [`unchanged_since`] with
    /// `read_at`, `NotFound` when an outcome names a line the order lacks, else the order with
    /// the outcomes recorded and its `updated_at` moved to `now` ([`next_updated_at`]).
    pub fn with_outcomes(
        &self,
        outcomes: &[(LineId, LineOutcome)],
        read_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError> {
        unchanged_since(read_at, self.updated_at)?;
        let mut changed = self.clone();
        for (id, outcome) in outcomes {
            let line = changed.lines.iter_mut().find(|l| l.id == *id);
            line.ok_or(StoreError::NotFound)?.outcome = outcome.clone();
        }
        changed.updated_at = next_updated_at(self.updated_at, now);
        Ok(changed)
    }

    /// The marketer's side of a write of this order into `after`: refused with
    /// [`StoreError::MarketerShortfall`] when it takes from the account's settled earnings
    /// ([`settled_taken`]) more than its withdrawals leave ([`shortfall`]). `settled` (the
    /// account's settled earnings now) and `withdrawn` are read only when the write takes
    /// something.
    pub fn marketer_covers(
        &self,
        after: &Order,
        settled: impl FnOnce() -> Decimal,
        withdrawn: impl FnOnce() -> Withdrawn,
    ) -> Result<(), StoreError> {
        let taken = settled_taken(OrderEarnings::of(self), OrderEarnings::of(after));
        if taken.is_zero() {
            return Ok(());
        }
        match shortfall(settled(), taken, withdrawn()) {
            Some(shortfall) => Err(StoreError::MarketerShortfall {
                account: self.account_id,
                shortfall,
            }),
            None => Ok(()),
        }
    }
}

impl Order {
    /// The refusals of a write of this order into `after`, for a backend that holds whole
    /// records, in the order the SQL stores meet them, nothing written: the marketer's
    /// ([`marketer_covers`](Self::marketer_covers): `settled` and `withdrawn` read only when
    /// the write takes something), then the stock's: each move of the write ([`stock_moves`])
    /// must fit its variant's pieces as `available` reads them ([`StockMove::fits`]; a variant
    /// that does not exist has none). The moves to apply once the suppliers' bookings are
    /// checked too ([`SupplyBooking::check_all`]).
    pub fn check_write(
        &self,
        after: &Order,
        settled: impl FnOnce() -> Decimal,
        withdrawn: impl FnOnce() -> Withdrawn,
        available: impl Fn(VariantId) -> Option<i64>,
    ) -> Result<Vec<StockMove>, StoreError> {
        self.marketer_covers(after, settled, withdrawn)?;
        let moves = stock_moves(Some(self), after);
        for m in &moves {
            m.fits(available(m.variant_id).unwrap_or(0))?;
        }
        Ok(moves)
    }
}

impl StockMove {
    /// The pieces a variant of `available` pieces has after the move, or
    /// [`StoreError::StockShortfall`] when it would give more than it has.
    pub fn fits(&self, available: i64) -> Result<i64, StoreError> {
        match available.checked_add(self.delta) {
            Some(after) if after >= 0 => Ok(after),
            _ => Err(StoreError::StockShortfall {
                variant: self.variant_id,
                available,
                shortfall: self.delta.saturating_neg().saturating_sub(available),
            }),
        }
    }
}

impl SupplyBooking {
    /// [`SupplierTotals::book`] applied to each of `bookings`, against each supplier's kept
    /// totals as `totals_of` reads them, writing nothing: every booking checked, or the first
    /// refusal (a write books all of its bookings or none).
    pub fn check_all(
        bookings: Vec<SupplyBooking>,
        mut totals_of: impl FnMut(AccountId) -> SupplierTotals,
    ) -> Result<Vec<CheckedBooking>, StoreError> {
        let mut checked = Vec::with_capacity(bookings.len());
        for booking in bookings {
            let mut totals = totals_of(booking.supplier);
            let entries = totals.book(&booking)?;
            checked.push(CheckedBooking {
                supplier: booking.supplier,
                totals,
                entries,
            });
        }
        Ok(checked)
    }
}
