//! The sandbox's test mode ([`Config::test_mode`](crate::config::Config::test_mode)):
//! `POST /sandbox/orders/{id}/status` (the platform's move of one of the caller's orders) and
//! `GET`/`POST /sandbox/clock` (the sandbox's clock). The dispatch table serves these only in
//! test mode; any other engine answers them 404 as unknown paths.

use bytes::Bytes;
use chrono::Duration;
use http::Response;
use serde_json::{Map, Value, json};

use super::Ctx;
use crate::domain::moves::{self, Move, MoveError};
use crate::domain::pieces::OutcomeReport;
use crate::error::{ApiError, ConflictReason, FieldErrors};
use crate::limits::{
    MAX_CLOCK_ADVANCE_SECONDS, MAX_CLOCK_AHEAD_SECONDS, MAX_LINES, MAX_QUANTITY, MAX_REASON,
};
use crate::model::*;
use crate::render::messages;
use crate::render::wire::OrderView;
use crate::store::StoreError;
use crate::time::cairo_timestamp;
use crate::web::input::{Fields, json_object};

/// The body of a move: the status, the reason, the line outcomes.
struct MoveBody {
    to: OrderStatus,
    reason: Option<String>,
    outcomes: Vec<(LineId, OutcomeReport)>,
}

/// A count of an outcome: absent, or an integer within 0 and the largest line quantity.
fn count(f: &mut Fields<'_>, name: &str) -> Option<i64> {
    f.raw(name)?;
    f.required_integer(name, 0, MAX_QUANTITY)
}

/// The `lines` of a move: each an object naming a line `id` and its counts.
fn read_outcomes(
    object: &Map<String, Value>,
    errors: &mut FieldErrors,
) -> Vec<(LineId, OutcomeReport)> {
    let Some(value) = object.get("lines").filter(|v| !v.is_null()) else {
        return Vec::new();
    };
    let fail = |errors: &mut FieldErrors, key: String, message: &str| {
        errors.entry(key).or_default().push(message.to_owned());
    };
    let Some(items) = value.as_array() else {
        fail(errors, "lines".into(), messages::MUST_BE_ARRAY);
        return Vec::new();
    };
    if items.len() > MAX_LINES {
        fail(errors, "lines".into(), messages::LINES_COUNT);
        return Vec::new();
    }
    let mut outcomes = Vec::with_capacity(items.len());
    for (index, item) in items.iter().enumerate() {
        let Some(line) = item.as_object() else {
            fail(errors, format!("lines.{index}"), messages::MUST_BE_OBJECT);
            continue;
        };
        let mut f = Fields::new(line, format!("lines.{index}."), errors);
        let id = f.required_integer("id", 1, i64::MAX);
        // Each count given replaces the line's; one left out keeps it.
        let outcome = OutcomeReport::builder()
            .maybe_delivered(count(&mut f, "delivered_quantity"))
            .maybe_returned(count(&mut f, "returned_quantity"))
            .maybe_damaged(count(&mut f, "damaged_quantity"))
            .maybe_lost(count(&mut f, "lost_quantity"))
            .maybe_destroyed(count(&mut f, "destroyed_quantity"))
            .build();
        if let Some(id) = id {
            outcomes.push((LineId::new(id), outcome));
        }
    }
    outcomes
}

fn read_move(object: &Map<String, Value>) -> Result<MoveBody, ApiError> {
    let mut errors = FieldErrors::new();
    let mut f = Fields::new(object, String::new(), &mut errors);
    let to = match f.raw("status") {
        None => {
            f.fail("status", messages::REQUIRED);
            None
        }
        Some(value) => {
            let status = value.as_str().and_then(OrderStatus::parse);
            if status.is_none() {
                f.fail("status", messages::UNKNOWN_VALUE);
            }
            status
        }
    };
    let reason = f.optional_text("reason", MAX_REASON);
    let outcomes = read_outcomes(object, &mut errors);
    match to {
        Some(to) if errors.is_empty() => Ok(MoveBody {
            to,
            reason,
            outcomes,
        }),
        _ => Err(ApiError::validation(errors)),
    }
}

/// `POST /sandbox/orders/{id}/status`: the move the platform would make, on the caller's own
/// order (another account's is 404); not billed.
pub(super) async fn move_order(
    ctx: &Ctx<'_>,
    id: OrderId,
    body: &Bytes,
) -> Result<Response<Bytes>, ApiError> {
    let object = json_object(body, false)?;
    let body = read_move(&object)?;
    let change = Move {
        account_id: Some(ctx.caller.account.id),
        order_id: id,
        to: body.to,
        reason: body.reason,
        outcomes: body.outcomes,
        at: ctx.now,
    };
    match moves::apply(ctx.store(), change, ctx.config(), "lines").await {
        Ok(order) => super::ok_data(&OrderView::new(&order, ctx.payout_rules())),
        Err(MoveError::NotFound) => Err(ApiError::not_found()),
        Err(MoveError::UnknownLine { index }) => Err(ApiError::field(
            format!("lines.{index}.id"),
            messages::LINE_NOT_IN_ORDER,
        )),
        Err(MoveError::Invalid(problem)) => Err(ApiError::field(
            problem.field,
            messages::problem(problem.problem),
        )),
        // `Changed`: other writes kept coming between the read and the move (it was tried
        // again each time): the move cannot be made on the order as read.
        Err(MoveError::NotAllowed { .. } | MoveError::Store(StoreError::Changed)) => Err(
            ApiError::conflict(ConflictReason::MoveNotAllowed, messages::MOVE_NOT_ALLOWED),
        ),
        Err(MoveError::Store(
            StoreError::StockShortfall { .. }
            | StoreError::SupplierShortfall { .. }
            | StoreError::MarketerShortfall { .. },
        )) => Err(ApiError::field("lines", messages::CORRECTION_SHORTFALL)),
        Err(MoveError::Store(error)) => Err(ApiError::from_store(error, "sandbox move")),
    }
}

/// `{"data": {"now": ...}}`.
fn clock_body(now: chrono::DateTime<chrono::Utc>) -> Result<Response<Bytes>, ApiError> {
    super::ok_data(&json!({ "now": cairo_timestamp(now) }))
}

/// `GET /sandbox/clock`.
pub(super) fn clock(ctx: &Ctx<'_>) -> Result<Response<Bytes>, ApiError> {
    clock_body(ctx.now)
}

/// `POST /sandbox/clock`: moves the sandbox's clock forward by `advance_seconds`, for every
/// caller and the webhook dispatcher alike.
pub(super) fn advance_clock(ctx: &Ctx<'_>, body: &Bytes) -> Result<Response<Bytes>, ApiError> {
    let Some(test_clock) = &ctx.shared.test_clock else {
        return Err(ApiError::not_found().with_message(messages::ROUTE_NOT_FOUND));
    };
    let object = json_object(body, false)?;
    let mut errors = FieldErrors::new();
    let seconds = Fields::new(&object, String::new(), &mut errors).required_integer(
        "advance_seconds",
        1,
        MAX_CLOCK_ADVANCE_SECONDS,
    );
    let Some(seconds) = seconds.filter(|_| errors.is_empty()) else {
        return Err(ApiError::validation(errors));
    };
    let most = Duration::seconds(MAX_CLOCK_AHEAD_SECONDS);
    match test_clock.advance(Duration::seconds(seconds), most) {
        Ok(now) => clock_body(now),
        Err(room) => Err(ApiError::field(
            "advance_seconds",
            messages::clock_too_far_ahead(room.num_seconds()),
        )),
    }
}
