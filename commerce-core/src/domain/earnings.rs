//! What each order earns its account, and the sums a store keeps of them so that a wallet
//! read costs the orders still in their hold period, not every order of the account.
//!
//! An order's earnings depend on the order alone ([`OrderEarnings::of`]); only the split of
//! settled earnings into `held` and `ready` moves with the clock. So a store keeps, per
//! account, the sum of [`OrderEarnings`] by [`EarningsBucket`] in the same atomic operation as
//! every write that changes an order ([`EarningsTotals::rebook`]), and at read time adds up
//! the settled orders delivered within the hold period ([`WalletTotals`]).

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use crate::domain::pieces;
use crate::domain::pricing;
use crate::model::{
    Family, Order, OrderStatus, PayoutState, Totals, Withdrawal, WithdrawalStatus, string_enum,
};
use crate::money::round_money;

string_enum! {
    /// Where an order's earnings sit in its account's wallet.
    EarningsBucket {
        /// Cancelled, returned, or archived without delivery: earns nothing.
        Nothing => "none",
        /// Not yet delivered (pending, confirmed, shipping): counts as `expected`.
        Expected => "expected",
        /// Delivered (also once archived): `held` inside the hold period, `ready` after.
        Settled => "settled",
    }
}

/// What one order earns its account, net of commission, as the order stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct OrderEarnings {
    /// Where the earnings count.
    pub bucket: EarningsBucket,
    /// Profit minus commission.
    pub net: Decimal,
    /// Commission.
    pub commission: Decimal,
}

impl OrderEarnings {
    /// A `OrderEarnings` of its fields, in their order.
    pub fn new(bucket: EarningsBucket, net: Decimal, commission: Decimal) -> Self {
        Self {
            bucket,
            net,
            commission,
        }
    }
}

impl OrderEarnings {
    /// Earns nothing.
    pub const NOTHING: OrderEarnings = OrderEarnings {
        bucket: EarningsBucket::Nothing,
        net: Decimal::ZERO,
        commission: Decimal::ZERO,
    };

    /// The earnings of `order` (docs/wallet.md): on the delivered quantities once delivered, on
    /// the ordered quantities before, nothing once cancelled or returned.
    pub fn of(order: &Order) -> Self {
        if order.delivered_at.is_none() {
            return Self::undelivered(order.status, &order.totals);
        }
        match order.status.family() {
            Family::Delivered | Family::Archived => {
                let (profit, commission) = order_earnings(order);
                Self {
                    bucket: EarningsBucket::Settled,
                    net: profit - commission,
                    commission,
                }
            }
            _ => Self::NOTHING,
        }
    }

    /// The earnings of an order never delivered, from its status and totals alone (an order
    /// being placed).
    pub fn undelivered(status: OrderStatus, totals: &Totals) -> Self {
        match status.family() {
            Family::Pending | Family::Confirmed | Family::Shipping => Self {
                bucket: EarningsBucket::Expected,
                net: totals.profit - totals.income_tax,
                commission: totals.income_tax,
            },
            _ => Self::NOTHING,
        }
    }
}

/// Profit and commission an order earns: on the delivered pieces once delivered (each line's
/// completed count, [`pieces::delivered_pieces`]), on the ordered quantities before, and
/// nothing once cancelled or returned.
pub fn order_earnings(order: &Order) -> (Decimal, Decimal) {
    match order.status.family() {
        Family::Cancelled | Family::Returned => (Decimal::ZERO, Decimal::ZERO),
        _ if order.delivered_at.is_none() => (order.totals.profit, order.totals.income_tax),
        _ => {
            let profit: Decimal = order
                .lines
                .iter()
                .map(|l| l.profit * Decimal::from(pieces::delivered_pieces(order, l)))
                .sum();
            let profit = round_money(profit);
            (
                profit,
                pricing::commission(profit, order.totals.income_tax_percent),
            )
        }
    }
}

