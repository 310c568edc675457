//! The OpenAPI 3.1 document of the API, generated from the code so that it cannot drift:
//! [`document`], served at `GET /api/v1/openapi.json` without a key and returned by
//! [`Engine::openapi`](crate::Engine::openapi).
//!
//! - The response schemas are derived from the response types (`ToSchema` on the views of
//!   the wire module, the string enums and the ids of [`model`](crate::model)) with
//!   [utoipa](https://docs.rs/utoipa). utoipa rather than aide: it needs no web framework (the
//!   engine is framework-neutral and dispatches through its own table) and builds a document
//!   from plain types and builders, where aide works through schemars and route registration
//!   in axum or actix.
//! - The paths are built from the dispatch table [`ROUTES`]: one operation per route, with
//!   its ability (in the description and in `x-ability`), its success body, every error
//!   answer the route can give, the bearer security, and the headers.
//! - The request bodies are read by hand from JSON (every field is checked and named on its
//!   own), so their schemas are written here from the same limits the readers use
//!   ([`MAX_TEXT`], [`MAX_LINES`], ...).
//! - The webhook events are in the document's `webhooks` section and in its components.

use std::sync::LazyLock;

use bytes::Bytes;
use http::Method;
use serde_json::{Map, Value, json};
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::path::{
    HttpMethod, OperationBuilder, ParameterBuilder, ParameterIn, PathItem,
};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    ComponentsBuilder, ContentBuilder, HeaderBuilder, InfoBuilder, OpenApiBuilder, Paths, Ref,
    RefOr, Required, ResponseBuilder, ServerBuilder, Tag,
};
use utoipa::{PartialSchema, ToSchema};

use crate::domain::checkout::{MAX_LINES, MAX_QUANTITY, MAX_WARRANTIES};
use crate::domain::fields::{MAX_NOTE, MAX_PHONE, MAX_REFERENCE, MAX_TEXT};
use crate::domain::webhooks::MAX_DESCRIPTION;
use crate::error::{ConflictReason, ErrorCode};
use crate::input::MAX_PER_PAGE;
use crate::model::*;
use crate::money::MAX_AMOUNT;
use crate::routes::{API_PREFIX, Endpoint, ROUTES};
use crate::webhooks::MAX_URL;
use crate::wire::{
    AccountView, CategoryView, DeliveryView, ListMeta, Money, OrderView, ProductView, QuoteView,
    ShippingOptionView, Stamp, StatusView, WebhookView,
};

/// The name of the bearer security scheme.
const BEARER: &str = "bearer";
/// The JSON media type of every body.
const JSON: &str = "application/json";
/// The longest `reason_note` of a cancellation.
const MAX_REASON: usize = 500;
/// The longest `Idempotency-Key`.
const MAX_IDEMPOTENCY_KEY: usize = 100;

/// Single-line printable text: no control character (tab and line breaks included) and no
/// bidirectional embedding, override or isolate.
const SINGLE_LINE: &str = r"^[^\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*$";
/// Multi-line printable text: tab, CR and LF allowed.
const MULTI_LINE: &str =
    r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*$";
/// Single-line printable text with at least one character that is not white space.
const SINGLE_LINE_FILLED: &str = r"^[^\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*[^\s\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069][^\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*$";
/// Multi-line printable text with at least one character that is not white space.
const MULTI_LINE_FILLED: &str = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*[^\s\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069][^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*$";
/// An Egyptian mobile number as the API takes it: `01` and 9 digits, or with `+20` / `0020`
/// in place of the leading `0`.
const PHONE: &str = r"^(\+20|0020|0)1[0-9]{9}$";
/// An optional phone: a phone, or blank (taken as left out).
const OPTIONAL_PHONE: &str = r"^\s*$|^(\+20|0020|0)1[0-9]{9}$";
/// White space only (or nothing).
const BLANK: &str = r"^\s*$";
/// A money amount as a string input: plain decimal notation, at most two decimals.
const MONEY_INPUT: &str = r"^\+?[0-9]{1,10}(\.[0-9]{1,2})?$";
/// An `updated_since` value: a date and a time with an offset (`Z`, `+hh`, `+hhmm`, `+hh:mm`).
const TIMESTAMP_INPUT: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}(:?[0-9]{2})?)$";
/// An event id: `evt_` and 24 characters from `[a-z0-9]`.
const EVENT_ID: &str = r"^evt_[a-z0-9]{24}$";

