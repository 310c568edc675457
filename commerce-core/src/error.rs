//! The one error type of the API, rendered in one place.

use std::collections::BTreeMap;

use bytes::Bytes;
use http::{HeaderName, HeaderValue, Response, StatusCode};
use serde::Serialize;
use serde_json::{Map, Value};

use crate::model::string_enum;
use crate::render::messages;
use crate::render::request_id::RequestId;

string_enum! {
    /// The stable machine-readable error codes (docs/errors.md).
    ErrorCode {
        /// 401: key missing, wrong, revoked or expired.
        Unauthenticated => "unauthenticated",
        /// 403: account suspended, deleted or incomplete.
        AccountInactive => "account_inactive",
        /// 403: request for another account type.
        WrongSide => "wrong_side",
        /// 403: API access not active; carries `api_status`.
        ApiNotEnabled => "api_not_enabled",
        /// 403: key lacks the needed ability.
        ForbiddenAbility => "forbidden_ability",
        /// 404: unknown id, another account's id, or unknown path.
        NotFound => "not_found",
        /// 405: path right, method wrong.
        MethodNotAllowed => "method_not_allowed",
        /// 400: the body could not be read (a broken chunked encoding, a connection cut
        /// mid-body).
        BadRequest => "bad_request",
        /// 408: the body was not read whole within the server's time (`Config::body_timeout`).
        RequestTimeout => "request_timeout",
        /// 409: the records as they stand refuse the request; [`ConflictReason`] says why.
        Conflict => "conflict",
        /// 410: `GET /catalog/changes`: the `after` cursor is older than the feed keeps
        /// changes (30 days); read the catalogue again and start from a new cursor.
        CursorExpired => "cursor_expired",
        /// 413: body over the limit.
        PayloadTooLarge => "payload_too_large",
        /// 422: missing or wrong field.
        ValidationFailed => "validation_failed",
        /// 429: per-minute limit exceeded.
        RateLimited => "rate_limited",
        /// 500: server-side problem.
        ServerError => "server_error",
    }
}

impl ErrorCode {
    /// The HTTP status.
    pub fn status(self) -> StatusCode {
        match self {
            ErrorCode::BadRequest => StatusCode::BAD_REQUEST,
            ErrorCode::Unauthenticated => StatusCode::UNAUTHORIZED,
            ErrorCode::AccountInactive
            | ErrorCode::WrongSide
            | ErrorCode::ApiNotEnabled
            | ErrorCode::ForbiddenAbility => StatusCode::FORBIDDEN,
            ErrorCode::NotFound => StatusCode::NOT_FOUND,
            ErrorCode::MethodNotAllowed => StatusCode::METHOD_NOT_ALLOWED,
            ErrorCode::RequestTimeout => StatusCode::REQUEST_TIMEOUT,
            ErrorCode::Conflict => StatusCode::CONFLICT,
            ErrorCode::CursorExpired => StatusCode::GONE,
            ErrorCode::PayloadTooLarge => StatusCode::PAYLOAD_TOO_LARGE,
            ErrorCode::ValidationFailed => StatusCode::UNPROCESSABLE_ENTITY,
            ErrorCode::RateLimited => StatusCode::TOO_MANY_REQUESTS,
            ErrorCode::ServerError => StatusCode::INTERNAL_SERVER_ERROR,
        }
    }

