//! What each endpoint answers and reads: its summary, tag, success body, query parameters,
//! request body and error statuses.

use crate::routes::Endpoint;

/// What one endpoint answers and reads, beyond what every endpoint shares.
pub(super) struct Spec {
    pub(super) summary: &'static str,
    pub(super) tag: &'static str,
    /// The success status and its body (`None`: no body).
    pub(super) success: (u16, Option<Body>),
    pub(super) query: &'static [QueryParam],
    /// The request body's schema and whether it may be left out.
    pub(super) request: Option<(&'static str, bool)>,
    /// Error statuses beyond 400, 401, 403, 408, 413 and 429.
    pub(super) errors: &'static [u16],
}

/// A success body.
pub(super) enum Body {
    /// `{"data": <schema>}`.
    Data(&'static str),
    /// `{"data": [<schema>]}`.
    DataList(&'static str),
    /// `{"data": [<schema>], "meta": {...}}`.
    Page(&'static str),
    /// Any JSON object (the document itself).
    Object,
}

/// The query parameters an endpoint reads.
#[derive(Clone, Copy)]
pub(super) enum QueryParam {
    Page,
    PerPage,
    CategoryId,
    UpdatedSince,
    Search,
    OrderStatus,
    Family,
    ExternalReference,
    Number,
    DeliveryStatus,
    /// `since`, required (the removals).
    Since,
}

const PAGED: &[QueryParam] = &[QueryParam::Page, QueryParam::PerPage];

pub(super) fn spec(endpoint: Endpoint) -> Spec {
    use Body::*;
    use Endpoint::*;
    let s = |summary, tag, success, query, request, errors| Spec {
        summary,
        tag,
        success,
        query,
        request,
        errors,
    };
    match endpoint {
        Me => s(
            "The caller's account and key",
            "account",
            (200, Some(Data("AccountView"))),
            &[],
            None,
            &[],
        ),
        Categories => s(
            "Active categories",
            "catalogue",
            (200, Some(Page("CategoryView"))),
            PAGED,
            None,
            &[422],
        ),
        Products => s(
            "Active products, with filters and sync",
            "catalogue",
            (200, Some(Page("ProductView"))),
            &[
                QueryParam::Page,
                QueryParam::PerPage,
                QueryParam::CategoryId,
                QueryParam::UpdatedSince,
                QueryParam::Search,
            ],
            None,
            &[422],
        ),
        RemovedProducts => s(
            "Products stopped at or after `since`, newest first (for sync)",
            "catalogue",
            (200, Some(Page("RemovedProduct"))),
            &[QueryParam::Since, QueryParam::Page, QueryParam::PerPage],
            None,
            &[422],
        ),
        Product(_) => s(
            "One product",
            "catalogue",
            (200, Some(Data("ProductView"))),
            &[],
            None,
            &[404],
        ),
        ShippingOptions => s(
            "Shipping options and their governorate rates",
            "shipping",
            (200, Some(DataList("ShippingOptionView"))),
            &[],
            None,
            &[],
        ),
        ShippingQuote => s(
            "Prices lines for a governorate, as an order would be",
            "shipping",
            (200, Some(Data("QuoteView"))),
            &[],
            Some(("QuoteRequest", false)),
            &[422],
        ),
        ListOrders => s(
            "The caller's orders, with filters and sync",
            "orders",
            (200, Some(Page("OrderView"))),
            &[
                QueryParam::Page,
                QueryParam::PerPage,
                QueryParam::OrderStatus,
                QueryParam::Family,
                QueryParam::ExternalReference,
                QueryParam::Number,
                QueryParam::UpdatedSince,
            ],
            None,
            &[422],
        ),
        CreateOrder => s(
            "Places an order (Idempotency-Key makes a retry safe)",
            "orders",
            (201, Some(Data("OrderView"))),
            &[],
            Some(("OrderRequest", false)),
            &[409, 422],
        ),
        Order(_) => s(
            "One order",
            "orders",
            (200, Some(Data("OrderView"))),
            &[],
            None,
            &[404],
        ),
        CancelOrder(_) => s(
            "Cancels a pending order",
            "orders",
            (200, Some(Data("OrderView"))),
            &[],
            Some(("CancelRequest", true)),
            &[404, 409, 422],
        ),
        Wallet => s(
            "The wallet and the withdrawal window",
            "wallet",
            (200, Some(Data("Wallet"))),
            &[],
            None,
            &[],
        ),
        ListWebhooks => s(
            "Webhook endpoints",
            "webhooks",
            (200, Some(Page("WebhookView"))),
            PAGED,
            None,
            &[422],
        ),
        CreateWebhook => s(
            "Registers a webhook endpoint (its secret is shown once)",
            "webhooks",
            (201, Some(Data("WebhookWithSecret"))),
            &[],
            Some(("WebhookCreate", false)),
            &[409, 422],
        ),
        Webhook(_) => s(
            "One webhook endpoint",
            "webhooks",
            (200, Some(Data("WebhookView"))),
            &[],
            None,
            &[404],
        ),
        UpdateWebhook(_) => s(
            "Changes a webhook endpoint",
            "webhooks",
            (200, Some(Data("WebhookView"))),
            &[],
            Some(("WebhookUpdate", false)),
            &[404, 422],
        ),
        DeleteWebhook(_) => s(
            "Deletes a webhook endpoint",
            "webhooks",
            (204, None),
            &[],
            None,
            &[404],
        ),
        RotateWebhookSecret(_) => s(
            "Gives an endpoint a new secret (the old one signs for 24 more hours)",
            "webhooks",
            (200, Some(Data("WebhookWithSecret"))),
            &[],
            None,
            &[404],
        ),
        PingWebhook(_) => s(
            "Queues a ping event (at most 10 pings and redeliveries wait per endpoint)",
            "webhooks",
            (202, Some(Data("DeliveryView"))),
            &[],
            None,
            &[404, 409],
        ),
        WebhookDeliveries(_) => s(
            "An endpoint's deliveries, newest first",
            "webhooks",
            (200, Some(Page("DeliveryView"))),
            &[
                QueryParam::Page,
                QueryParam::PerPage,
                QueryParam::DeliveryStatus,
            ],
            None,
            &[404, 422],
        ),
        Redeliver(..) => s(
            "Queues a delivery again (at most 10 pings and redeliveries wait per endpoint)",
            "webhooks",
            (202, Some(Data("DeliveryView"))),
            &[],
            None,
            &[404, 409],
        ),
        OpenApi => s("This document", "meta", (200, Some(Object)), &[], None, &[]),
        SandboxMoveOrder(_) => s(
            "Sandbox test mode: moves one of the caller's orders as the platform would",
            "sandbox",
            (200, Some(Data("OrderView"))),
            &[],
            Some(("SandboxMoveRequest", false)),
            &[404, 409, 422],
        ),
        SandboxClock => s(
            "Sandbox test mode: the sandbox's clock",
            "sandbox",
            (200, Some(Data("SandboxClock"))),
            &[],
            None,
            // A production engine answers 404, as any unknown path.
            &[404],
        ),
        SandboxAdvanceClock => s(
            "Sandbox test mode: moves the sandbox's clock forward, for everyone",
            "sandbox",
            (200, Some(Data("SandboxClock"))),
            &[],
            Some(("SandboxClockAdvance", false)),
            &[404, 422],
        ),
    }
}