/// The document, built once.
static DOCUMENT: LazyLock<(Value, Bytes)> = LazyLock::new(|| {
    let document = build();
    let bytes = serde_json::to_vec(&document).expect("the document serialises");
    (document, Bytes::from(bytes))
});

/// The OpenAPI 3.1 document of the API.
pub fn document() -> &'static Value {
    &DOCUMENT.0
}

/// The document as served (compact JSON).
pub fn document_bytes() -> &'static Bytes {
    &DOCUMENT.1
}

/// What one endpoint answers and reads, beyond what every endpoint shares.
struct Spec {
    summary: &'static str,
    tag: &'static str,
    /// The success status and its body (`None`: no body).
    success: (u16, Option<Body>),
    query: &'static [QueryParam],
    /// The request body's schema and whether it may be left out.
    request: Option<(&'static str, bool)>,
    /// Error statuses beyond 400, 401, 403, 408, 413 and 429.
    errors: &'static [u16],
}

/// A success body.
enum Body {
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
enum QueryParam {
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
}

const PAGED: &[QueryParam] = &[QueryParam::Page, QueryParam::PerPage];

fn spec(endpoint: Endpoint) -> Spec {
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
    }
}

fn schema_ref(name: &str) -> RefOr<Schema> {
    RefOr::Ref(Ref::from_schema_name(name))
}

fn string_schema(pattern: &str, max: Option<usize>) -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(max)
        .pattern(Some(pattern))
}

fn query_parameter(param: QueryParam) -> utoipa::openapi::path::Parameter {
    use QueryParam::*;
    let single = |max| string_schema(SINGLE_LINE_FILLED, max).into();
    let (name, description, schema): (&str, &str, RefOr<Schema>) = match param {
        Page => (
            "page",
            "The page, from 1.",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1))
                .maximum(Some(u32::MAX))
                .into(),
        ),
        PerPage => (
            "per_page",
            "The page size (25 when left out).",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1))
                .maximum(Some(MAX_PER_PAGE))
                .into(),
        ),
        CategoryId => (
            "category_id",
            "Only this active category and its descendants.",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1))
                .into(),
        ),
        UpdatedSince => (
            "updated_since",
            "Only records changed at or after this instant (with an offset).",
            string_schema(TIMESTAMP_INPUT, None).into(),
        ),
        Search => ("q", "Words of the title.", single(None)),
        OrderStatus => (
            "status",
            "One status key.",
            crate::model::OrderStatus::schema(),
        ),
        Family => (
            "family",
            "One status family.",
            crate::model::Family::schema(),
        ),
        ExternalReference => (
            "external_reference",
            "The caller's own reference of the order.",
            single(None),
        ),
        Number => ("number", "The order number.", single(None)),
        DeliveryStatus => (
            "status",
            "One delivery status.",
            crate::model::DeliveryStatus::schema(),
        ),
    };
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

fn header(description: &str, schema: impl Into<RefOr<Schema>>) -> utoipa::openapi::Header {
    HeaderBuilder::new()
        .schema(schema)
        .description(Some(description))
        .build()
}

fn integer() -> ObjectBuilder {
    ObjectBuilder::new()
        .schema_type(Type::Integer)
        .minimum(Some(0))
}

/// The rate headers of every answer past the key check.
fn with_rate_headers(response: ResponseBuilder) -> ResponseBuilder {
    response
        .header(
            "X-RateLimit-Limit",
            header("The key's requests per minute.", integer()),
        )
        .header(
            "X-RateLimit-Remaining",
            header("Requests left in this minute.", integer()),
        )
}

fn replayed_header() -> utoipa::openapi::Header {
    header(
        "`true` when this is the stored answer to an earlier request with the same Idempotency-Key.",
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(["true", "false"])),
    )
}

