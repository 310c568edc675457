//! The wallet: an account's figures from the sums its store keeps, the payout rule of an
//! order, and the withdrawal window.

use chrono::{DateTime, Datelike, Days, NaiveDate, NaiveTime, TimeZone, Utc, Weekday};
use chrono_tz::Africa::Cairo;
use rust_decimal::Decimal;

use crate::domain::earnings::{PayoutRules, WalletTotals, Withdrawn};
use crate::model::{Order, Withdrawal, WithdrawalStatus};
use crate::money::round_money;

/// The days withdrawals can be requested, in Cairo time.
pub(crate) const WITHDRAWAL_DAYS: [Weekday; 2] = [Weekday::Sun, Weekday::Thu];

/// An account's wallet, net of commission.
#[derive(Debug, Clone, Default, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct WalletFigures {
    /// Net profit of orders not yet delivered.
    #[builder(default)]
    pub expected: Decimal,
    /// Net profit of delivered orders inside the hold.
    #[builder(default)]
    pub held: Decimal,
    /// Earliest ready date of the held orders; `None` when `held` shows zero (a correction
    /// took the held money, and nothing is held to be ready).
    pub next_ready_at: Option<DateTime<Utc>>,
    /// Withdrawable now: ready or paid net profit minus received minus pending withdrawals.
    #[builder(default)]
    pub ready: Decimal,
    /// Sum of completed withdrawals.
    #[builder(default)]
    pub received: Decimal,
    /// Commission of delivered orders.
    #[builder(default)]
    pub total_commission: Decimal,
    /// Pending withdrawal requests.
    #[builder(default)]
    pub pending_withdrawals: Vec<Withdrawal>,
    /// Their sum.
    #[builder(default)]
    pub pending_amount: Decimal,
}

impl WalletFigures {
    /// Computes the wallet from all of an account's orders and withdrawals (the reference
    /// the store's kept sums are checked against).
    pub fn compute(orders: &[Order], withdrawals: &[Withdrawal], rules: PayoutRules) -> Self {
        Self::from_totals(
            WalletTotals::of_orders(orders, rules.held_after()),
            withdrawals,
            rules,
        )
    }

    /// The wallet from the sums a store keeps ([`Store::wallet_totals`]) and the withdrawals.
    ///
    /// [`Store::wallet_totals`]: crate::store::OrderStore::wallet_totals
    pub(crate) fn from_totals(
        wallet: WalletTotals,
        withdrawals: &[Withdrawal],
        rules: PayoutRules,
    ) -> Self {
        let totals = wallet.totals;
        let withdrawn = Withdrawn::of(withdrawals);
        let held = wallet.held_of(withdrawn);
        let mut figures = WalletFigures {
            expected: totals.expected,
            held,
            next_ready_at: wallet
                .earliest_held_delivery
                .filter(|_| round_money(held) > Decimal::ZERO)
                .map(|delivered| rules.ready_at(delivered)),
            total_commission: totals.settled_commission,
            ..WalletFigures::default()
        };
        figures.received = withdrawn.received;
        figures.pending_amount = withdrawn.pending;
        figures.pending_withdrawals = withdrawals
            .iter()
            .filter(|w| w.status == WithdrawalStatus::Pending)
            .cloned()
            .collect();
        figures.ready = wallet.ready(withdrawn);
        figures
    }
}

/// The current or next withdrawal window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct WithdrawalWindow {
    /// Whether today (Cairo) is a withdrawal day.
    pub open: bool,
    /// Start of the current window when open, else of the next.
    pub opens_at: DateTime<Utc>,
    /// End of that window.
    pub closes_at: DateTime<Utc>,
}

impl WithdrawalWindow {
    /// A `WithdrawalWindow` of its fields, in their order.
    pub fn new(open: bool, opens_at: DateTime<Utc>, closes_at: DateTime<Utc>) -> Self {
        Self {
            open,
            opens_at,
            closes_at,
        }
    }
}

/// The first instant of a Cairo calendar day (midnight, or the first hour that exists when a
/// daylight-saving change skips midnight).
pub(crate) fn start_of_cairo_day(date: NaiveDate) -> DateTime<Utc> {
    (0..3)
        .find_map(|hour| {
            let time = NaiveTime::from_hms_opt(hour, 0, 0)?;
            Cairo.from_local_datetime(&date.and_time(time)).earliest()
        })
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|| date.and_time(NaiveTime::MIN).and_utc())
}

