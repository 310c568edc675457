//! `GET /orders`, `GET /orders/{id}`, `POST /orders`, `POST /orders/{id}/cancel`.

use bytes::Bytes;
use http::{HeaderMap, HeaderValue, Response, StatusCode, header};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use super::Ctx;
use super::checkout::{self, Purpose};
use super::idempotency;
use crate::domain::placement::{self, OrderRequest, PlaceError};
use crate::error::{ApiError, ConflictReason, FieldErrors};
use crate::input::{Fields, Query, json_object};
use crate::limits::{MAX_NOTE, MAX_REASON, MAX_REFERENCE, MAX_TEXT};
use crate::messages;
use crate::model::*;
use crate::routes::API_PREFIX;
use crate::store::{IdempotencyBegin, PagedOrder, StatusChange, StatusChangeError, StoreError};
use crate::wire::{self, OrderView};

/// The `Location` of an order, under the path the API is mounted at.
pub(crate) fn location(mount: &str, id: OrderId) -> HeaderValue {
    HeaderValue::from_str(&format!("{mount}{API_PREFIX}/orders/{id}")).unwrap_or_else(|_| {
        HeaderValue::from_str(&format!("{API_PREFIX}/orders/{id}"))
            .expect("digits are a valid header")
    })
}

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
    // The orders whose JSON the engine kept are read as versions only (rendered_orders).
    let account = ctx.caller.account.id;
    let rules = ctx.payout_rules();
    let rendered = &ctx.shared.rendered_orders;
    let mut known = rendered.known(rules);
    let found = ctx
        .store()
        .orders_unless_known(account, &filter, page, &mut |version| known.has(version))
        .await?;
    let mut items = Vec::with_capacity(found.items.len());
    for item in found.items {
        let json = match item {
            PagedOrder::Read(order) => rendered.render(&order, rules),
            PagedOrder::Known(version) => match known.take(version.id) {
                Some(kept) => kept,
                // A store that answers `Known` for an order it was not told is known: read it.
                None => {
                    let order = ctx
                        .store()
                        .order(Some(account), version.id)
                        .await?
                        .ok_or_else(|| StoreError::NotFound)?;
                    rendered.render(&order, rules)
                }
            },
        };
        items.push(json);
    }
    let json: Vec<&RawValue> = items.iter().map(|r| r.json()).collect();
    Ok(wire::json_response(
        StatusCode::OK,
        wire::rendered_list_body(&json, page, found.total),
    ))
}

pub(super) async fn show(ctx: &Ctx<'_>, id: OrderId) -> Result<Response<Bytes>, ApiError> {
    let order = ctx
        .store()
        .order(Some(ctx.caller.account.id), id)
        .await?
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
    let mut response = wire::json_response(StatusCode::CREATED, body);
    response
        .headers_mut()
        .insert(header::LOCATION, location(mount, order.id));
    response
}

/// 409: the first request with this key is still being processed (or this request outlived
/// the stale time and a retry took its key over: the retry's order is the key's order).
fn in_flight() -> ApiError {
    ApiError::conflict(
        ConflictReason::IdempotencyInProgress,
        messages::IDEMPOTENCY_IN_FLIGHT,
    )
}

fn duplicate(existing_id: OrderId, existing_number: String) -> ApiError {
    ApiError::conflict(
        ConflictReason::DuplicateExternalReference,
        messages::DUPLICATE_EXTERNAL_REFERENCE,
    )
    .with_extra("existing_order_id", existing_id)
    .with_extra("existing_order_number", existing_number)
}

/// `POST /orders`: every response says whether it is a replay.
pub(super) async fn create(
    ctx: &Ctx<'_>,
    mount: &str,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response<Bytes>, ApiError> {
    match create_once(ctx, mount, headers, body).await {
        Ok(response) => Ok(response),
        Err(error) => Err(error.with_header(
            http::HeaderName::from_static(idempotency::REPLAYED_HEADER),
            HeaderValue::from_static("false"),
        )),
    }
}

async fn create_once(
    ctx: &Ctx<'_>,
    mount: &str,
    headers: &HeaderMap,
    body: &Bytes,
) -> Result<Response<Bytes>, ApiError> {
    let object = json_object(body, false)?;
    let key = idempotency::key(headers)?;
    let request = read_order(&object)?;
    let Some(key) = key else {
        let mut response = register(ctx, mount, request, None).await?;
        idempotency::mark(&mut response, false);
        return Ok(response);
    };

    // This request's own token: a retry that takes the record over fences it out.
    let claim = IdempotencyClaim::new(IdempotencyScope {
        account_id: ctx.caller.account.id,
        key,
    });
    let fingerprint = idempotency::fingerprint("POST", "/api/v1/orders", &Value::Object(object));
    let config = ctx.config();
    let begin = ctx
        .store()
        .begin_idempotent(
            &claim,
            &fingerprint,
            ctx.now,
            ctx.now - config.idempotency_ttl,
            ctx.now - config.idempotency_stale_after,
        )
        .await?;
    let (result, replayed) = match begin {
        IdempotencyBegin::Replay(stored) => return Ok(idempotency::replay(stored, mount)),
        IdempotencyBegin::Mismatch => {
            return Err(ApiError::conflict(
                ConflictReason::IdempotencyKeyReused,
                messages::IDEMPOTENCY_MISMATCH,
            ));
        }
        IdempotencyBegin::InFlight => return Err(in_flight()),
        IdempotencyBegin::Recovered(id) => {
            let order = ctx
                .store()
                .order(Some(claim.scope.account_id), id)
                .await?
                .ok_or_else(ApiError::server)?;
            (Ok(created(&order, ctx, mount)), true)
        }
        IdempotencyBegin::Started => (
            register(ctx, mount, request, Some(claim.clone())).await,
            false,
        ),
    };
    match result {
        Ok(mut response) => {
            let stored = StoredResponse {
                status: response.status().as_u16(),
                body: response.body().to_vec(),
            };
            match ctx.store().finish_idempotent(&claim, stored).await {
                Ok(()) => {}
                // A retry took the record over after this request placed its order (it
                // outlived the stale time): the retry answers with that same order and keeps
                // its own response; this one is true as well, and stands unkept.
                Err(StoreError::NotFound) => {
                    tracing::warn!("idempotency record taken over before the response was kept");
                }
                Err(error) => return Err(error.into()),
            }
            idempotency::mark(&mut response, replayed);
            Ok(response)
        }
        Err(error) => {
            if let Err(store_error) = ctx.store().abandon_idempotent(&claim).await {
                tracing::error!(%store_error, "could not release an idempotency key");
            }
            Err(error)
        }
    }
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
        Err(StatusChangeError::Store(error)) => Err(error.into()),
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
            PlaceError::IdempotencyLost => in_flight(),
            PlaceError::Store(error) => error.into(),
        }
    }
}
