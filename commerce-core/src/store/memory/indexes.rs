//! The memory store's indexes of each account's orders and its wallet sums, kept in step with
//! the orders by every write.

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use crate::domain::earnings::{EarningsBucket, EarningsTotals, OrderEarnings, WalletTotals};
use crate::model::{Family, Order, OrderId};

/// A set of orders keyed by an instant then the id.
pub(super) type OrderKeys = BTreeSet<(DateTime<Utc>, OrderId)>;

/// The indexes of one account's orders, kept in step with `State::orders` by every write, so
/// that a page costs the page (plus the matches of `updated_since`), not the account's size.
#[derive(Debug, Default)]
pub(super) struct AccountOrders {
    /// Every order by `(created_at, id)`: the list order, newest last.
    pub(super) by_created: OrderKeys,
    /// The same keys split by status family.
    pub(super) by_family: HashMap<Family, OrderKeys>,
    /// Every order by `(updated_at, id)`, for `updated_since`.
    pub(super) by_updated: OrderKeys,
    /// The wallet sums, kept by every write (see [`crate::domain::earnings`]).
    pub(super) wallet: WalletBook,
}

/// One account's booked [`OrderEarnings`], their sums, and the settled orders by delivery, so
/// that a wallet read costs the orders in their hold period.
#[derive(Debug, Default)]
pub(super) struct WalletBook {
    /// Each order's earnings as booked, with its delivery instant.
    booked: HashMap<OrderId, (OrderEarnings, Option<DateTime<Utc>>)>,
    totals: EarningsTotals,
    /// Net earnings of settled orders by `(delivered_at, id)`.
    settled: BTreeMap<(DateTime<Utc>, OrderId), Decimal>,
}

impl WalletBook {
    /// Books `order`'s earnings as it stands now, replacing what was booked for it.
    fn book(&mut self, order: &Order) {
        let now = OrderEarnings::of(order);
        let before = self.booked.insert(order.id, (now, order.delivered_at));
        let (was, was_delivered) = before.unwrap_or((OrderEarnings::NOTHING, None));
        if was == now && was_delivered == order.delivered_at {
            return;
        }
        self.totals.rebook(was, now);
        if let (EarningsBucket::Settled, Some(at)) = (was.bucket, was_delivered) {
            self.settled.remove(&(at, order.id));
        }
        if let (EarningsBucket::Settled, Some(at)) = (now.bucket, order.delivered_at) {
            self.settled.insert((at, order.id), now.net);
        }
    }

    pub(super) fn totals(&self, held_after: DateTime<Utc>) -> WalletTotals {
        let mut wallet = WalletTotals {
            totals: self.totals,
            ..WalletTotals::default()
        };
        for ((delivered, _), net) in self.settled.range((held_after, OrderId::MAX)..) {
            if *delivered > held_after {
                wallet.hold(*net, *delivered);
            }
        }
        wallet
    }
}

impl AccountOrders {
    pub(super) fn insert(&mut self, order: &Order) {
        self.by_created.insert((order.created_at, order.id));
        self.by_family
            .entry(order.status.family())
            .or_default()
            .insert((order.created_at, order.id));
        self.by_updated.insert((order.updated_at, order.id));
        self.wallet.book(order);
    }

    /// Moves an order's keys after a write changed its `updated_at` or status.
    pub(super) fn reindex(&mut self, before: (DateTime<Utc>, Family), after: &Order) {
        let (updated_at, family) = before;
        if updated_at != after.updated_at {
            self.by_updated.remove(&(updated_at, after.id));
            self.by_updated.insert((after.updated_at, after.id));
        }
        let to = after.status.family();
        if family != to {
            let key = (after.created_at, after.id);
            if let Some(set) = self.by_family.get_mut(&family) {
                set.remove(&key);
            }
            self.by_family.entry(to).or_default().insert(key);
        }
        self.wallet.book(after);
    }
}
