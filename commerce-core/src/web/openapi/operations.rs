//! One operation of the document: its parameters, request body, success and error answers,
//! and the headers every answer carries.

use serde_json::Value;
use utoipa::PartialSchema;
use utoipa::openapi::extensions::ExtensionsBuilder;
use utoipa::openapi::link::LinkBuilder;
use utoipa::openapi::path::{OperationBuilder, ParameterBuilder, ParameterIn};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{ArrayBuilder, ObjectBuilder, Schema, Type};
use utoipa::openapi::security::SecurityRequirement;
use utoipa::openapi::{ContentBuilder, HeaderBuilder, Ref, RefOr, Required, ResponseBuilder};

use crate::error::ErrorCode;
use crate::limits::{
    MAX_CHANGES_LIMIT, MAX_CURSOR, MAX_IDEMPOTENCY_KEY, MAX_PER_PAGE, MAX_REQUEST_ID,
};
use crate::model::*;
use crate::web::routes::Endpoint;

use super::endpoints::{Body, QueryParam, Spec, spec};
use super::{CURSOR_INPUT, DATE_INPUT, JSON, SINGLE_LINE_FILLED, TIMESTAMP_INPUT};

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
        Since => (
            "since",
            "Only products stopped at or after this instant (with an offset).",
            string_schema(TIMESTAMP_INPUT, None).into(),
        ),
        From => (
            "from",
            "Only entries written on this day (Cairo time, `YYYY-MM-DD`) or later.",
            string_schema(DATE_INPUT, None).into(),
        ),
        To => (
            "to",
            "Only entries written on this day (Cairo time, `YYYY-MM-DD`) or earlier.",
            string_schema(DATE_INPUT, None).into(),
        ),
        QuoteStatus => (
            "status",
            "One quote status (`expired`: pending quotes past their `valid_until`).",
            crate::model::QuoteStatus::schema(),
        ),
        VariantId => (
            "variant_id",
            "Only quotes of this variant.",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1))
                .into(),
        ),
        After => (
            "after",
            "A cursor the feed gave (`cursor` or `next_cursor`); left out, the feed starts at its oldest kept change.",
            string_schema(CURSOR_INPUT, Some(MAX_CURSOR)).into(),
        ),
        Limit => (
            "limit",
            "At most this many changes (100 when left out).",
            ObjectBuilder::new()
                .schema_type(Type::Integer)
                .minimum(Some(1))
                .maximum(Some(MAX_CHANGES_LIMIT))
                .into(),
        ),
    };
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Query)
        .required(if matches!(param, Since) {
            Required::True
        } else {
            Required::False
        })
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

pub(super) fn header(
    description: &str,
    schema: impl Into<RefOr<Schema>>,
) -> utoipa::openapi::Header {
    HeaderBuilder::new()
        .schema(schema)
        .description(Some(description))
        .build()
}