/// The reasons of the 409s `endpoint` may answer.
fn conflict_reasons(endpoint: Endpoint) -> &'static [ConflictReason] {
    use ConflictReason::*;
    match endpoint {
        Endpoint::CreateOrder => &[
            DuplicateExternalReference,
            IdempotencyKeyReused,
            IdempotencyInProgress,
        ],
        Endpoint::CancelOrder(_) => &[NotCancellable],
        Endpoint::CreateWebhook => &[WebhookLimit],
        Endpoint::PingWebhook(_) | Endpoint::Redeliver(..) => &[WebhookDisabled, WebhookBusy],
        _ => &[],
    }
}

/// The error answer of `status` on `endpoint`.
fn error_response(endpoint: Endpoint, status: u16) -> ResponseBuilder {
    let codes: Vec<&str> = ErrorCode::ALL
        .iter()
        .filter(|c| c.status().as_u16() == status)
        .map(|c| c.as_str())
        .collect();
    let mut error = ObjectBuilder::new().property(
        "code",
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(codes.iter().copied())),
    );
    let mut description = codes.join(", ");
    if status == 409 {
        let reasons: Vec<&str> = conflict_reasons(endpoint)
            .iter()
            .map(|r| r.as_str())
            .collect();
        error = error
            .property(
                "reason",
                ObjectBuilder::new()
                    .schema_type(Type::String)
                    .enum_values(Some(reasons.iter().copied())),
            )
            .required("reason");
        description = format!("{description} (reason: {})", reasons.join(", "));
    }
    let schema: Schema = utoipa::openapi::schema::AllOfBuilder::new()
        .item(schema_ref("Error"))
        .item(ObjectBuilder::new().property("error", error))
        .into();
    let mut response = ResponseBuilder::new()
        .description(description)
        .content(JSON, ContentBuilder::new().schema(Some(schema)).build());
    match status {
        401 => {
            response = response.header(
                "WWW-Authenticate",
                header(
                    "The scheme to use.",
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .enum_values(Some(["Bearer"])),
                ),
            );
        }
        413 => {}
        429 => {
            response = with_rate_headers(response).header(
                "Retry-After",
                header(
                    "Seconds until the next minute's window.",
                    integer().minimum(Some(1)).maximum(Some(60)),
                ),
            );
        }
        // A path whose id is out of range is a 404 before the key is read.
        404 => {}
        _ => response = with_rate_headers(response),
    }
    if endpoint == Endpoint::CreateOrder && matches!(status, 409 | 422) {
        response = response.header("Idempotent-Replayed", replayed_header());
    }
    response
}

fn success_response(endpoint: Endpoint, status: u16, body: Option<&Body>) -> ResponseBuilder {
    let schema: Option<RefOr<Schema>> = body.map(|body| match body {
        Body::Data(name) => ObjectBuilder::new()
            .property("data", schema_ref(name))
            .required("data")
            .into(),
        Body::DataList(name) => ObjectBuilder::new()
            .property("data", ArrayBuilder::new().items(schema_ref(name)))
            .required("data")
            .into(),
        Body::Page(name) => ObjectBuilder::new()
            .property("data", ArrayBuilder::new().items(schema_ref(name)))
            .property("meta", schema_ref("ListMeta"))
            .required("data")
            .required("meta")
            .into(),
        Body::Object => ObjectBuilder::new().schema_type(Type::Object).into(),
    });
    let mut response = ResponseBuilder::new().description(match status {
        201 => "Created.",
        202 => "Queued.",
        204 => "Done; no body.",
        _ => "OK.",
    });
    if let Some(schema) = schema {
        response = response.content(JSON, ContentBuilder::new().schema(Some(schema)).build());
    }
    if endpoint.needs_key() {
        response = with_rate_headers(response);
    }
    let link = |operation: &str, parameters: &[(&str, &str)]| {
        parameters
            .iter()
            .fold(
                LinkBuilder::new().operation_id(operation),
                |link, (name, value)| link.parameter(*name, *value),
            )
            .build()
    };
    let from_body = [("id", "$response.body#/data/id")];
    match endpoint {
        Endpoint::CreateOrder => {
            response = response
                .header(
                    "Location",
                    header(
                        "The new order's URL.",
                        ObjectBuilder::new().schema_type(Type::String),
                    ),
                )
                .header("Idempotent-Replayed", replayed_header())
                .link("GetOrder", link("orders.show", &from_body))
                .link("CancelOrder", link("orders.cancel", &from_body));
        }
        Endpoint::CreateWebhook => {
            for (name, operation) in [
                ("GetWebhook", "webhooks.show"),
                ("UpdateWebhook", "webhooks.update"),
                ("PingWebhook", "webhooks.ping"),
                ("RotateWebhookSecret", "webhooks.rotate_secret"),
                ("WebhookDeliveries", "webhooks.deliveries"),
                ("DeleteWebhook", "webhooks.delete"),
            ] {
                response = response.link(name, link(operation, &from_body));
            }
        }
        Endpoint::PingWebhook(_) => {
            response = response.link(
                "Redeliver",
                link(
                    "webhooks.redeliver",
                    &[
                        ("id", "$request.path.id"),
                        ("delivery_id", "$response.body#/data/id"),
                    ],
                ),
            );
        }
        _ => {}
    }
    response
}

