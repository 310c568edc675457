//! The scope of an idempotency key and the response kept for replay.

use super::*;

/// The scope of an idempotency key: the account plus the header value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyScope {
    /// Account.
    pub account_id: AccountId,
    /// `Idempotency-Key` header value.
    pub key: String,
}

/// A response kept for replay.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResponse {
    /// HTTP status.
    pub status: u16,
    /// Body bytes.
    pub body: Vec<u8>,
}
