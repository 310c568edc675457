//! `GET /statement`: a supplier's statement, newest first.

use bytes::Bytes;
use http::Response;
use serde_json::{Value, json};

use crate::api::Ctx;
use crate::domain::earnings::PayoutRules;
use crate::domain::wallet::start_of_cairo_day;
use crate::error::ApiError;
use crate::model::{StatementEntry, StatementEntryType, StatementFilter};
use crate::money::money_string;
use crate::time::cairo_timestamp;
use crate::web::input::Query;

/// One entry as the API shows it: the order by id and number only (never its customer).
pub(crate) fn entry_json(entry: &StatementEntry, rules: PayoutRules) -> Value {
    let order = entry
        .order_id
        .map(|id| json!({"id": id, "number": entry.order_number}));
    let ready_at = match entry.kind {
        StatementEntryType::Delivery => entry
            .delivered_at
            .map(|delivered| rules.ready_at(delivered)),
        _ => None,
    };
    json!({
        "id": entry.id,
        "type": entry.kind.as_str(),
        "order": order,
        "variant_id": entry.variant_id,
        "quantity": entry.quantity,
        "unit_price": entry.unit_price.map(money_string),
        "amount": money_string(entry.amount),
        "direction": entry.direction.as_str(),
        "balance": money_string(entry.balance),
        "ready_at": ready_at.map(cairo_timestamp),
        "at": cairo_timestamp(entry.at),
    })
}

pub(in crate::api) async fn list(
    ctx: &Ctx<'_>,
    raw_query: Option<&str>,
) -> Result<Response<Bytes>, ApiError> {
    let mut query = Query::parse(raw_query);
    let page = query.page();
    // Cairo days: `from` from its first instant, `to` up to the first instant of the next.
    let from = query.date("from").map(start_of_cairo_day);
    let to = query
        .date("to")
        .map(|day| start_of_cairo_day(day.succ_opt().unwrap_or(day)));
    query.finish()?;
    let found = ctx
        .store()
        .statement(ctx.caller.account.id, &StatementFilter::new(from, to), page)
        .await
        .map_err(|e| ApiError::from_store(e, "statement"))?;
    let rules = ctx.payout_rules();
    let items: Vec<Value> = found
        .items
        .iter()
        .map(|entry| entry_json(entry, rules))
        .collect();
    crate::api::ok_list(&items, page, found.total)
}