fn operation(template: &str, endpoint: Endpoint) -> utoipa::openapi::path::Operation {
    let spec = spec(endpoint);
    let ability = endpoint.ability().map(Ability::as_str);
    let abilities: Vec<&str> = endpoint.abilities().iter().map(|a| a.as_str()).collect();
    let mut description = match abilities.as_slice() {
        [] if endpoint.needs_key() => "Any live key.".to_owned(),
        [] => "No key needed; not counted toward any rate limit.".to_owned(),
        [one] => format!("Needs a key with the ability `{one}`."),
        all => format!("Needs a key with the abilities `{}`.", all.join("`, `")),
    };
    if matches!(
        endpoint,
        Endpoint::CreateWebhook | Endpoint::UpdateWebhook(_)
    ) {
        description.push_str(
            " Registering an endpoint, or changing its `url` or `events`, when it receives \
             order events afterwards, also needs `orders:read` (else 403 `forbidden_ability`).",
        );
    }
    if endpoint.needs_key() {
        let sides = match endpoint.sides() {
            crate::routes::Sides::All => "every account side",
            crate::routes::Sides::MarketerOrSupplier => "marketers and suppliers",
            crate::routes::Sides::Marketer => "marketers only",
        };
        description.push_str(&format!(" Serves {sides}."));
    }
    let mut op = OperationBuilder::new()
        .operation_id(Some(endpoint.name()))
        .summary(Some(spec.summary))
        .description(Some(description))
        .tag(spec.tag)
        .extensions(Some(
            ExtensionsBuilder::new()
                .add("x-ability", ability.map_or(Value::Null, Value::from))
                .add("x-abilities", Value::from(abilities))
                .build(),
        ));
    for (index, segment) in template
        .split('/')
        .filter_map(|s| s.strip_prefix('{')?.strip_suffix('}'))
        .enumerate()
    {
        op = op.parameter(
            ParameterBuilder::new()
                .name(segment)
                .parameter_in(ParameterIn::Path)
                .required(Required::True)
                .description(Some(if index == 0 {
                    "The record's id."
                } else {
                    "The delivery's id."
                }))
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::Integer)
                        .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                            utoipa::openapi::KnownFormat::Int64,
                        )))
                        .minimum(Some(1))
                        .maximum(Some(i64::MAX)),
                ))
                .build(),
        );
    }
    for param in spec.query {
        op = op.parameter(query_parameter(*param));
    }
    if endpoint == Endpoint::CreateOrder {
        op = op.parameter(
            ParameterBuilder::new()
                .name("Idempotency-Key")
                .parameter_in(ParameterIn::Header)
                .required(Required::False)
                .description(Some(
                    "Makes a retry safe: the same key and body within 24 hours replay the first answer.",
                ))
                .schema(Some(
                    ObjectBuilder::new()
                        .schema_type(Type::String)
                        .min_length(Some(1))
                        .max_length(Some(MAX_IDEMPOTENCY_KEY))
                        .pattern(Some(r"^[!-~]([ -~]*[!-~])?$")),
                ))
                .build(),
        );
    }
    if let Some((schema, optional)) = spec.request {
        op = op.request_body(Some(
            RequestBodyBuilder::new()
                .required(Some(if optional {
                    Required::False
                } else {
                    Required::True
                }))
                .content(
                    JSON,
                    ContentBuilder::new()
                        .schema(Some(schema_ref(schema)))
                        .build(),
                )
                .build(),
        ));
    }
    let (status, body) = &spec.success;
    op = op.response(
        status.to_string(),
        success_response(endpoint, *status, body.as_ref()).build(),
    );
    let mut errors: Vec<u16> = spec.errors.to_vec();
    // Any request may declare a body: over the limit it is a 413; through an adapter, a body
    // that cannot be read is a 400 and one that does not arrive in time a 408.
    errors.extend([400, 408, 413]);
    if endpoint.needs_key() {
        errors.extend([401, 403, 429]);
    } else {
        op = op.securities(Some(Vec::<SecurityRequirement>::new()));
    }
    errors.sort_unstable();
    for status in errors {
        op = op.response(status.to_string(), error_response(endpoint, status).build());
    }
    op.build()
}