    fn default_message(self) -> &'static str {
        match self {
            ErrorCode::BadRequest => messages::BODY_UNREADABLE,
            ErrorCode::Unauthenticated => messages::UNAUTHENTICATED,
            ErrorCode::AccountInactive => messages::ACCOUNT_INACTIVE,
            ErrorCode::WrongSide => messages::WRONG_SIDE,
            ErrorCode::ApiNotEnabled => messages::API_NOT_ENABLED,
            ErrorCode::ForbiddenAbility => messages::FORBIDDEN_ABILITY,
            ErrorCode::NotFound => messages::NOT_FOUND,
            ErrorCode::MethodNotAllowed => messages::METHOD_NOT_ALLOWED,
            ErrorCode::RequestTimeout => messages::BODY_TIMEOUT,
            // Unused: a 409 is built by `ApiError::conflict`, with its reason's message.
            ErrorCode::Conflict => messages::IDEMPOTENCY_MISMATCH,
            ErrorCode::CursorExpired => messages::CURSOR_EXPIRED,
            ErrorCode::PayloadTooLarge => messages::PAYLOAD_TOO_LARGE,
            ErrorCode::ValidationFailed => messages::VALIDATION_FAILED,
            ErrorCode::RateLimited => messages::RATE_LIMITED,
            ErrorCode::ServerError => messages::SERVER_ERROR,
        }
    }
}

/// Why a request is a 409 `conflict`: the `reason` field of its error, on which clients
/// branch (the Arabic `message` is for display). Every 409 has one ([`ApiError::conflict`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ConflictReason {
    /// `POST /orders`: the `external_reference` is used by another order of the account
    /// (`existing_order_id`, `existing_order_number` name it).
    DuplicateExternalReference,
    /// `POST /orders`, `POST /quotes`: the `Idempotency-Key` was used with other data.
    IdempotencyKeyReused,
    /// `POST /orders`, `POST /quotes`: the first request with this `Idempotency-Key` is still
    /// running; retry later with the same key.
    IdempotencyInProgress,
    /// `POST /orders/{id}/cancel`: the order is no longer pending.
    NotCancellable,
    /// The order's status does not allow the move (the operator's moves).
    MoveNotAllowed,
    /// `POST /webhooks`: the account has as many endpoints as it may.
    WebhookLimit,
    /// Ping or redeliver to a disabled endpoint: enable it first.
    WebhookDisabled,
    /// Ping or redeliver while the endpoint has as many manual deliveries pending as it may.
    WebhookBusy,
    /// The owner's keys page and the platform's key creation (no endpoint of the API creates
    /// keys): the account has as many live keys as it may.
    KeyLimit,
    /// `POST /quotes`: the variant already has a pending quote (`existing_quote_id` names it).
    QuotePending,
    /// `POST /quotes/{id}/withdraw`: the quote is no longer pending (decided, withdrawn or
    /// expired).
    NotWithdrawable,
    /// `POST /orders`: the ordered products' prices or warranties changed twice while the
    /// order was being placed (nothing was registered); retry the same request.
    CatalogueChanged,
}

impl ConflictReason {
    /// Every reason.
    pub const ALL: &'static [ConflictReason] = &[
        ConflictReason::DuplicateExternalReference,
        ConflictReason::IdempotencyKeyReused,
        ConflictReason::IdempotencyInProgress,
        ConflictReason::NotCancellable,
        ConflictReason::MoveNotAllowed,
        ConflictReason::WebhookLimit,
        ConflictReason::WebhookDisabled,
        ConflictReason::WebhookBusy,
        ConflictReason::KeyLimit,
        ConflictReason::QuotePending,
        ConflictReason::NotWithdrawable,
        ConflictReason::CatalogueChanged,
    ];

    /// The wire spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            ConflictReason::DuplicateExternalReference => "duplicate_external_reference",
            ConflictReason::IdempotencyKeyReused => "idempotency_key_reused",
            ConflictReason::IdempotencyInProgress => "idempotency_in_progress",
            ConflictReason::NotCancellable => "not_cancellable",
            ConflictReason::MoveNotAllowed => "move_not_allowed",
            ConflictReason::WebhookLimit => "webhook_limit",
            ConflictReason::WebhookDisabled => "webhook_disabled",
            ConflictReason::WebhookBusy => "webhook_busy",
            ConflictReason::KeyLimit => "key_limit",
            ConflictReason::QuotePending => "quote_pending",
            ConflictReason::NotWithdrawable => "not_withdrawable",
            ConflictReason::CatalogueChanged => "catalogue_changed",
        }
    }
}

