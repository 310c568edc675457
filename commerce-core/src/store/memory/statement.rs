//! The suppliers' statements of [`MemoryStore`](super::MemoryStore): each supplier's entries,
//! its kept totals, and its entries by delivery for the wallet's held sum.

use std::collections::{BTreeMap, HashMap};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use crate::domain::earnings::WalletTotals;
use crate::model::*;
use crate::store::{CheckedBooking, StoreError, SupplyBooking};

/// Every supplier's statement.
#[derive(Debug, Default)]
pub(super) struct SupplyLedgers {
    by_supplier: HashMap<AccountId, Ledger>,
}

#[derive(Debug, Default)]
struct Ledger {
    totals: SupplierTotals,
    /// Oldest first (by id).
    entries: Vec<StatementEntry>,
    /// The signed amounts of the order entries, by the order's delivery.
    by_delivery: BTreeMap<(DateTime<Utc>, StatementEntryId), Decimal>,
}

/// Bookings checked against the totals, to write once everything else is checked.
#[derive(Debug, Default)]
#[must_use]
pub(super) struct CheckedBookings(Vec<CheckedBooking>);

impl SupplyLedgers {
    /// Applies [`SupplierTotals::book`] to each booking, writing nothing: the first refusal,
    /// or what to [`write`](Self::write).
    pub(super) fn check(
        &self,
        bookings: Vec<SupplyBooking>,
    ) -> Result<CheckedBookings, StoreError> {
        let totals_of = |supplier| {
            self.by_supplier
                .get(&supplier)
                .map(|ledger| ledger.totals)
                .unwrap_or_default()
        };
        SupplyBooking::check_all(bookings, totals_of).map(CheckedBookings)
    }

    /// Writes checked bookings, each entry with the id `next_id` gives.
    pub(super) fn write(&mut self, checked: CheckedBookings, mut next_id: impl FnMut() -> i64) {
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
                let entry = entry.into_entry(StatementEntryId::new(next_id()), supplier, balance);
                if let (Some(delivered), Some(_)) = (entry.delivered_at, entry.order_id) {
                    ledger.by_delivery.insert((delivered, entry.id), signed);
                }
                ledger.entries.push(entry);
            }
        }
    }

    /// The supplier's wallet sums ([`SupplierTotals::wallet`]), holding what was delivered
    /// after `held_after`.
    pub(super) fn wallet(&self, supplier: AccountId, held_after: DateTime<Utc>) -> WalletTotals {
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

    /// One page of the supplier's entries matching `filter`, newest first.
    pub(super) fn page(
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
