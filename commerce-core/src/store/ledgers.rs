//! The suppliers' statements of a backend that keeps them in process memory ([`SupplyLedgers`]):
//! each supplier's entries, its kept totals, and its entries by delivery for the wallet's held
//! sum. The memory store and the small store of the tests keep theirs here.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use super::{CheckedBooking, StoreError, SupplyBooking};
use crate::domain::earnings::WalletTotals;
use crate::model::*;

/// Every supplier's statement, in process memory, with the steps of the operations that book
/// on it ([`SupplyBooking`]: check, then write), [`OrderStore::wallet_totals`]'s supplier half
/// and [`OrderStore::statement`]. The caller holds its own lock across each call, and across a
/// [`check`](Self::check) and its [`write`](Self::write). Entries are numbered 1, 2, 3, ...
/// across suppliers, as a SQL sequence numbers them.
///
/// [`OrderStore::wallet_totals`]: super::OrderStore::wallet_totals
/// [`OrderStore::statement`]: super::OrderStore::statement
#[derive(Debug, Default)]
pub struct SupplyLedgers {
    by_supplier: HashMap<AccountId, Ledger>,
    /// The id of the last entry written.
    last_id: i64,
}

#[derive(Debug, Default)]
struct Ledger {
    totals: SupplierTotals,
    /// Oldest first (by id).
    entries: Vec<StatementEntry>,
    /// The signed amounts of the order entries, by the order's delivery.
    by_delivery: BTreeMap<(DateTime<Utc>, StatementEntryId), Decimal>,
}

/// Bookings checked against the kept totals by [`SupplyLedgers::check`], to
/// [`write`](SupplyLedgers::write) once every other refusal of the operation is decided (under
/// the same lock: nothing may book in between).
#[derive(Debug)]
#[must_use]
pub struct CheckedBookings(Vec<CheckedBooking>);

impl SupplyLedgers {
    /// Applies [`SupplierTotals::book`] to each booking ([`SupplyBooking::check_all`]),
    /// writing nothing: the first refusal, or what to [`write`](Self::write).
    pub fn check(&self, bookings: Vec<SupplyBooking>) -> Result<CheckedBookings, StoreError> {
        let totals_of = |supplier| {
            self.by_supplier
                .get(&supplier)
                .map(|ledger| ledger.totals)
                .unwrap_or_default()
        };
        SupplyBooking::check_all(bookings, totals_of).map(CheckedBookings)
    }

    /// [`check`](Self::check), then [`write`](Self::write): for an operation whose bookings
    /// are its last refusal. A refusal writes nothing.
    pub fn book(&mut self, bookings: Vec<SupplyBooking>) -> Result<(), StoreError> {
        let checked = self.check(bookings)?;
        self.write(checked);
        Ok(())
    }

    /// Writes bookings checked by [`check`](Self::check): each supplier's totals, and its
    /// entries, each with the next id.
    pub fn write(&mut self, checked: CheckedBookings) {
        for CheckedBooking {
            supplier,
            totals,
            entries,
        } in checked.0
        {
            let ledger = self.by_supplier.entry(supplier).or_default();
            ledger.totals = totals;
            for (entry, balance) in entries {
                let signed = entry.signed();
                self.last_id += 1;
                let id = StatementEntryId::new(self.last_id);
                let entry = entry.into_entry(id, supplier, balance);
                if let (Some(delivered), Some(_)) = (entry.delivered_at, entry.order_id) {
                    ledger.by_delivery.insert((delivered, entry.id), signed);
                }
                ledger.entries.push(entry);
            }
        }
    }

    /// The supplier's wallet sums ([`SupplierTotals::wallet`]), holding what was delivered
    /// after `held_after` (read off an index of its order entries by delivery): the supplier
    /// half of [`OrderStore::wallet_totals`](super::OrderStore::wallet_totals).
    pub fn wallet(&self, supplier: AccountId, held_after: DateTime<Utc>) -> WalletTotals {
        let Some(ledger) = self.by_supplier.get(&supplier) else {
            return WalletTotals::default();
        };
        let after = held_after + chrono::TimeDelta::nanoseconds(1);
        let mut held = Decimal::ZERO;
        let mut earliest = None;
        for ((delivered, _), signed) in ledger
            .by_delivery
            .range((after, StatementEntryId::new(i64::MIN))..)
        {
            held += signed;
            earliest.get_or_insert(*delivered);
        }
        ledger.totals.wallet(held, earliest)
    }

    /// [`OrderStore::statement`](super::OrderStore::statement): one page of the supplier's
    /// entries matching `filter`, newest first, and how many match.
    pub fn page(
        &self,
        supplier: AccountId,
        filter: &StatementFilter,
        page: PageRequest,
    ) -> Page<StatementEntry> {
        let Some(ledger) = self.by_supplier.get(&supplier) else {
            return Page::new(Vec::new(), 0);
        };
        let offset = usize::try_from(page.offset()).unwrap_or(usize::MAX);
        if filter.is_empty() {
            let items = ledger
                .entries
                .iter()
                .rev()
                .skip(offset)
                .take(page.per_page() as usize)
                .cloned()
                .collect();
            return Page::new(items, ledger.totals.entries);
        }
        let matching: Vec<&StatementEntry> = ledger
            .entries
            .iter()
            .rev()
            .filter(|entry| filter.matches(entry.at))
            .collect();
        let items = matching
            .iter()
            .skip(offset)
            .take(page.per_page() as usize)
            .map(|entry| (*entry).clone())
            .collect();
        Page::new(items, matching.len() as u64)
    }
}