fn http_method(method: &Method) -> HttpMethod {
    match *method {
        Method::GET => HttpMethod::Get,
        Method::POST => HttpMethod::Post,
        Method::PATCH => HttpMethod::Patch,
        Method::DELETE => HttpMethod::Delete,
        Method::PUT => HttpMethod::Put,
        _ => unreachable!("the dispatch table uses GET, POST, PATCH, PUT and DELETE"),
    }
}

/// Adds `T`'s schema and every schema it refers to.
fn register<T: ToSchema>(schemas: &mut Vec<(String, RefOr<Schema>)>) {
    schemas.push((T::name().into_owned(), T::schema()));
    T::schemas(schemas);
}

fn build() -> Value {
    let mut paths = Paths::new();
    for route in ROUTES {
        let endpoint = route.endpoint(&[1, 1]);
        let path = format!("{API_PREFIX}{}", route.path);
        let item = PathItem::new(http_method(&route.method), operation(route.path, endpoint));
        match paths.paths.get_mut(&path) {
            Some(existing) => existing.merge_operations(item),
            None => {
                paths.paths.insert(path, item);
            }
        }
    }
    let mut schemas = Vec::new();
    register::<AccountView>(&mut schemas);
    register::<CategoryView>(&mut schemas);
    register::<ProductView>(&mut schemas);
    register::<ShippingOptionView>(&mut schemas);
    register::<QuoteView>(&mut schemas);
    register::<OrderView>(&mut schemas);
    register::<StatusView>(&mut schemas);
    register::<WebhookView>(&mut schemas);
    register::<DeliveryView>(&mut schemas);
    register::<ListMeta>(&mut schemas);
    register::<Money>(&mut schemas);
    register::<Stamp>(&mut schemas);
    register::<WithdrawalStatus>(&mut schemas);
    register::<Side>(&mut schemas);
    register::<ApiStatus>(&mut schemas);
    register::<WithdrawalId>(&mut schemas);
    register::<WebhookId>(&mut schemas);
    let components = ComponentsBuilder::new()
        .schemas_from_iter(schemas)
        .security_scheme(
            BEARER,
            SecurityScheme::Http(
                HttpBuilder::new()
                    .scheme(HttpAuthScheme::Bearer)
                    .description(Some("An API key: `Authorization: Bearer sk_live_...`."))
                    .build(),
            ),
        )
        .build();
    let api = OpenApiBuilder::new()
        .info(
            InfoBuilder::new()
                .title("Commerce API")
                .version(env!("CARGO_PKG_VERSION"))
                .description(Some(
                    "The marketer and supplier commerce API. Money is a string with exactly two \
                     decimals (Egyptian pounds); instants are in Egypt time with their offset.",
                ))
                .build(),
        )
        .servers(Some([ServerBuilder::new().url("/").build()]))
        .paths(paths)
        .components(Some(components))
        .security(Some([SecurityRequirement::new(
            BEARER,
            Vec::<String>::new(),
        )]))
        .tags(Some(
            [
                "account",
                "catalogue",
                "shipping",
                "orders",
                "wallet",
                "webhooks",
                "meta",
            ]
            .map(Tag::new),
        ))
        .build();
    let mut document = serde_json::to_value(&api).expect("the document serialises");
    let schemas = document
        .pointer_mut("/components/schemas")
        .and_then(Value::as_object_mut)
        .expect("components.schemas");
    for (name, schema) in schemas.iter_mut() {
        require_every_property(name, schema);
    }
    schemas.extend(written_schemas());
    require_every_header(&mut document["paths"]);
    document["webhooks"] = webhooks();
    document
}

