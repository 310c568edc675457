//! A webhook endpoint's and a delivery's JSON shapes (`/webhooks`, docs/webhooks.md).

use serde::Serialize;
use utoipa::ToSchema;

use super::Stamp;
use crate::model::*;

/// A webhook endpoint; `secret` only on creation and rotation.
#[derive(Debug, Serialize, ToSchema)]
pub struct WebhookView<'a> {
    id: WebhookId,
    url: &'a str,
    #[schema(value_type = Vec<EventType>)]
    events: Vec<&'static str>,
    description: Option<&'a str>,
    enabled: bool,
    #[schema(value_type = Option<DisabledReason>)]
    disabled_reason: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<&'a str>,
    created_at: Stamp,
    updated_at: Stamp,
}

impl<'a> WebhookView<'a> {
    /// The endpoint of an account of `side` without its secret (an endpoint registered
    /// without `events` lists the types of its side).
    pub fn new(webhook: &'a Webhook, side: Side) -> Self {
        Self {
            id: webhook.id,
            url: &webhook.url,
            events: (webhook.events.listed(side).iter())
                .map(|e| e.as_str())
                .collect(),
            description: webhook.description.as_deref(),
            enabled: webhook.enabled,
            disabled_reason: webhook.disabled_reason.map(DisabledReason::as_str),
            secret: None,
            created_at: Stamp(webhook.created_at),
            updated_at: Stamp(webhook.updated_at),
        }
    }

    /// The endpoint with its secret (shown once: on creation and rotation).
    pub fn with_secret(webhook: &'a Webhook, side: Side) -> Self {
        Self {
            secret: Some(webhook.secret.expose()),
            ..Self::new(webhook, side)
        }
    }
}

/// A delivery of one event to one endpoint.
#[derive(Debug, Serialize, ToSchema)]
pub struct DeliveryView<'a> {
    id: DeliveryId,
    event_id: &'a str,
    #[schema(value_type = EventType)]
    event_type: &'static str,
    #[schema(value_type = DeliveryStatus)]
    status: &'static str,
    attempts: u32,
    next_attempt_at: Option<Stamp>,
    last_attempt_at: Option<Stamp>,
    last_status_code: Option<u16>,
    last_error: Option<&'a str>,
    created_at: Stamp,
}

impl<'a> From<&'a Delivery> for DeliveryView<'a> {
    fn from(d: &'a Delivery) -> Self {
        Self {
            id: d.id,
            event_id: &d.event_id,
            event_type: d.event_type.as_str(),
            status: d.status.as_str(),
            attempts: d.attempts,
            next_attempt_at: d.next_attempt_at.map(Stamp),
            last_attempt_at: d.last_attempt_at.map(Stamp),
            last_status_code: d.last_status_code,
            last_error: d.last_error.as_deref(),
            created_at: Stamp(d.created_at),
        }
    }
}
