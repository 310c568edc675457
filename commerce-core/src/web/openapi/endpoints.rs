//! What an operation of the document says beyond what every operation shares (its summary,
//! tag, success body, query parameters, request body, error statuses, conflict reasons,
//! idempotency, links): [`Spec`], whose values for each endpoint are the `openapi` part of its
//! entry in the endpoint table (`routes/table.rs`).

use crate::error::ConflictReason;
use crate::web::routes::{Endpoint, endpoint_table};

/// What one endpoint answers and reads, beyond what every endpoint shares: the `openapi`
/// part of its entry in the endpoint table, the fields left out there taken from
/// [`Spec::DEFAULT`].
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
    /// The reasons of its 409s.
    pub(super) conflicts: &'static [ConflictReason],
    /// Whether it takes `Idempotency-Key` (and answers `Idempotent-Replayed`).
    pub(super) idempotent: bool,
    /// The description of the success answer's `Location` header, if it has one.
    pub(super) location: Option<&'static str>,
    /// The success answer's links to other operations.
    pub(super) links: &'static [Link],
    /// A sentence added to the operation's description.
    pub(super) note: Option<&'static str>,
    /// Whether the document lists it (`false`: a route for people, such as the reference
    /// page, that is not an operation of the API).
    pub(super) documented: bool,
}

impl Spec {
    /// What an entry leaves out: no query parameter, request body, extra error, conflict
    /// reason, idempotency, `Location`, link or note, and in the document. (`summary`, `tag`
    /// and `success` are always written.)
    const DEFAULT: Spec = Spec {
        summary: "",
        tag: "",
        success: (200, None),
        query: &[],
        request: None,
        errors: &[],
        conflicts: &[],
        idempotent: false,
        location: None,
        links: &[],
        note: None,
        documented: true,
    };
}

/// A link of a success answer to another operation.
pub(super) struct Link {
    /// The link's name (`GetOrder`).
    pub(super) name: &'static str,
    /// The operation it leads to (its endpoint's name, `orders.show`).
    pub(super) operation: &'static str,
    /// Its parameters: (name, runtime expression).
    pub(super) parameters: &'static [(&'static str, &'static str)],
}

impl Link {
    /// A link whose `id` is the answer's `data.id`.
    const fn from_body(name: &'static str, operation: &'static str) -> Link {
        Link {
            name,
            operation,
            parameters: &[("id", "$response.body#/data/id")],
        }
    }
}

/// The note of the webhook endpoints' registration and change.
const ORDER_EVENTS_NEED_ORDERS_READ: &str = "Registering an endpoint, or changing its `url` or `events`, when it receives order \
     events afterwards, also needs `orders:read` (else 403 `forbidden_ability`).";

/// The note of a redelivery.
const REDELIVERY_NEEDS_ORDERS_READ: &str = "A marketer's key also needs `orders:read` (else 403 `forbidden_ability`, \
     before anything else): a delivery may carry an order. A supplier's deliveries never do.";

/// The note of the catalogue change feed.
const CHANGES_NOTE: &str = "Gap-free in commit order: once a read returned `next_cursor`, every change committed \
     after that read comes after it, so a client that resumes from the `next_cursor` it last got never misses a \
     change. One entry per product, its latest change. A cursor is opaque; one older than 30 days is a 410 \
     `cursor_expired`. Not billed.";

/// A success body.
pub(super) enum Body {
    /// `{"data": <schema>}`.
    Data(&'static str),
    /// `{"data": [<schema>]}`.
    DataList(&'static str),
    /// `{"data": [<schema>], "meta": {...}}`.
    Page(&'static str),
    /// `{"data": [<schema>], "meta": {"next_cursor", "has_more"}}`: a page of a feed.
    Feed(&'static str),
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
    /// `from`, a Cairo day (the statement).
    From,
    /// `to`, a Cairo day (the statement).
    To,
    /// A quote's `status`.
    QuoteStatus,
    /// `variant_id` (a supplier's quotes).
    VariantId,
    /// `after`, a change feed cursor.
    After,
    /// `limit`, 1 to 1000 (the change feed).
    Limit,
}

const PAGED: &[QueryParam] = &[QueryParam::Page, QueryParam::PerPage];

/// Expands the endpoint table (`endpoint_table!`) into `spec`.
macro_rules! operation_specs {
    (routes $routes:tt handlers $handlers:tt specs [$(
        $variant:ident { $($field:ident : $value:expr),* };
    )*]) => {
        /// What `endpoint`'s operation says, from its entry in the endpoint table.
        pub(super) fn spec(endpoint: Endpoint) -> Spec {
            use Body::*;
            match endpoint {
                $(
                    Endpoint::$variant { .. } => {
                        const SPEC: Spec = Spec { $($field: $value,)* ..Spec::DEFAULT };
                        SPEC
                    }
                )*
            }
        }
    };
}

endpoint_table!(operation_specs!());