/// Every property of a response view is always rendered (`null` when empty), except a
/// webhook's `secret`, shown on creation and rotation only.
fn require_every_property(name: &str, schema: &mut Value) {
    match schema {
        Value::Object(object) => {
            if let Some(Value::Object(properties)) = object.get("properties") {
                let required: Vec<Value> = properties
                    .keys()
                    .filter(|key| !(name == "WebhookView" && *key == "secret"))
                    .map(|key| Value::from(key.as_str()))
                    .collect();
                object.insert("required".into(), Value::Array(required));
            }
            for (key, value) in object.iter_mut() {
                if key != "properties" {
                    require_every_property(name, value);
                }
            }
        }
        Value::Array(items) => items
            .iter_mut()
            .for_each(|item| require_every_property(name, item)),
        _ => {}
    }
}

/// Every response header the document names is always sent with that response; links name
/// their operation with `operationId`.
fn require_every_header(paths: &mut Value) {
    let Some(paths) = paths.as_object_mut() else {
        return;
    };
    for item in paths.values_mut() {
        for operation in item
            .as_object_mut()
            .into_iter()
            .flat_map(|o| o.values_mut())
        {
            let responses = operation
                .get_mut("responses")
                .and_then(Value::as_object_mut);
            for response in responses.into_iter().flat_map(|r| r.values_mut()) {
                let headers = response.get_mut("headers").and_then(Value::as_object_mut);
                for header in headers.into_iter().flat_map(|h| h.values_mut()) {
                    header["required"] = Value::Bool(true);
                }
                // utoipa 5 writes a link's `operationId` as `operation_id`.
                let links = response.get_mut("links").and_then(Value::as_object_mut);
                for link in links.into_iter().flat_map(|l| l.values_mut()) {
                    if let Some(link) = link.as_object_mut()
                        && let Some(id) = link.remove("operation_id")
                    {
                        link.insert("operationId".into(), id);
                    }
                }
            }
        }
    }
}

fn enum_of<T: Copy>(values: &[T], as_str: fn(T) -> &'static str) -> Value {
    json!({"type": "string", "enum": values.iter().map(|v| as_str(*v)).collect::<Vec<_>>()})
}

fn nullable(schema: Value) -> Value {
    json!({"oneOf": [schema, {"type": "null"}]})
}

fn text(pattern: &str, max: usize) -> Value {
    json!({"type": "string", "maxLength": max, "pattern": pattern})
}

fn optional_text(pattern: &str, max: usize) -> Value {
    // Blank is taken as left out, however long.
    nullable(json!({"anyOf": [{"type": "string", "pattern": BLANK}, text(pattern, max)]}))
}

fn id_input() -> Value {
    json!({"type": "integer", "minimum": 1, "maximum": i64::MAX})
}

