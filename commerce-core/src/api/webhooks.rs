//! `/webhooks`: an account's webhook endpoints and their deliveries.

use bytes::Bytes;
use http::{Response, StatusCode};
use serde_json::{Map, Value};

use super::Ctx;
use crate::domain::webhooks::{self, MAX_DESCRIPTION, WebhookError, WebhookInput};
use crate::error::{ApiError, ConflictReason, ErrorCode, FieldErrors};
use crate::model::*;
use crate::render::messages;
use crate::render::wire::{self, DeliveryView, WebhookView};
use crate::web::input::{Fields, Query, json_object};
use crate::webhooks::MAX_URL;

impl From<WebhookError> for ApiError {
    fn from(error: WebhookError) -> Self {
        match error {
            WebhookError::NotFound => ApiError::not_found(),
            WebhookError::Invalid(problems) => ApiError::validation(
                problems
                    .into_iter()
                    .map(|p| (p.field, vec![messages::problem(p.problem)]))
                    .collect(),
            ),
            WebhookError::TooMany(_) => {
                ApiError::conflict(ConflictReason::WebhookLimit, messages::TOO_MANY_WEBHOOKS)
            }
            WebhookError::Disabled => {
                ApiError::conflict(ConflictReason::WebhookDisabled, messages::WEBHOOK_DISABLED)
            }
            WebhookError::Busy(_) => {
                ApiError::conflict(ConflictReason::WebhookBusy, messages::WEBHOOK_BUSY)
            }
            WebhookError::Store(e) => ApiError::from_store(e, "webhooks"),
        }
    }
}

/// Reads the fields of a registration (`creating`) or a change from a JSON object; the rules
/// beyond types and lengths are the domain's.
fn read_input(object: &Map<String, Value>, creating: bool) -> Result<WebhookInput, ApiError> {
    let mut errors = FieldErrors::new();
    let mut f = Fields::new(object, String::new(), &mut errors);
    let url = if creating {
        f.required_string("url", MAX_URL)
    } else {
        f.optional_string("url", MAX_URL)
    };
    let description = match f.raw("description") {
        None if object.contains_key("description") => Some(None),
        None => None,
        Some(_) => Some(f.optional_string("description", MAX_DESCRIPTION)),
    };
    // A new endpoint starts enabled: `enabled` is a change only.
    let enabled = match f.raw("enabled").filter(|_| !creating) {
        None => None,
        Some(Value::Bool(b)) => Some(*b),
        Some(_) => {
            f.fail("enabled", messages::MUST_BE_BOOLEAN);
            None
        }
    };
    let events = match f.raw("events") {
        None => None,
        Some(Value::Array(items)) => {
            let parsed: Option<Vec<EventType>> = items
                .iter()
                .map(|item| item.as_str().and_then(EventType::parse))
                .collect();
            if parsed.is_none() {
                f.fail("events", messages::UNKNOWN_VALUE);
            }
            parsed
        }
        Some(_) => {
            f.fail("events", messages::MUST_BE_ARRAY);
            None
        }
    };
    if !errors.is_empty() {
        return Err(ApiError::validation(errors));
    }
    Ok(WebhookInput {
        url,
        events,
        description,
        enabled,
    })
}

/// 403 `forbidden_ability` when `input` directs order data
/// ([`WebhookInput::directs_order_data`]) and the key lacks `orders:read`.
fn check_order_access(ctx: &Ctx<'_>, input: &WebhookInput, creating: bool) -> Result<(), ApiError> {
    if input.directs_order_data(creating, ctx.caller.account.side)
        && !ctx.caller.key.abilities.contains(&Ability::OrdersRead)
    {
        return Err(ApiError::new(ErrorCode::ForbiddenAbility));
    }
    Ok(())
}

fn webhook_answer(status: StatusCode, view: WebhookView<'_>) -> Response<Bytes> {
    wire::json_response(status, wire::data_body(&view))
}

/// `POST /webhooks`: 201 with the secret.
pub(super) async fn create(ctx: &Ctx<'_>, body: &Bytes) -> Result<Response<Bytes>, ApiError> {
    let input = read_input(&json_object(body, false)?, true)?;
    check_order_access(ctx, &input, true)?;
    let webhook = webhooks::register(
        ctx.store(),
        ctx.config().webhook_urls,
        (ctx.caller.account.id, ctx.caller.account.side),
        input,
        ctx.now,
    )
    .await?;
    Ok(webhook_answer(
        StatusCode::CREATED,
        WebhookView::with_secret(&webhook, ctx.caller.account.side),
    ))
}

/// `GET /webhooks`.
pub(super) async fn list(
    ctx: &Ctx<'_>,
    raw_query: Option<&str>,
) -> Result<Response<Bytes>, ApiError> {
    let mut query = Query::parse(raw_query);
    let page = query.page();
    query.finish()?;
    let found = ctx
        .store()
        .webhooks(ctx.caller.account.id, page)
        .await
        .map_err(|e| ApiError::from_store(e, "webhooks"))?;
    let side = ctx.caller.account.side;
    let views: Vec<WebhookView> = found
        .items
        .iter()
        .map(|w| WebhookView::new(w, side))
        .collect();
    super::ok_list(&views, page, found.total)
}

async fn owned(ctx: &Ctx<'_>, id: WebhookId) -> Result<Webhook, ApiError> {
    ctx.store()
        .webhook(Some(ctx.caller.account.id), id)
        .await
        .map_err(|e| ApiError::from_store(e, "webhook"))?
        .ok_or_else(ApiError::not_found)
}