/// Per-field messages under dotted keys (`lines.3.warranty_ids`).
pub type FieldErrors = BTreeMap<String, Vec<String>>;

/// An API error: a code, an Arabic message, optional per-field messages, extra body fields
/// and extra headers.
///
/// Built by its constructors ([`new`](Self::new), [`conflict`](Self::conflict),
/// [`validation`](Self::validation), [`field`](Self::field), ...) and the `with_*` builders;
/// read through its accessors. The engine renders it once, with the request's id.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiError {
    code: ErrorCode,
    message: String,
    fields: FieldErrors,
    extra: Map<String, Value>,
    headers: Vec<(HeaderName, HeaderValue)>,
}

impl ApiError {
    /// An error with the code's standard message. A 409 is built by
    /// [`conflict`](Self::conflict), which gives it its reason.
    pub fn new(code: ErrorCode) -> Self {
        Self {
            code,
            message: code.default_message().to_owned(),
            fields: FieldErrors::new(),
            extra: Map::new(),
            headers: Vec::new(),
        }
    }

    /// Replaces the message.
    pub fn with_message(mut self, message: impl Into<String>) -> Self {
        self.message = message.into();
        self
    }

    /// Adds an extra field inside the `error` object.
    pub fn with_extra(mut self, name: &str, value: impl Into<Value>) -> Self {
        self.extra.insert(name.to_owned(), value.into());
        self
    }

    /// Adds a response header.
    pub fn with_header(mut self, name: HeaderName, value: HeaderValue) -> Self {
        self.headers.push((name, value));
        self
    }

    /// A 422 with per-field messages.
    pub fn validation(fields: FieldErrors) -> Self {
        Self {
            fields,
            ..Self::new(ErrorCode::ValidationFailed)
        }
    }

    /// A 422 on one field.
    pub fn field(name: impl Into<String>, message: impl Into<String>) -> Self {
        let mut fields = FieldErrors::new();
        fields.insert(name.into(), vec![message.into()]);
        Self::validation(fields)
    }

    /// A 404 `not_found`.
    pub fn not_found() -> Self {
        Self::new(ErrorCode::NotFound)
    }

    /// A 409 `conflict` for `reason` (the `reason` field), with a message to display. The
    /// only way to build a 409: every one carries its reason.
    pub fn conflict(reason: ConflictReason, message: &str) -> Self {
        Self::new(ErrorCode::Conflict)
            .with_message(message)
            .with_extra("reason", reason.as_str())
    }

    /// A 413 `payload_too_large` whose message names the body limit, `limit` bytes.
    pub(crate) fn payload_too_large(limit: usize) -> Self {
        Self::new(ErrorCode::PayloadTooLarge).with_message(messages::payload_too_large(limit))
    }

    /// A 500 `server_error`.
    pub fn server() -> Self {
        Self::new(ErrorCode::ServerError)
    }

    /// The code.
    pub fn code(&self) -> ErrorCode {
        self.code
    }

    /// The Arabic message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The per-field messages (empty unless a 422 names fields).
    pub fn fields(&self) -> &FieldErrors {
        &self.fields
    }

    /// The extra fields inside the `error` object (`reason`, `api_status`, `retry_after`, ...).
    pub fn extra(&self) -> &Map<String, Value> {
        &self.extra
    }

    /// The extra response headers (`Allow`, `Retry-After`).
    pub fn headers(&self) -> &[(HeaderName, HeaderValue)] {
        &self.headers
    }

    /// A 500 `server_error` for a store failure, logged with what the handler was doing
    /// (`during`, such as `"orders.list"`). The one way a store error becomes an answer: each
    /// handler names it at its call (`.map_err(|e| ApiError::from_store(e, "..."))`).
    pub(crate) fn from_store(error: crate::store::StoreError, during: &'static str) -> Self {
        tracing::error!(%error, during, "store failure");
        ApiError::server()
    }

