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
//!   own), so their schemas are written here from the same table of limits the readers use
//!   ([`MAX_TEXT`](crate::domain::fields::MAX_TEXT),
//!   [`MAX_LINES`](crate::domain::checkout::MAX_LINES), ...).
//! - The webhook events are in the document's `webhooks` section and in its components.
//! - [`reference_page`] renders the document as one HTML page, served at `GET /api/v1/docs`.

use std::sync::LazyLock;

use bytes::Bytes;
use http::Method;
use serde_json::Value;
use utoipa::ToSchema;
use utoipa::openapi::path::{HttpMethod, PathItem};
use utoipa::openapi::schema::Schema;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    ComponentsBuilder, InfoBuilder, OpenApiBuilder, Paths, RefOr, ServerBuilder, Tag,
};

use crate::model::*;
use crate::render::wire::{
    AccountView, CategoryView, DeliveryView, ListMeta, Money, OrderView, ProductView,
    QuoteStatusView, QuoteView, ShippingOptionView, Stamp, StatusView, SupplierQuoteView,
    SupplyVariantView, WebhookView, WithdrawalStatusView, WithdrawalView,
};
use crate::web::routes::{API_PREFIX, ROUTES};

mod endpoints;
mod operations;
mod reference;
mod schemas;

use operations::operation;
pub use reference::reference_page;
use schemas::{webhooks, written_schemas};

/// The name of the bearer security scheme.
const BEARER: &str = "bearer";
/// The JSON media type of every body.
pub(super) const JSON: &str = "application/json";

/// Single-line printable text: no control character (tab and line breaks included) and no
/// bidirectional embedding, override or isolate.
pub(super) const SINGLE_LINE: &str = r"^[^\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*$";
/// Multi-line printable text: tab, CR and LF allowed.
pub(super) const MULTI_LINE: &str =
    r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*$";
/// Single-line printable text with at least one character that is not white space.
pub(super) const SINGLE_LINE_FILLED: &str = r"^[^\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*[^\s\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069][^\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*$";
/// Multi-line printable text with at least one character that is not white space.
pub(super) const MULTI_LINE_FILLED: &str = r"^[^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*[^\s\u0000-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069][^\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u202A-\u202E\u2066-\u2069]*$";
/// An Egyptian mobile number as the API takes it: `01` and 9 digits, or with `+20` / `0020`
/// in place of the leading `0`, with spaces and dashes anywhere (`0100 123 4567`,
/// `+20-100-123-4567`; the server drops them).
pub(super) const PHONE: &str =
    r"^[ -]*(\+[ -]*2[ -]*0|0[ -]*0[ -]*2[ -]*0|0)[ -]*1([ -]*[0-9]){9}[ -]*$";
/// An optional phone: a phone, or blank (taken as left out).
pub(super) const OPTIONAL_PHONE: &str =
    r"^\s*$|^[ -]*(\+[ -]*2[ -]*0|0[ -]*0[ -]*2[ -]*0|0)[ -]*1([ -]*[0-9]){9}[ -]*$";
/// White space only (or nothing).
pub(super) const BLANK: &str = r"^\s*$";
/// A money amount as a string input: plain decimal notation, at most two decimals.
pub(super) const MONEY_INPUT: &str = r"^\+?[0-9]{1,10}(\.[0-9]{1,2})?$";
/// An `updated_since` value: a date and a time with an offset (`Z`, `+hh`, `+hhmm`, `+hh:mm`).
/// A calendar day as a query parameter takes it (`from`, `to` of the statement).
/// A change feed cursor: base64url without padding.
pub(super) const CURSOR_INPUT: &str = r"^[A-Za-z0-9_-]+$";
pub(super) const DATE_INPUT: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}$";
pub(super) const TIMESTAMP_INPUT: &str = r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?(Z|[+-][0-9]{2}(:?[0-9]{2})?)$";
/// An event id: `evt_` and 24 characters from `[a-z0-9]`.
pub(super) const EVENT_ID: &str = r"^evt_[a-z0-9]{24}$";

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

/// The document as served at the root (compact JSON).
pub fn document_bytes() -> &'static Bytes {
    &DOCUMENT.1
}

/// The document as served by an engine mounted under `mount` (`""` at the root, `"/shop"`):
/// its one server is that path, so that `{server}/api/v1/...` is where the API answers.
pub fn document_bytes_under(mount: &str) -> Vec<u8> {
    if mount.is_empty() {
        return document_bytes().to_vec();
    }
    let mut document = document().clone();
    document["servers"] = serde_json::json!([{"url": mount}]);
    serde_json::to_vec(&document).expect("the document serialises")
}

/// Whether the document lists `endpoint` as an operation: every endpoint but the pages for
/// people (the reference page, `GET /docs`).
pub fn documented(endpoint: crate::web::routes::Endpoint) -> bool {
    endpoints::spec(endpoint).documented
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
        if !documented(endpoint) {
            continue;
        }
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
    register::<SupplierQuoteView>(&mut schemas);
    register::<SupplyVariantView>(&mut schemas);
    register::<QuoteStatusView>(&mut schemas);
    register::<WithdrawalView>(&mut schemas);
    register::<WithdrawalStatusView>(&mut schemas);
    register::<ListMeta>(&mut schemas);
    register::<Money>(&mut schemas);
    register::<Stamp>(&mut schemas);
    register::<WithdrawalStatus>(&mut schemas);
    register::<Side>(&mut schemas);
    register::<ApiStatus>(&mut schemas);
    register::<WithdrawalId>(&mut schemas);
    register::<StatementEntryId>(&mut schemas);
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
                "statement",
                "webhooks",
                "supply",
                "quotes",
                "meta",
                "sandbox",
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