/// The sums of one account's [`OrderEarnings`], by bucket, as a store keeps them. Another
/// crate builds it with [`EarningsTotals::new`] (see the store module's docs on building
/// records).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct EarningsTotals {
    /// Net earnings of orders not yet delivered.
    pub expected: Decimal,
    /// Net earnings of delivered orders (held and ready together).
    pub settled: Decimal,
    /// Commission of delivered orders.
    pub settled_commission: Decimal,
}

impl EarningsTotals {
    /// The sums, by bucket.
    pub fn new(expected: Decimal, settled: Decimal, settled_commission: Decimal) -> Self {
        Self {
            expected,
            settled,
            settled_commission,
        }
    }

    /// Moves one order's earnings from `before` to `after` (either may be
    /// [`OrderEarnings::NOTHING`]).
    pub fn rebook(&mut self, before: OrderEarnings, after: OrderEarnings) {
        self.add(before, Decimal::NEGATIVE_ONE);
        self.add(after, Decimal::ONE);
    }

    fn add(&mut self, earnings: OrderEarnings, sign: Decimal) {
        match earnings.bucket {
            EarningsBucket::Nothing => {}
            EarningsBucket::Expected => self.expected += sign * earnings.net,
            EarningsBucket::Settled => {
                self.settled += sign * earnings.net;
                self.settled_commission += sign * earnings.commission;
            }
        }
    }

    /// The sums over `orders`, computed from scratch (the reference the kept sums must equal).
    pub fn of_orders<'a>(orders: impl IntoIterator<Item = &'a Order>) -> Self {
        let mut totals = Self::default();
        for order in orders {
            totals.rebook(OrderEarnings::NOTHING, OrderEarnings::of(order));
        }
        totals
    }
}

/// What a store answers for a wallet read: the kept sums plus the settled orders still in
/// their hold period.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WalletTotals {
    /// The account's kept sums.
    pub totals: EarningsTotals,
    /// Net earnings of settled orders delivered after the hold cut-off.
    pub held: Decimal,
    /// The earliest delivery among them.
    pub earliest_held_delivery: Option<DateTime<Utc>>,
}

impl WalletTotals {
    /// The kept `totals`, plus `held` net earnings of settled orders still in their hold,
    /// the earliest of them delivered at `earliest_held_delivery`.
    pub fn new(
        totals: EarningsTotals,
        held: Decimal,
        earliest_held_delivery: Option<DateTime<Utc>>,
    ) -> Self {
        Self {
            totals,
            held,
            earliest_held_delivery,
        }
    }

    /// The wallet sums over `orders` from scratch, holding orders delivered after `held_after`.
    pub fn of_orders<'a>(
        orders: impl IntoIterator<Item = &'a Order> + Clone,
        held_after: DateTime<Utc>,
    ) -> Self {
        let mut wallet = Self {
            totals: EarningsTotals::of_orders(orders.clone()),
            ..Self::default()
        };
        for order in orders {
            let earnings = OrderEarnings::of(order);
            if let (EarningsBucket::Settled, Some(delivered)) =
                (earnings.bucket, order.delivered_at)
                && delivered > held_after
            {
                wallet.hold(earnings.net, delivered);
            }
        }
        wallet
    }

    /// Held now, as the wallet shows it: the settled net earnings still in their hold, but
    /// never more than what the account has (settled earnings less what was received and
    /// what is pending). A correction that took more than the ready money took the rest from
    /// the held money, so `ready + held` is always what the account has.
    pub fn held_of(&self, withdrawn: Withdrawn) -> Decimal {
        let has = self.totals.settled - withdrawn.received - withdrawn.pending;
        self.held.min(has).max(Decimal::ZERO)
    }

    /// Withdrawable now: settled net earnings past their hold, minus what was received and
    /// what is pending; never below zero.
    pub fn ready(&self, withdrawn: Withdrawn) -> Decimal {
        (self.totals.settled - self.held - withdrawn.received - withdrawn.pending)
            .max(Decimal::ZERO)
    }

    /// These sums and `other`'s added (an account's wallet from its orders and from its
    /// supplier's statement: one of the two is always zero).
    pub fn and(self, other: WalletTotals) -> WalletTotals {
        let (a, b) = (self.totals, other.totals);
        WalletTotals {
            totals: EarningsTotals::new(
                a.expected + b.expected,
                a.settled + b.settled,
                a.settled_commission + b.settled_commission,
            ),
            held: self.held + other.held,
            earliest_held_delivery: match (
                self.earliest_held_delivery,
                other.earliest_held_delivery,
            ) {
                (Some(x), Some(y)) => Some(x.min(y)),
                (x, y) => x.or(y),
            },
        }
    }

    /// Adds one held order.
    pub fn hold(&mut self, net: Decimal, delivered_at: DateTime<Utc>) {
        self.held += net;
        self.earliest_held_delivery = Some(
            self.earliest_held_delivery
                .map_or(delivered_at, |t| t.min(delivered_at)),
        );
    }
}