/// `GET /webhooks/{id}`.
pub(super) async fn show(ctx: &Ctx<'_>, id: WebhookId) -> Result<Response<Bytes>, ApiError> {
    let webhook = owned(ctx, id).await?;
    super::ok_data(&WebhookView::new(&webhook, ctx.caller.account.side))
}

/// `PATCH /webhooks/{id}`.
pub(super) async fn update(
    ctx: &Ctx<'_>,
    id: WebhookId,
    body: &Bytes,
) -> Result<Response<Bytes>, ApiError> {
    let input = read_input(&json_object(body, false)?, false)?;
    check_order_access(ctx, &input, false)?;
    let webhook = webhooks::update(
        ctx.store(),
        ctx.config().webhook_urls,
        (Some(ctx.caller.account.id), ctx.caller.account.side),
        id,
        input,
        ctx.now,
    )
    .await?;
    super::ok_data(&WebhookView::new(&webhook, ctx.caller.account.side))
}

/// `DELETE /webhooks/{id}`: 204.
pub(super) async fn delete(ctx: &Ctx<'_>, id: WebhookId) -> Result<Response<Bytes>, ApiError> {
    if !ctx
        .store()
        .delete_webhook(Some(ctx.caller.account.id), id)
        .await
        .map_err(|e| ApiError::from_store(e, "delete_webhook"))?
    {
        return Err(ApiError::not_found());
    }
    let mut response = Response::new(Bytes::new());
    *response.status_mut() = StatusCode::NO_CONTENT;
    Ok(response)
}

/// `POST /webhooks/{id}/rotate_secret`: 200 with the new secret.
pub(super) async fn rotate_secret(
    ctx: &Ctx<'_>,
    id: WebhookId,
) -> Result<Response<Bytes>, ApiError> {
    let webhook =
        webhooks::rotate_secret(ctx.store(), Some(ctx.caller.account.id), id, ctx.now).await?;
    Ok(webhook_answer(
        StatusCode::OK,
        WebhookView::with_secret(&webhook, ctx.caller.account.side),
    ))
}

fn accepted(delivery: &Delivery) -> Response<Bytes> {
    wire::json_response(
        StatusCode::ACCEPTED,
        wire::data_body(&DeliveryView::from(delivery)),
    )
}

/// `POST /webhooks/{id}/ping`: 202 with the queued delivery.
pub(super) async fn ping(ctx: &Ctx<'_>, id: WebhookId) -> Result<Response<Bytes>, ApiError> {
    let delivery = webhooks::ping(ctx.store(), Some(ctx.caller.account.id), id, ctx.now).await?;
    Ok(accepted(&delivery))
}

/// `GET /webhooks/{id}/deliveries`: newest first, `status` filter.
pub(super) async fn deliveries(
    ctx: &Ctx<'_>,
    id: WebhookId,
    raw_query: Option<&str>,
) -> Result<Response<Bytes>, ApiError> {
    let mut query = Query::parse(raw_query);
    let page = query.page();
    let status = query.one_of("status", DeliveryStatus::parse);
    query.finish()?;
    let found = ctx
        .store()
        .deliveries(Some(ctx.caller.account.id), id, status, page)
        .await
        .map_err(|e| ApiError::from_store(e, "deliveries"))?
        .ok_or_else(ApiError::not_found)?;
    let views: Vec<DeliveryView> = found.items.iter().map(DeliveryView::from).collect();
    super::ok_list(&views, page, found.total)
}

/// `POST /webhooks/{id}/deliveries/{delivery_id}/redeliver`: 202 with the new delivery (a
/// marketer's key needs `orders:read` too, before anything else: a delivery may carry an
/// order; a supplier's never does).
pub(super) async fn redeliver(
    ctx: &Ctx<'_>,
    id: WebhookId,
    delivery: DeliveryId,
) -> Result<Response<Bytes>, ApiError> {
    let orders = EventType::for_side(ctx.caller.account.side)
        .iter()
        .any(|e| e.is_order_event());
    if orders && !ctx.caller.key.abilities.contains(&Ability::OrdersRead) {
        return Err(ApiError::new(ErrorCode::ForbiddenAbility));
    }
    let queued = webhooks::redeliver(
        ctx.store(),
        Some(ctx.caller.account.id),
        id,
        delivery,
        ctx.now,
    )
    .await?;
    Ok(accepted(&queued))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn object(json: &str) -> Map<String, Value> {
        serde_json::from_str(json).unwrap()
    }

    #[test]
    fn registration_fields_are_read_with_their_types() {
        let input = read_input(
            &object(
                r#"{"url":"https://x.example/h","events":["order.created"],"description":"shop"}"#,
            ),
            true,
        )
        .unwrap();
        assert_eq!(input.url.as_deref(), Some("https://x.example/h"));
        assert_eq!(input.events, Some(vec![EventType::OrderCreated]));
        assert_eq!(input.description, Some(Some("shop".into())));
        let refused = read_input(&object(r#"{"events":"order.created"}"#), true).unwrap_err();
        assert_eq!(
            refused.fields().keys().collect::<Vec<_>>(),
            ["events", "url"]
        );
        let refused = read_input(&object(r#"{"enabled":1}"#), false).unwrap_err();
        assert_eq!(refused.fields().keys().collect::<Vec<_>>(), ["enabled"]);
        let change = read_input(&object(r#"{"enabled":false,"description":null}"#), false).unwrap();
        assert_eq!(
            (change.enabled, change.description),
            (Some(false), Some(None))
        );
        assert!(read_input(&object(r#"{"events":["nope"]}"#), false).is_err());
    }
}