pub(super) fn integer() -> ObjectBuilder {
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

/// `Request-Id`, on every answer.
fn request_id_header() -> utoipa::openapi::Header {
    header(
        "The request's id (the client's own `Request-Id` when it sent a valid one, else \
         `req_` and 24 characters from `[a-z0-9]`); error bodies repeat it as \
         `error.request_id`. Quote it when asking for support.",
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(MAX_REQUEST_ID))
            .pattern(Some(PRINTABLE)),
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

/// The error answer of `status` of the operation of `spec`.
fn error_response(spec: &Spec, status: u16) -> ResponseBuilder {
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
        let reasons: Vec<&str> = spec.conflicts.iter().map(|r| r.as_str()).collect();
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
        .content(JSON, ContentBuilder::new().schema(Some(schema)).build())
        .header("Request-Id", request_id_header());
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
    if spec.idempotent && matches!(status, 409 | 422) {
        response = response.header("Idempotent-Replayed", replayed_header());
    }
    response
}

fn success_response(endpoint: Endpoint, spec: &Spec) -> ResponseBuilder {
    let (status, body) = &spec.success;
    let schema: Option<RefOr<Schema>> = body.as_ref().map(|body| match body {
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
        Body::Feed(name) => ObjectBuilder::new()
            .property("data", ArrayBuilder::new().items(schema_ref(name)))
            .property("meta", schema_ref("FeedMeta"))
            .required("data")
            .required("meta")
            .into(),
        Body::Object => ObjectBuilder::new().schema_type(Type::Object).into(),
    });
    let mut response = ResponseBuilder::new()
        .description(match status {
            201 => "Created.",
            202 => "Queued.",
            204 => "Done; no body.",
            _ => "OK.",
        })
        .header("Request-Id", request_id_header());
    if let Some(schema) = schema {
        response = response.content(JSON, ContentBuilder::new().schema(Some(schema)).build());
    }
    if endpoint.needs_key() {
        response = with_rate_headers(response);
    }
    if let Some(location) = spec.location {
        response = response.header(
            "Location",
            header(location, ObjectBuilder::new().schema_type(Type::String)),
        );
    }
    if spec.idempotent {
        response = response.header("Idempotent-Replayed", replayed_header());
    }
    for link in spec.links {
        let built = link
            .parameters
            .iter()
            .fold(
                LinkBuilder::new().operation_id(link.operation),
                |built, (name, value)| built.parameter(*name, *value),
            )
            .build();
        response = response.link(link.name, built);
    }
    response
}

/// An optional request header of 1 to `max` printable ASCII characters (no surrounding space).
fn printable_header(name: &str, description: &str, max: usize) -> utoipa::openapi::path::Parameter {
    header_parameter(
        name,
        description,
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
            .max_length(Some(max))
            .pattern(Some(PRINTABLE)),
    )
}

/// An optional header of the request, of `schema`.
fn header_parameter(
    name: &str,
    description: &str,
    schema: ObjectBuilder,
) -> utoipa::openapi::path::Parameter {
    ParameterBuilder::new()
        .name(name)
        .parameter_in(ParameterIn::Header)
        .required(Required::False)
        .description(Some(description))
        .schema(Some(schema))
        .build()
}

/// 1 or more printable ASCII characters, spaces inside only.
const PRINTABLE: &str = r"^[!-~]([ -~]*[!-~])?$";

pub(super) fn operation(template: &str, endpoint: Endpoint) -> utoipa::openapi::path::Operation {
    let spec = spec(endpoint);
    let ability = endpoint.ability().map(Ability::as_str);
    let abilities: Vec<&str> = endpoint.abilities().iter().map(|a| a.as_str()).collect();
    let mut description = match abilities.as_slice() {
        [] if endpoint.needs_key() => "Any live key.".to_owned(),
        [] => "No key needed; not counted toward any rate limit.".to_owned(),
        [one] => format!("Needs a key with the ability `{one}`."),
        all => format!("Needs a key with the abilities `{}`.", all.join("`, `")),
    };
    if let Some(note) = spec.note {
        description.push(' ');
        description.push_str(note);
    }
    if endpoint.needs_key() {
        let sides = match endpoint.sides() {
            crate::web::routes::Sides::All => "every account side",
            crate::web::routes::Sides::MarketerOrSupplier => "marketers and suppliers",
            crate::web::routes::Sides::Marketer => "marketers only",
            crate::web::routes::Sides::Supplier => "suppliers only",
        };
        description.push_str(&format!(" Serves {sides}."));
    }
    if spec.tag == "sandbox" {
        description.push_str(
            " Only in the sandbox's test mode (`Config::test_mode`, which only the sandbox turns \
             on): a production engine answers this path `404 not_found`, as any unknown path. \
             Not billed.",
        );
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
    // Any value is accepted (one that is not an id is replaced, never refused), so the schema
    // constrains nothing: a pattern here would promise a 400 the engine never gives.
    op = op.parameter(header_parameter(
        "Request-Id",
        &format!(
            "Your own id for this request, echoed in the answer's `Request-Id` when it is 1 to \
             {MAX_REQUEST_ID} printable ASCII characters (spaces inside only); any other value \
             is not refused but replaced by a new id."
        ),
        ObjectBuilder::new().schema_type(Type::String),
    ));
    if spec.idempotent {
        op = op.parameter(printable_header(
            "Idempotency-Key",
            "Makes a retry safe: the same key and body within 24 hours replay the first answer.",
            MAX_IDEMPOTENCY_KEY,
        ));
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
    op = op.response(
        spec.success.0.to_string(),
        success_response(endpoint, &spec).build(),
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
        op = op.response(status.to_string(), error_response(&spec, status).build());
    }
    op.build()
}