/// The money a write of an order takes from its marketer's settled earnings (its settled net
/// before less after; zero when the write adds or keeps them): what a correction or a move
/// of a delivered order must still find covered ([`shortfall`]).
pub fn settled_taken(before: OrderEarnings, after: OrderEarnings) -> Decimal {
    let settled = |e: OrderEarnings| match e.bucket {
        EarningsBucket::Settled => e.net,
        _ => Decimal::ZERO,
    };
    (settled(before) - settled(after)).max(Decimal::ZERO)
}

/// The rule a write of an order keeps for its marketer: when it takes `taken` from the
/// account's `settled` earnings (held and ready together), what is left must still cover what
/// was `withdrawn` (paid and pending), or the balance would be negative and the money paid
/// twice. `Some(shortfall)` refuses the write.
pub fn shortfall(settled: Decimal, taken: Decimal, withdrawn: Withdrawn) -> Option<Decimal> {
    let left = settled - taken - withdrawn.received - withdrawn.pending;
    (taken > Decimal::ZERO && left < Decimal::ZERO).then_some(-left)
}

/// What an account has withdrawn or asked to withdraw.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct Withdrawn {
    /// Sum of completed withdrawals.
    pub received: Decimal,
    /// Sum of pending withdrawal requests.
    pub pending: Decimal,
}

impl Withdrawn {
    /// A `Withdrawn` of its fields, in their order.
    pub fn new(received: Decimal, pending: Decimal) -> Self {
        Self { received, pending }
    }
}

impl Withdrawn {
    /// The sums over an account's withdrawals (rejected ones count for nothing).
    pub fn of<'a>(withdrawals: impl IntoIterator<Item = &'a Withdrawal>) -> Self {
        let mut sums = Self::default();
        for w in withdrawals {
            match w.status {
                WithdrawalStatus::Completed => sums.received += w.amount,
                WithdrawalStatus::Pending => sums.pending += w.amount,
                WithdrawalStatus::Rejected => {}
            }
        }
        sums
    }
}

/// How the payout of an order is computed: now, and the days an order's money is held after
/// delivery. Built with [`PayoutRules::new`], which checks the days (0 to
/// [`MAX_HOLD_DAYS`]), so that no date sum can overflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PayoutRules {
    now: DateTime<Utc>,
    hold_days: i64,
}

/// Longest hold period, in days (ten years): [`PayoutRules::new`] and
/// [`Config::hold_days`](crate::config::Config::hold_days) accept 0 to this.
pub const MAX_HOLD_DAYS: i64 = 3650;

/// Why [`PayoutRules::new`] refused its days.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("hold_days must be within 0 and {MAX_HOLD_DAYS}, not {0}")]
#[non_exhaustive]
pub struct HoldDaysOutOfRange(pub i64);

impl HoldDaysOutOfRange {
    /// A `HoldDaysOutOfRange` of its value.
    pub fn new(value: i64) -> Self {
        Self(value)
    }
}

impl PayoutRules {
    /// The rules at `now` with money held `hold_days` after delivery (0 to
    /// [`MAX_HOLD_DAYS`]).
    pub fn new(now: DateTime<Utc>, hold_days: i64) -> Result<Self, HoldDaysOutOfRange> {
        if (0..=MAX_HOLD_DAYS).contains(&hold_days) {
            Ok(Self { now, hold_days })
        } else {
            Err(HoldDaysOutOfRange(hold_days))
        }
    }