/// The schemas written here: the error body, the wallet, the request bodies and the events.
fn written_schemas() -> Map<String, Value> {
    let money = json!({"$ref": "#/components/schemas/Money"});
    let stamp = json!({"$ref": "#/components/schemas/Timestamp"});
    let money_input = json!({
        "description": "An amount: a JSON number or a numeric string, zero or more, at most two decimals.",
        "oneOf": [
            {"type": "number", "minimum": 0, "maximum": MAX_AMOUNT.to_string().parse::<u64>().unwrap_or(1_000_000_000), "multipleOf": 0.01},
            {"type": "string", "pattern": MONEY_INPUT},
        ],
    });
    let line = |profit_required: bool| {
        let mut required = vec!["variant_id", "quantity"];
        if profit_required {
            required.push("profit");
        }
        json!({
            "type": "object",
            "required": required,
            "properties": {
                "variant_id": id_input(),
                "quantity": {"type": "integer", "minimum": 1, "maximum": MAX_QUANTITY},
                "profit": if profit_required { money_input.clone() } else { nullable(money_input.clone()) },
                "warranty_ids": nullable(json!({"type": "array", "maxItems": MAX_WARRANTIES, "items": {"type": "integer"}})),
            },
        })
    };
    let checkout = |profit_required: bool| {
        json!({
            "shipping_option_id": id_input(),
            "governorate_id": id_input(),
            "lines": {"type": "array", "minItems": 1, "maxItems": MAX_LINES, "items": line(profit_required)},
        })
    };
    let mut order_properties = json!({
        "external_reference": optional_text(SINGLE_LINE, MAX_REFERENCE),
        "full_name": text(SINGLE_LINE_FILLED, MAX_TEXT),
        "phone": {"type": "string", "maxLength": MAX_PHONE, "pattern": PHONE},
        "second_phone": nullable(json!({"type": "string", "pattern": OPTIONAL_PHONE})),
        "address": text(MULTI_LINE_FILLED, MAX_TEXT),
        "store_name": optional_text(SINGLE_LINE, MAX_TEXT),
        "store_link": optional_text(r"^\s*https?://[^/\\\s]", MAX_TEXT),
        "note": optional_text(MULTI_LINE, MAX_NOTE),
    });
    if let (Some(order), Value::Object(checkout)) =
        (order_properties.as_object_mut(), checkout(true))
    {
        order.extend(checkout);
    }
    let subscribable = enum_of(EventType::SUBSCRIBABLE, EventType::as_str);
    let events = json!({"type": "array", "minItems": 1, "items": subscribable});
    let url = json!({
        "type": "string",
        "maxLength": MAX_URL,
        "pattern": r"^\s*https://[^/\\\s]",
        "description": "An https URL whose host is public (not a private, loopback or link-local address).",
    });
    let description = optional_text(SINGLE_LINE, MAX_DESCRIPTION);
    let error_codes: Vec<&str> = ErrorCode::ALL.iter().map(|c| c.as_str()).collect();
    let conflict_reasons: Vec<&str> = ConflictReason::ALL.iter().map(|r| r.as_str()).collect();
    let withdrawal = json!({
        "type": "object",
        "required": ["id", "amount", "supply_amount", "status", "wallet_number", "wallet_description",
                     "notes", "transfer_reference", "receipt_url", "created_at", "decided_at"],
        "properties": {
            "id": {"$ref": "#/components/schemas/WithdrawalId"},
            "amount": money, "supply_amount": money,
            "status": {
                "type": "object", "required": ["key", "label"],
                "properties": {"key": {"$ref": "#/components/schemas/WithdrawalStatus"}, "label": {"type": "string"}},
            },
            "wallet_number": {"type": "string"},
            "wallet_description": {"type": "string"},
            "notes": {"type": ["string", "null"]},
            "transfer_reference": {"type": ["string", "null"]},
            "receipt_url": {"type": ["string", "null"]},
            "created_at": stamp,
            "decided_at": nullable(stamp.clone()),
        },
    });
    let object = |properties: Value| {
        let required: Vec<String> = properties
            .as_object()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        json!({"type": "object", "required": required, "properties": properties})
    };
    let wallet = object(json!({
        "side": {"$ref": "#/components/schemas/Side"},
        "currency": {"const": "EGP"},
        "income_tax_percent": money,
        "ready": money,
        "held": object(json!({"amount": money, "next_ready_at": nullable(stamp.clone())})),
        "expected": money,
        "referral": object(json!({"percent": money, "earned": money, "expected": money})),
        "received": money,
        "total_commission": money,
        "pending_withdrawals": object(json!({
            "count": {"type": "integer", "minimum": 0},
            "amount": money,
            "items": {"type": "array", "items": withdrawal},
        })),
        "withdrawal": object(json!({
            "open": {"type": "boolean"},
            "days": {"type": "array", "items": {"enum": ["sunday", "thursday"]}},
            "timezone": {"const": crate::time::CAIRO_TZ_NAME},
            "opens_at": stamp,
            "closes_at": stamp,
            "minimum": money,
            "minimum_currency": {"const": "EGP"},
            "note": {"type": "string"},
        })),
    }));
    let event = |types: Value, data: Value| {
        object(json!({
            "id": {"type": "string", "pattern": EVENT_ID},
            "type": types,
            "created_at": stamp,
            "data": data,
        }))
    };
    let order_events =
        json!({"enum": [EventType::OrderCreated.as_str(), EventType::OrderStatusChanged.as_str()]});
    let mut written = Map::new();
    for (name, schema) in [
        (
            "Error",
            json!({
                "type": "object",
                "required": ["error"],
                "properties": {"error": {
                    "type": "object",
                    "required": ["code", "message"],
                    "properties": {
                        "code": {"type": "string", "enum": error_codes},
                        "message": {"type": "string", "minLength": 1, "description": "In Arabic."},
                        "fields": {
                            "type": "object",
                            "description": "Messages per field, under dotted keys (`lines.0.quantity`); only on 422.",
                            "additionalProperties": {"type": "array", "minItems": 1, "items": {"type": "string"}},
                        },
                        "api_status": {"$ref": "#/components/schemas/ApiStatus"},
                        "retry_after": {"type": "integer", "minimum": 1},
                        "existing_order_id": {"type": "integer", "minimum": 1},
                        "existing_order_number": {"type": "string"},
                        "reason": {
                            "type": "string",
                            "enum": conflict_reasons,
                            "description": "Why a 409 `conflict` was refused (always there on a 409): branch on it, not on `message`.",
                        },
                    },
                }},
            }),
        ),
        ("Wallet", wallet),
        ("Withdrawal", withdrawal.clone()),
        (
            "QuoteRequest",
            json!({"type": "object", "required": ["shipping_option_id", "governorate_id", "lines"], "properties": checkout(false)}),
        ),
        (
            "OrderRequest",
            json!({
                "type": "object",
                "required": ["full_name", "phone", "address", "shipping_option_id", "governorate_id", "lines"],
                "properties": order_properties,
            }),
        ),
        (
            "CancelRequest",
            json!({"type": "object", "properties": {"reason_note": optional_text(MULTI_LINE, MAX_REASON)}}),
        ),
        (
            "WebhookCreate",
            json!({
                "type": "object",
                "required": ["url"],
                "properties": {"url": url, "events": nullable(events.clone()), "description": description},
            }),
        ),
        (
            "WebhookUpdate",
            json!({
                "type": "object",
                "properties": {
                    "url": optional_text(r"^\s*https://[^/\\\s]", MAX_URL),
                    "events": nullable(events),
                    "description": description,
                    "enabled": {"type": ["boolean", "null"]},
                },
            }),
        ),
        (
            "WebhookWithSecret",
            json!({"allOf": [{"$ref": "#/components/schemas/WebhookView"}, {"required": ["secret"]}]}),
        ),
        (
            "OrderEvent",
            event(
                order_events,
                object(json!({
                    "order": {"$ref": "#/components/schemas/OrderView"},
                    "previous_status": nullable(json!({"$ref": "#/components/schemas/StatusView"})),
                })),
            ),
        ),
        (
            "PingEvent",
            event(
                json!({"const": EventType::Ping.as_str()}),
                object(json!({"webhook_id": {"$ref": "#/components/schemas/WebhookId"}})),
            ),
        ),
    ] {
        written.insert(name.to_owned(), schema);
    }
    written
}

/// The `webhooks` section: each event as the request the endpoint receives.
fn webhooks() -> Value {
    let mut section = Map::new();
    for kind in EventType::ALL {
        let schema = match kind {
            EventType::Ping => "PingEvent",
            _ => "OrderEvent",
        };
        section.insert(
            kind.as_str().to_owned(),
            json!({"post": {
                "summary": format!("The `{}` event", kind.as_str()),
                "description": "Signed as Standard Webhooks: `webhook-id`, `webhook-timestamp` and `webhook-signature` headers.",
                "requestBody": {"required": true, "content": {JSON: {"schema": {"$ref": format!("#/components/schemas/{schema}")}}}},
                "responses": {"2XX": {"description": "Received; any other answer is retried."}},
            }}),
        );
    }
    Value::Object(section)
}