/// The withdrawal window at `now` (Sundays and Thursdays, Cairo time).
pub fn withdrawal_window(now: DateTime<Utc>) -> WithdrawalWindow {
    let today = now.with_timezone(&Cairo).date_naive();
    let open = WITHDRAWAL_DAYS.contains(&today.weekday());
    let day = (0..7)
        .filter_map(|n| today.checked_add_days(Days::new(n)))
        .find(|d| WITHDRAWAL_DAYS.contains(&d.weekday()))
        .unwrap_or(today);
    let next = day.succ_opt().unwrap_or(day);
    WithdrawalWindow {
        open,
        opens_at: start_of_cairo_day(day),
        closes_at: start_of_cairo_day(next),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::SupplierTotals;
    use crate::time::cairo_timestamp;

    #[test]
    fn nothing_is_ready_next_when_the_held_amount_shows_zero() {
        let now = Utc.with_ymd_and_hms(2026, 11, 22, 8, 0, 0).unwrap();
        let rules = PayoutRules::new(now, 14).unwrap();
        let delivered = Some(now - chrono::Duration::days(2));
        let figures = |held: &str, balance: &str| {
            let totals = SupplierTotals::new(
                Decimal::ZERO,
                balance.parse().unwrap(),
                balance.parse().unwrap(),
                2,
            );
            let wallet = totals.wallet(held.parse().unwrap(), delivered);
            WalletFigures::from_totals(wallet, &[], rules)
        };
        // A correction took the balance to zero: the held 40.00 is clamped to 0.00.
        let clamped = figures("40.00", "0.00");
        assert_eq!(clamped.held, Decimal::ZERO);
        assert_eq!(clamped.next_ready_at, None);
        // Held money keeps its ready date.
        let held = figures("40.00", "40.00");
        assert_eq!(held.held, Decimal::from(40));
        assert_eq!(held.next_ready_at, delivered.map(|d| rules.ready_at(d)));
    }

    /// A marketer withdrew its ready 30.24, then a correction took that delivery's 30.24
    /// back, covered by a later delivery's 30.24 still in its hold: the account has 0.00, so
    /// the held money shows 0.00 (it was taken), with no ready date, and `ready + held` is
    /// what the account has.
    #[test]
    fn held_money_a_correction_took_shows_taken() {
        let now = Utc.with_ymd_and_hms(2026, 11, 22, 8, 0, 0).unwrap();
        let rules = PayoutRules::new(now, 14).unwrap();
        let amount: Decimal = "30.24".parse().unwrap();
        let delivered = now - chrono::Duration::days(2);
        let wallet = WalletTotals::new(
            crate::domain::earnings::EarningsTotals::new(Decimal::ZERO, amount, Decimal::ZERO),
            amount,
            Some(delivered),
        );
        let paid = Withdrawal::builder()
            .id(crate::model::WithdrawalId::new(1))
            .account_id(crate::model::AccountId::new(1))
            .amount(amount)
            .supply_amount(Decimal::ZERO)
            .status(WithdrawalStatus::Completed)
            .wallet_number("01012345678".into())
            .wallet_description("فودافون كاش".into())
            .created_at(now)
            .build();
        let figures = WalletFigures::from_totals(wallet, &[paid], rules);
        assert_eq!(
            (figures.ready, figures.held),
            (Decimal::ZERO, Decimal::ZERO)
        );
        assert_eq!(figures.next_ready_at, None);
        // Without the withdrawal, the same held money shows, with its ready date.
        let figures = WalletFigures::from_totals(wallet, &[], rules);
        assert_eq!((figures.ready, figures.held), (Decimal::ZERO, amount));
        assert_eq!(figures.next_ready_at, Some(rules.ready_at(delivered)));
    }

    #[test]
    fn window_is_open_on_sunday_and_thursday_in_cairo() {
        // Sunday 22 Nov 2026, 10:00 Cairo (+02:00).
        let sunday = Utc.with_ymd_and_hms(2026, 11, 22, 8, 0, 0).unwrap();
        let w = withdrawal_window(sunday);
        assert!(w.open);
        assert_eq!(cairo_timestamp(w.opens_at), "2026-11-22T00:00:00+02:00");
        assert_eq!(cairo_timestamp(w.closes_at), "2026-11-23T00:00:00+02:00");
        // Monday: closed, next window Thursday.
        let monday = Utc.with_ymd_and_hms(2026, 11, 23, 8, 0, 0).unwrap();
        let w = withdrawal_window(monday);
        assert!(!w.open);
        assert_eq!(cairo_timestamp(w.opens_at), "2026-11-26T00:00:00+02:00");
        // Saturday 23:30 UTC is already Sunday in Cairo.
        let late = Utc.with_ymd_and_hms(2026, 11, 21, 23, 30, 0).unwrap();
        assert!(withdrawal_window(late).open);
    }
}