    /// The rules of settings already checked ([`Config::validate`](crate::config::Config::validate)):
    /// days outside the range are brought to its nearest end rather than trusted.
    pub(crate) fn clamped(now: DateTime<Utc>, hold_days: i64) -> Self {
        Self {
            now,
            hold_days: hold_days.clamp(0, MAX_HOLD_DAYS),
        }
    }

    /// Now.
    pub fn now(self) -> DateTime<Utc> {
        self.now
    }

    /// Days between delivery and readiness.
    pub fn hold_days(self) -> i64 {
        self.hold_days
    }

    fn hold(self) -> chrono::Duration {
        chrono::Duration::days(self.hold_days)
    }

    /// Orders delivered after this instant are still held.
    pub fn held_after(self) -> DateTime<Utc> {
        self.now
            .checked_sub_signed(self.hold())
            .unwrap_or(DateTime::<Utc>::MIN_UTC)
    }

    /// When money delivered at `delivered` is ready (the last instant there is, past it).
    pub fn ready_at(self, delivered: DateTime<Utc>) -> DateTime<Utc> {
        delivered
            .checked_add_signed(self.hold())
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }

    /// The payout state and ready date of an order: expected until delivered, held for
    /// `hold_days` after delivery, then ready.
    pub fn payout(self, order: &Order) -> (PayoutState, Option<DateTime<Utc>>) {
        self.payout_of(order.status, order.delivered_at)
    }

    /// [`payout`](Self::payout) of an order in `status` delivered at `delivered_at`: all the
    /// payout depends on, besides now.
    pub fn payout_of(
        self,
        status: OrderStatus,
        delivered_at: Option<DateTime<Utc>>,
    ) -> (PayoutState, Option<DateTime<Utc>>) {
        let ready_at = delivered_at.map(|d| self.ready_at(d));
        let state = match (status.family(), ready_at) {
            (Family::Pending | Family::Confirmed | Family::Shipping, _) => PayoutState::Expected,
            (Family::Delivered | Family::Archived, Some(ready)) if self.now < ready => {
                PayoutState::Held
            }
            (Family::Delivered | Family::Archived, Some(_)) => PayoutState::Ready,
            _ => PayoutState::None,
        };
        (state, ready_at)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Days out of range are refused where the rules are built (they reached
    /// `Duration::days` unchecked when the fields were public: a panic), and the sums at the
    /// ends of time saturate instead of overflowing.
    #[test]
    fn payout_rules_are_checked_where_built_and_never_overflow() {
        let now = Utc::now();
        for days in [-1, MAX_HOLD_DAYS + 1, i64::MAX, i64::MIN] {
            assert_eq!(PayoutRules::new(now, days), Err(HoldDaysOutOfRange(days)));
        }
        let rules = PayoutRules::new(now, MAX_HOLD_DAYS).expect("in range");
        assert_eq!((rules.now(), rules.hold_days()), (now, MAX_HOLD_DAYS));
        assert_eq!(
            rules.ready_at(DateTime::<Utc>::MAX_UTC),
            DateTime::<Utc>::MAX_UTC
        );
        let early = PayoutRules::new(DateTime::<Utc>::MIN_UTC, MAX_HOLD_DAYS).expect("in range");
        assert_eq!(early.held_after(), DateTime::<Utc>::MIN_UTC);
        let (state, ready) =
            early.payout_of(OrderStatus::Delivered, Some(DateTime::<Utc>::MAX_UTC));
        assert_eq!(
            (state, ready),
            (PayoutState::Held, Some(DateTime::<Utc>::MAX_UTC))
        );
        assert_eq!(
            PayoutRules::clamped(now, i64::MAX).hold_days(),
            MAX_HOLD_DAYS
        );
        assert_eq!(PayoutRules::clamped(now, -5).hold_days(), 0);
    }
}
