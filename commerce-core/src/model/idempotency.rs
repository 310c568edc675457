//! The scope of an idempotency key, the claim a request holds on it, and the response kept
//! for replay.

use super::*;

/// The scope of an idempotency key: the account plus the header value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct IdempotencyScope {
    /// Account.
    pub account_id: AccountId,
    /// `Idempotency-Key` header value.
    pub key: String,
}

impl IdempotencyScope {
    /// A `IdempotencyScope` of its fields, in their order.
    pub fn new(account_id: AccountId, key: String) -> Self {
        Self { account_id, key }
    }
}

/// A response kept for replay.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct StoredResponse {
    /// HTTP status.
    pub status: u16,
    /// Body bytes.
    pub body: Vec<u8>,
}

impl StoredResponse {
    /// A response of `status` with `body`.
    pub fn new(status: u16, body: Vec<u8>) -> Self {
        Self { status, body }
    }
}

/// Who holds an idempotency record: a random value a request writes into the record when it
/// starts it or takes it over, and shows for every later write under the key (placing its
/// order, keeping its response, abandoning the record). A request that was taken over no
/// longer holds the record, and its writes change nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct IdempotencyToken(pub i64);

impl IdempotencyToken {
    /// A `IdempotencyToken` of its value.
    pub fn new(value: i64) -> Self {
        Self(value)
    }
}

impl IdempotencyToken {
    /// A fresh random token (64 random bits: two requests never draw the same one in
    /// practice).
    pub fn random() -> Self {
        Self(rand::random())
    }
}

/// A request's claim on an idempotency key: the key's scope and the request's own
/// [`IdempotencyToken`] (a request draws a fresh one: `IdempotencyClaim::new(scope,
/// IdempotencyToken::random())`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct IdempotencyClaim {
    /// The key.
    pub scope: IdempotencyScope,
    /// The request's token.
    pub token: IdempotencyToken,
}

impl IdempotencyClaim {
    /// An `IdempotencyClaim` of its fields, in their order.
    pub fn new(scope: IdempotencyScope, token: IdempotencyToken) -> Self {
        Self { scope, token }
    }
}
