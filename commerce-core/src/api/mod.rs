//! The handlers, one module per resource.

mod catalog;
pub(crate) mod changes;
pub(crate) use changes::Cursor;
pub(crate) mod checkout;
mod idempotency;
mod me;
pub(crate) mod orders;
mod sandbox;
mod shipping;
mod supply;
mod wallet;
mod webhooks;

use bytes::Bytes;
use chrono::{DateTime, Utc};
use http::{HeaderMap, Request, Response, StatusCode};

use crate::cache::shared::Shared;
use crate::config::Config;
use crate::domain::earnings::PayoutRules;
use crate::error::ApiError;
use crate::render::wire;
use crate::store::Store;
use crate::web::auth::Caller;
use crate::web::routes::{Endpoint, MountPrefix, endpoint_table};
use supply::{quotes, statement};

/// What a handler may read of its request besides its path's ids (bound by the endpoint
/// table) and its context.
pub(crate) struct Call<'r> {
    /// The query string, if any.
    pub query: Option<&'r str>,
    /// The body (empty for an endpoint answered before it is read).
    pub body: &'r Bytes,
    /// The request's headers.
    pub headers: &'r HeaderMap,
    /// The path the API is mounted under (`""` at the root).
    pub mount: &'r str,
}

/// Expands the endpoint table (`endpoint_table!`) into [`serve`], which calls each
/// endpoint's handler, and [`serve_keyless`], which answers the endpoints that need no key.
macro_rules! dispatch {
    (routes $routes:tt handlers [$(
        $variant:ident [$( ($($id:ident),*) )?] $key:tt
        |$ctx:pat_param, $call:pat_param| $serve:expr;
    )*] specs $specs:tt) => {
        /// Runs the handler of an endpoint for an authorised caller.
        pub(crate) async fn serve(
            ctx: &Ctx<'_>,
            endpoint: Endpoint,
            request: Request<Bytes>,
        ) -> Result<Response<Bytes>, ApiError> {
            let (parts, body) = request.into_parts();
            let call = Call {
                query: parts.uri.query(),
                body: &body,
                headers: &parts.headers,
                mount: mount_of(&parts),
            };
            match endpoint {
                $(
                    Endpoint::$variant $( ( $($id),* ) )? => {
                        let $ctx = ctx;
                        let $call = &call;
                        $serve
                    }
                )*
            }
        }

        /// The answer (or the error, rendered by the engine) to a request whose endpoint needs no key ([`Endpoint::needs_key`]),
        /// served before the key is read (its body unread); `None` for every other endpoint.
        pub(crate) fn serve_keyless(
            endpoint: Endpoint,
            parts: &http::request::Parts,
        ) -> Option<Result<Response<Bytes>, ApiError>> {
            let body = Bytes::new();
            let call = Call {
                query: parts.uri.query(),
                body: &body,
                headers: &parts.headers,
                mount: mount_of(parts),
            };
            $( keyless!($key, endpoint, call, $variant, |$ctx, $call| $serve); )*
            None
        }
    };
}

/// One endpoint's part of [`serve_keyless`]: nothing for an endpoint that needs a key; for
/// one that does not, its handler's answer (its handler has no context to read).
macro_rules! keyless {
    (true, $($entry:tt)*) => {};
    (false, $endpoint:ident, $call_value:ident, $variant:ident,
        |$ctx:pat_param, $call:pat_param| $serve:expr) => {
        if let Endpoint::$variant { .. } = $endpoint {
            let $call = &$call_value;
            let answer: Result<Response<Bytes>, ApiError> = $serve;
            return Some(answer);
        }
    };
}

endpoint_table!(dispatch!());

/// The path the API is mounted under (`""` at the root).
fn mount_of(parts: &http::request::Parts) -> &str {
    parts
        .extensions
        .get::<MountPrefix>()
        .map_or("", MountPrefix::as_str)
}

/// `GET /openapi.json`: its `servers` is the path the API is mounted under, so that a client
/// generated from it calls `{mount}/api/v1/...`.
fn openapi_document(mount: &str) -> Response<Bytes> {
    wire::json_response(
        StatusCode::OK,
        crate::web::openapi::document_bytes_under(mount),
    )
}

/// `GET /docs`: the document as a reference page, rendered once.
fn reference_page() -> Response<Bytes> {
    crate::web::html::page(
        StatusCode::OK,
        crate::web::openapi::reference_page().clone(),
    )
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
