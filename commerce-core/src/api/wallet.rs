//! `GET /wallet`: the wallet figures (decisions 5) and the withdrawal window.

use bytes::Bytes;
use chrono::{DateTime, Datelike, Days, Duration, NaiveDate, NaiveTime, TimeZone, Utc, Weekday};
use chrono_tz::Africa::Cairo;
use http::Response;
use rust_decimal::Decimal;
use serde_json::json;

use crate::earnings::WalletTotals;
use crate::engine::Ctx;
use crate::error::ApiError;
use crate::messages;
use crate::model::{Order, Withdrawal, WithdrawalStatus};
use crate::money::money_string;
use crate::time::{CAIRO_TZ_NAME, cairo_timestamp};
use crate::wire::PayoutRules;

/// The days withdrawals can be requested, in Cairo time.
pub const WITHDRAWAL_DAYS: [Weekday; 2] = [Weekday::Sun, Weekday::Thu];

/// An account's wallet, net of commission.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct WalletFigures {
    /// Net profit of orders not yet delivered.
    pub expected: Decimal,
    /// Net profit of delivered orders inside the hold.
    pub held: Decimal,
    /// Earliest ready date of the held orders.
    pub next_ready_at: Option<DateTime<Utc>>,
    /// Withdrawable now: ready or paid net profit minus received minus pending withdrawals.
    pub ready: Decimal,
    /// Sum of completed withdrawals.
    pub received: Decimal,
    /// Commission of delivered orders.
    pub total_commission: Decimal,
    /// Pending withdrawal requests.
    pub pending_withdrawals: Vec<Withdrawal>,
    /// Their sum.
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
    pub fn from_totals(
        wallet: WalletTotals,
        withdrawals: &[Withdrawal],
        rules: PayoutRules,
    ) -> Self {
        let totals = wallet.totals;
        let mut figures = WalletFigures {
            expected: totals.expected,
            held: wallet.held,
            next_ready_at: wallet
                .earliest_held_delivery
                .map(|delivered| delivered + Duration::days(rules.hold_days)),
            total_commission: totals.settled_commission,
            ..WalletFigures::default()
        };
        let earned_ready = totals.settled - wallet.held;
        for w in withdrawals {
            match w.status {
                WithdrawalStatus::Completed => figures.received += w.amount,
                WithdrawalStatus::Pending => {
                    figures.pending_amount += w.amount;
                    figures.pending_withdrawals.push(w.clone());
                }
                WithdrawalStatus::Rejected => {}
            }
        }
        figures.ready =
            (earned_ready - figures.received - figures.pending_amount).max(Decimal::ZERO);
        figures
    }
}

/// The current or next withdrawal window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WithdrawalWindow {
    /// Whether today (Cairo) is a withdrawal day.
    pub open: bool,
    /// Start of the current window when open, else of the next.
    pub opens_at: DateTime<Utc>,
    /// End of that window.
    pub closes_at: DateTime<Utc>,
}

/// The first instant of a Cairo calendar day (midnight, or the first hour that exists when a
/// daylight-saving change skips midnight).
fn start_of_cairo_day(date: NaiveDate) -> DateTime<Utc> {
    (0..3)
        .find_map(|hour| {
            let time = NaiveTime::from_hms_opt(hour, 0, 0)?;
            Cairo.from_local_datetime(&date.and_time(time)).earliest()
        })
        .map(|t| t.with_timezone(&Utc))
        .unwrap_or_else(|| date.and_time(NaiveTime::MIN).and_utc())
}

/// The withdrawal window at `now` (days in [`WITHDRAWAL_DAYS`], Cairo time).
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

fn withdrawal_item(w: &Withdrawal) -> serde_json::Value {
    json!({
        "id": w.id,
        "amount": money_string(w.amount),
        "supply_amount": money_string(w.supply_amount),
        "status": {"key": w.status.as_str(), "label": messages::withdrawal_status_label(w.status)},
        "wallet_number": w.wallet_number,
        "wallet_description": w.wallet_description,
        "notes": w.notes,
        "transfer_reference": w.transfer_reference,
        "receipt_url": w.receipt_url,
        "created_at": cairo_timestamp(w.created_at),
        "decided_at": w.decided_at.map(cairo_timestamp),
    })
}

pub(super) async fn show(ctx: &Ctx<'_>) -> Result<Response<Bytes>, ApiError> {
    let account = &ctx.caller.account;
    let rules = ctx.payout_rules();
    let totals = ctx
        .store()
        .wallet_totals(account.id, rules.held_after())
        .await?;
    let withdrawals = ctx.store().withdrawals(account.id).await?;
    let f = WalletFigures::from_totals(totals, &withdrawals, rules);
    let window = withdrawal_window(ctx.now);
    let config = ctx.config();
    super::ok_data(&json!({
        "side": account.side.as_str(),
        "currency": "EGP",
        "income_tax_percent": money_string(config.commission_percent),
        "ready": money_string(f.ready),
        "held": {"amount": money_string(f.held), "next_ready_at": f.next_ready_at.map(cairo_timestamp)},
        "expected": money_string(f.expected),
        "referral": {
            "percent": money_string(config.referral_percent),
            "earned": money_string(Decimal::ZERO),
            "expected": money_string(Decimal::ZERO),
        },
        "received": money_string(f.received),
        "total_commission": money_string(f.total_commission),
        "pending_withdrawals": {
            "count": f.pending_withdrawals.len(),
            "amount": money_string(f.pending_amount),
            "items": f.pending_withdrawals.iter().map(withdrawal_item).collect::<Vec<_>>(),
        },
        "withdrawal": {
            "open": window.open,
            "days": WITHDRAWAL_DAYS.iter().map(|d| match d { Weekday::Sun => "sunday", _ => "thursday" }).collect::<Vec<_>>(),
            "timezone": CAIRO_TZ_NAME,
            "opens_at": cairo_timestamp(window.opens_at),
            "closes_at": cairo_timestamp(window.closes_at),
            "minimum": money_string(config.withdrawal_minimum),
            "minimum_currency": "EGP",
            "note": messages::WITHDRAWAL_WINDOW_NOTE,
        },
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

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
