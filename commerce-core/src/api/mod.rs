//! The handlers, one module per resource.

mod catalog;
pub(crate) mod checkout;
mod idempotency;
mod me;
pub(crate) mod orders;
mod sandbox;
mod shipping;
mod wallet;
mod webhooks;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use http::{Request, Response, StatusCode};

use crate::auth::Caller;
use crate::config::Config;
use crate::domain::wallet::PayoutRules;
use crate::error::ApiError;
use crate::routes::{Endpoint, MountPrefix};
use crate::shared::Shared;
use crate::store::Store;
use crate::wire;

/// Runs the handler of an endpoint for an authorised caller.
pub(crate) async fn serve(
    ctx: &Ctx<'_>,
    endpoint: Endpoint,
    request: Request<Bytes>,
) -> Result<Response<Bytes>, ApiError> {
    let (parts, body) = request.into_parts();
    let query = parts.uri.query();
    let mount = mount_of(&parts);
    match endpoint {
        Endpoint::Me => me::show(ctx),
        Endpoint::Categories => catalog::categories(ctx, query).await,
        Endpoint::Products => catalog::products(ctx, query).await,
        Endpoint::RemovedProducts => catalog::removed_products(ctx, query).await,
        Endpoint::Product(id) => catalog::product(ctx, id.into()).await,
        Endpoint::ShippingOptions => shipping::options(ctx).await,
        Endpoint::ShippingQuote => shipping::quote(ctx, &body).await,
        Endpoint::ListOrders => orders::list(ctx, query).await,
        Endpoint::Order(id) => orders::show(ctx, id).await,
        Endpoint::CreateOrder => orders::create(ctx, mount, &parts.headers, &body).await,
        Endpoint::CancelOrder(id) => orders::cancel(ctx, id, &body).await,
        Endpoint::Wallet => wallet::show(ctx).await,
        Endpoint::ListWebhooks => webhooks::list(ctx, query).await,
        Endpoint::CreateWebhook => webhooks::create(ctx, &body).await,
        Endpoint::Webhook(id) => webhooks::show(ctx, id).await,
        Endpoint::UpdateWebhook(id) => webhooks::update(ctx, id, &body).await,
        Endpoint::DeleteWebhook(id) => webhooks::delete(ctx, id).await,
        Endpoint::RotateWebhookSecret(id) => webhooks::rotate_secret(ctx, id).await,
        Endpoint::PingWebhook(id) => webhooks::ping(ctx, id).await,
        Endpoint::WebhookDeliveries(id) => webhooks::deliveries(ctx, id, query).await,
        Endpoint::Redeliver(id, delivery) => webhooks::redeliver(ctx, id, delivery).await,
        Endpoint::OpenApi => Ok(openapi_document(mount)),
        Endpoint::SandboxMoveOrder(id) => sandbox::move_order(ctx, id, &body).await,
        Endpoint::SandboxClock => sandbox::clock(ctx),
        Endpoint::SandboxAdvanceClock => sandbox::advance_clock(ctx, &body),
    }
}

/// The answer to a request whose endpoint needs no key ([`Endpoint::needs_key`]), served
/// before the key is read; `None` for every other endpoint.
pub(crate) fn serve_keyless(
    endpoint: Endpoint,
    parts: &http::request::Parts,
) -> Option<Response<Bytes>> {
    (!endpoint.needs_key()).then(|| openapi_document(mount_of(parts)))
}

/// The path the API is mounted under (`""` at the root).
fn mount_of(parts: &http::request::Parts) -> &str {
    parts
        .extensions
        .get::<MountPrefix>()
        .map_or("", |m| m.0.as_str())
}

/// `GET /openapi.json`: its `servers` is the path the API is mounted under, so that a client
/// generated from it calls `{mount}/api/v1/...`.
fn openapi_document(mount: &str) -> Response<Bytes> {
    wire::json_response(StatusCode::OK, crate::openapi::document_bytes_under(mount))
}

/// A 200 with one page of a list: `{"data": items, "meta": {...}}`.
fn ok_list<T: serde::Serialize>(
    items: &[T],
    page: crate::model::PageRequest,
    total: u64,
) -> Result<Response<Bytes>, ApiError> {
    Ok(wire::json_response(
        StatusCode::OK,
        wire::list_body(items, page, total),
    ))
}

/// A 200 with `{"data": value}`.
fn ok_data<T: serde::Serialize + ?Sized>(value: &T) -> Result<Response<Bytes>, ApiError> {
    Ok(wire::json_response(StatusCode::OK, wire::data_body(value)))
}

/// Everything a handler needs.
pub(crate) struct Ctx<'a> {
    pub shared: &'a Shared,
    pub caller: Caller,
    pub now: DateTime<Utc>,
}

impl Ctx<'_> {
    pub fn store(&self) -> &dyn Store {
        &*self.shared.store
    }

    pub fn config(&self) -> &Config {
        &self.shared.config
    }

    pub fn payout_rules(&self) -> PayoutRules {
        self.shared.payout_rules(self.now)
    }
}