    /// The error's answer, rendered once: its status, its headers, `Request-Id`, and the JSON
    /// body with `error.request_id`.
    pub(crate) fn render(self, request_id: &RequestId) -> Response<Bytes> {
        debug_assert!(
            self.code != ErrorCode::Conflict || self.extra.contains_key("reason"),
            "a 409 is built by ApiError::conflict, with its reason"
        );
        let mut response =
            crate::render::wire::json_response(self.code.status(), self.body(request_id.as_str()));
        if self.code == ErrorCode::Unauthenticated {
            // RFC 6750: a 401 names the scheme the client should use.
            response.headers_mut().insert(
                http::header::WWW_AUTHENTICATE,
                http::HeaderValue::from_static("Bearer"),
            );
        }
        for (name, value) in self.headers {
            response.headers_mut().append(name, value);
        }
        request_id.stamp(response)
    }

    /// The JSON body: `{"error": {"code", "message", "request_id", "fields"?, ...extra}}`.
    fn body(&self, request_id: &str) -> Vec<u8> {
        #[cfg(test)]
        RENDERED.with(|count| count.set(count.get() + 1));
        #[derive(Serialize)]
        struct Body<'a> {
            error: Inner<'a>,
        }
        #[derive(Serialize)]
        struct Inner<'a> {
            code: &'static str,
            message: &'a str,
            request_id: &'a str,
            #[serde(skip_serializing_if = "BTreeMap::is_empty")]
            fields: &'a FieldErrors,
            #[serde(flatten)]
            extra: &'a Map<String, Value>,
        }
        serde_json::to_vec(&Body {
            error: Inner {
                code: self.code.as_str(),
                message: &self.message,
                request_id,
                fields: &self.fields,
                extra: &self.extra,
            },
        })
        .unwrap_or_default()
    }
}

impl std::fmt::Display for ApiError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)?;
        for (field, messages) in &self.fields {
            write!(f, "; {field}: {}", messages.join(" "))?;
        }
        Ok(())
    }
}

impl std::error::Error for ApiError {}

#[cfg(test)]
thread_local! {
    /// How many error bodies this thread rendered (`ApiError::body`): the tests count the
    /// renderings of one answer (`testing::wire`).
    pub(crate) static RENDERED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_conflict_carries_its_reason() {
        let mut seen = std::collections::HashSet::new();
        for reason in ConflictReason::ALL {
            assert!(seen.insert(reason.as_str()), "{reason:?} spelt twice");
            let response = ApiError::conflict(*reason, "x").render(&RequestId::generate());
            assert_eq!(response.status(), StatusCode::CONFLICT);
            let body: Value = serde_json::from_slice(response.body()).unwrap();
            assert_eq!(body["error"]["code"], "conflict");
            assert_eq!(body["error"]["reason"], reason.as_str());
            assert_eq!(body["error"]["message"], "x");
        }
    }

    #[test]
    fn an_error_body_repeats_the_id_and_others_keep_theirs() {
        let id = {
            let mut headers = http::HeaderMap::new();
            headers.insert(
                "request-id",
                http::HeaderValue::from_static("support-\"7\""),
            );
            RequestId::of(&headers)
        };
        let response = ApiError::new(ErrorCode::NotFound).render(&id);
        assert_eq!(response.headers()["request-id"], "support-\"7\"");
        let body: serde_json::Value = serde_json::from_slice(response.body()).unwrap();
        assert_eq!(body["error"]["request_id"], "support-\"7\"");
        assert_eq!(body["error"]["code"], "not_found");

        let ok = crate::render::wire::json_response(http::StatusCode::OK, b"{\"data\":1}".to_vec());
        let ok = id.stamp(ok);
        assert_eq!(ok.body().as_ref(), b"{\"data\":1}");
        assert_eq!(ok.headers()["request-id"], "support-\"7\"");
    }
}
