//! `GET /wallet`: the wallet figures and the withdrawal window (a marketer's from its orders,
//! a supplier's from its statement).

use bytes::Bytes;
use chrono::Weekday;
use http::Response;
use rust_decimal::Decimal;
use serde_json::json;

use super::Ctx;
use crate::domain::wallet::{WITHDRAWAL_DAYS, WalletFigures, withdrawal_window};
use crate::error::ApiError;
use crate::model::{Side, Withdrawal};
use crate::money::money_string;
use crate::render::messages;
use crate::render::wire::WithdrawalView;
use crate::time::{CAIRO_TZ_NAME, cairo_timestamp};

/// A withdrawal as the API renders it (the `withdrawal.updated` event's shape too).
fn withdrawal_item(w: &Withdrawal) -> serde_json::Value {
    serde_json::to_value(WithdrawalView::new(w)).expect("views always serialise")
}

pub(super) async fn show(ctx: &Ctx<'_>) -> Result<Response<Bytes>, ApiError> {
    let account = &ctx.caller.account;
    let rules = ctx.payout_rules();
    let totals = ctx
        .store()
        .wallet_totals(account.id, rules.held_after())
        .await
        .map_err(|e| ApiError::from_store(e, "held_after"))?;
    let withdrawals = ctx
        .store()
        .withdrawals(account.id)
        .await
        .map_err(|e| ApiError::from_store(e, "withdrawals"))?;
    let f = WalletFigures::from_totals(totals, &withdrawals, rules);
    let window = withdrawal_window(ctx.now);
    let config = ctx.config();
    // A supplier is paid the supply price of its delivered pieces: no commission, no referral.
    let supplier = account.side == Side::Supplier;
    let (commission_percent, referral_percent) = if supplier {
        (Decimal::ZERO, Decimal::ZERO)
    } else {
        (config.commission_percent, config.referral_percent)
    };
    super::ok_data(&json!({
        "side": account.side.as_str(),
        "currency": "EGP",
        "income_tax_percent": money_string(commission_percent),
        "ready": money_string(f.ready),
        "held": {"amount": money_string(f.held), "next_ready_at": f.next_ready_at.map(cairo_timestamp)},
        "expected": money_string(f.expected),
        "referral": {
            "percent": money_string(referral_percent),
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
