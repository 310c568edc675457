//! `GET /orders`, `GET /orders/{id}`, `POST /orders`, `POST /orders/{id}/cancel`.

use bytes::Bytes;
use http::{HeaderMap, Response, StatusCode};
use serde_json::{Map, Value};

use super::Ctx;
use super::checkout::{self, Purpose};
use super::idempotency;
use crate::domain::placement::{self, OrderRequest, PlaceError};
use crate::error::{ApiError, ConflictReason, FieldErrors};
use crate::limits::{MAX_NOTE, MAX_REASON, MAX_REFERENCE, MAX_TEXT};
use crate::model::*;
use crate::render::messages;
use crate::render::wire::{self, OrderView};
use crate::store::{StatusChange, StatusChangeError};
use crate::web::input::{Fields, Query, json_object};

pub(super) async fn list(
    ctx: &Ctx<'_>,
    raw_query: Option<&str>,
) -> Result<Response<Bytes>, ApiError> {
    let mut query = Query::parse(raw_query);
    let page = query.page();
    let filter = OrderFilter {
        status: query.one_of("status", OrderStatus::parse),
        family: query.one_of("family", Family::parse),
        external_reference: query.string("external_reference"),
        number: query.string("number").map(|n| normalize_order_number(&n)),
        updated_since: query.timestamp("updated_since"),
    };
    query.finish()?;
    // The engine's caching store answers from the kept JSON of the versions listed.
    let body = ctx
        .shared
        .store
        .order_page(ctx.caller.account.id, &filter, page, ctx.payout_rules())
        .await
        .map_err(|e| ApiError::from_store(e, "order_page"))?;
    Ok(wire::json_response(StatusCode::OK, body))
}

pub(super) async fn show(ctx: &Ctx<'_>, id: OrderId) -> Result<Response<Bytes>, ApiError> {
    let order = ctx
        .store()
        .order(Some(ctx.caller.account.id), id)
        .await
        .map_err(|e| ApiError::from_store(e, "order"))?
        .ok_or_else(ApiError::not_found)?;
    super::ok_data(&OrderView::new(&order, ctx.payout_rules()))
}

fn read_order(object: &Map<String, Value>) -> Result<OrderRequest, ApiError> {
    let mut errors = FieldErrors::new();
    let mut f = Fields::new(object, String::new(), &mut errors);
    let external_reference = f.optional_string("external_reference", MAX_REFERENCE);
    let full_name = f.required_string("full_name", MAX_TEXT);
    let phone = f.required_phone("phone");
    let second_phone = f.optional_phone("second_phone");
    let address = f.required_text("address", MAX_TEXT);
    let store_name = f.optional_string("store_name", MAX_TEXT);
    let store_link = f.optional_url("store_link", MAX_TEXT);
    let note = f.optional_text("note", MAX_NOTE);
    let checkout = checkout::read(object, Purpose::Order, &mut errors);
    match (full_name, phone, address, checkout) {
        (Some(full_name), Some(phone), Some(address), Some(checkout)) if errors.is_empty() => {
            Ok(OrderRequest {
                external_reference,
                full_name,
                phone,
                second_phone,
                address,
                store_name,
                store_link,
                note,
                checkout,
                legacy_number: None,
                billed: true,
            })
        }
        _ => Err(ApiError::validation(errors)),
    }
}

fn created(order: &Order, ctx: &Ctx<'_>, mount: &str) -> Response<Bytes> {
    let body = wire::data_body(&OrderView::new(order, ctx.payout_rules()));
    idempotency::created(mount, "orders", order.id.get(), body)
}

fn duplicate(existing_id: OrderId, existing_number: String) -> ApiError {
    ApiError::conflict(
        ConflictReason::DuplicateExternalReference,
        messages::DUPLICATE_EXTERNAL_REFERENCE,
    )
    .with_extra("existing_order_id", existing_id.get())
    .with_extra("existing_order_number", existing_number)
}

/// `POST /orders`: under the idempotency protocol ([`idempotency::run`]); every response says
/// whether it is a replay.
pub(super) async fn create(
    ctx: &Ctx<'_>,
    mount: &str,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response<Bytes>, ApiError> {
    let place = ("/api/v1/orders", "orders", mount);
    let (create, request) = idempotency::Create::read(place, headers, body, read_order)?;
    let perform = |claim| register(ctx, mount, request, claim);
    let recover = |id| async move {
        let order = ctx
            .store()
            .order(Some(ctx.caller.account.id), id)
            .await
            .map_err(|e| ApiError::from_store(e, "order"))?
            .ok_or_else(ApiError::server)?;
        Ok(created(&order, ctx, mount))
    };
    idempotency::run(ctx, create, perform, recover).await
}

/// Checks, prices and registers an order; 201 with the order.
async fn register(
    ctx: &Ctx<'_>,
    mount: &str,
    request: OrderRequest,
    idempotency: Option<IdempotencyClaim>,
) -> Result<Response<Bytes>, ApiError> {
    let order = placement::place(
        ctx.store(),
        &ctx.shared.kept_products,
        ctx.caller.account.id,
        request,
        ctx.now,
        ctx.config(),
        idempotency,
    )
    .await?;
    Ok(created(&order, ctx, mount))
}

pub(super) async fn cancel(
    ctx: &Ctx<'_>,
    id: OrderId,
    body: &Bytes,
) -> Result<Response<Bytes>, ApiError> {
    let object = json_object(body, true)?;
    let mut errors = FieldErrors::new();
    let reason =
        Fields::new(&object, String::new(), &mut errors).optional_text("reason_note", MAX_REASON);
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    let change = StatusChange {
        account_id: Some(ctx.caller.account.id),
        order_id: id,
        to: OrderStatus::RejectedByMarketer,
        only_from: vec![OrderStatus::Pending],
        reason,
        outcomes: Vec::new(),
        read_at: None,
        at: ctx.now,
        bill_month: Some(BillingMonth::of(ctx.now)),
        events: ctx.config().event_context(),
    };
    match ctx.store().change_order_status(change).await {
        Ok(order) => super::ok_data(&OrderView::new(&order, ctx.payout_rules())),
        Err(StatusChangeError::NotFound) => Err(ApiError::not_found()),
        Err(StatusChangeError::NotAllowed { .. }) => Err(ApiError::conflict(
            ConflictReason::NotCancellable,
            messages::NOT_CANCELLABLE,
        )),
        Err(StatusChangeError::Store(error)) => {
            Err(ApiError::from_store(error, "change_order_status"))
        }
    }
}

impl From<PlaceError> for ApiError {
    fn from(error: PlaceError) -> Self {
        match error {
            PlaceError::Invalid(problems) => checkout::invalid(problems),
            PlaceError::DuplicateExternalReference {
                existing_id,
                existing_number,
            } => duplicate(existing_id, existing_number),
            PlaceError::NoFreeNumber => ApiError::server(),
            PlaceError::IdempotencyLost => idempotency::in_flight(),
            PlaceError::CatalogueChanged => ApiError::conflict(
                ConflictReason::CatalogueChanged,
                messages::CATALOGUE_CHANGED,
            ),
            PlaceError::Store(error) => ApiError::from_store(error, "place_order"),
        }
    }
}
