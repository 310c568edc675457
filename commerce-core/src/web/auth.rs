//! Turning an `Authorization` header into a key (the keys' minting and hashing are
//! [`domain::keys`](crate::domain::keys)'s).

use std::cell::RefCell;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use http::{HeaderMap, HeaderName, HeaderValue, header};
use subtle::ConstantTimeEq;

use crate::cache::shared::Shared;
use crate::domain::keys::hash_key;
use crate::error::{ApiError, ErrorCode};
use crate::model::{Account, AccountState, ApiKey, ApiStatus, RateWindow};
use crate::store::{KeyCheck, RateLimitHit};
use crate::web::routes::Endpoint;

/// The bearer token of a request, if its one `Authorization` header is `Bearer <token>` (a
/// repeated header is ambiguous: no token).
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let mut all = headers.get_all(http::header::AUTHORIZATION).iter();
    let (Some(value), None) = (all.next(), all.next()) else {
        return None;
    };
    let value = value.to_str().ok()?;
    let (scheme, token) = value.split_once(' ')?;
    let token = token.trim();
    (scheme.eq_ignore_ascii_case("bearer") && !token.is_empty()).then_some(token)
}

/// Finds the live key of a request and counts the request in the key's rate window `window`
/// ([`AccountStore::authenticate`](crate::store::AccountStore::authenticate)): 401 when the
/// header is missing or the key unknown, revoked or expired (nothing counted then). A key the
/// store did not know is remembered ([`UnknownKeys`](crate::cache::unknown_keys::UnknownKeys)) and refused again without a store query
/// for [`Config::unknown_key_life`](crate::config::Config::unknown_key_life).
pub(crate) async fn authenticate(
    shared: &Shared,
    headers: &HeaderMap,
    now: DateTime<Utc>,
    window: RateWindow,
) -> Result<KeyCheck, ApiError> {
    let unauthenticated = || ApiError::new(ErrorCode::Unauthenticated);
    let token = bearer_token(headers).ok_or_else(unauthenticated)?;
    let hash = hash_key(token);
    if shared.unknown_keys.is_unknown(&hash, now) {
        return Err(unauthenticated());
    }
    let Some(check) = shared
        .store()
        .authenticate(&hash, now, window)
        .await
        .map_err(|e| ApiError::from_store(e, "authenticate"))?
    else {
        shared.unknown_keys.remember(hash, now);
        return Err(unauthenticated());
    };
    // The store found the key by its hash; compare the full hash again in constant time so
    // that no store index behaviour decides authentication on its own.
    if !bool::from(check.key.hash.ct_eq(&hash)) || !check.key.is_live(now) || check.hit.is_none() {
        return Err(unauthenticated());
    }
    Ok(check)
}

#[cfg(test)]
mod tests {
    use super::*;
    use http::HeaderValue;

    #[test]
    fn only_bearer_headers_carry_a_token() {
        let mut h = HeaderMap::new();
        assert_eq!(bearer_token(&h), None);
        h.insert("authorization", HeaderValue::from_static("Bearer sk_x"));
        assert_eq!(bearer_token(&h), Some("sk_x"));
        h.insert("authorization", HeaderValue::from_static("Basic abc"));
        assert_eq!(bearer_token(&h), None);
        h.insert("authorization", HeaderValue::from_static("Bearer "));
        assert_eq!(bearer_token(&h), None);
    }
}

/// Who is calling, once the key passed every check.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Caller {
    /// The key used, shared with the store's answer (no copy per request).
    pub key: Arc<ApiKey>,
    /// Its account, shared the same way.
    pub account: Arc<Account>,
}

impl Caller {
    /// A `Caller` of its fields, in their order.
    pub fn new(key: impl Into<Arc<ApiKey>>, account: impl Into<Arc<Account>>) -> Self {
        Self {
            key: key.into(),
            account: account.into(),
        }
    }
}

/// `X-RateLimit-Limit`: the key's requests per minute.
const RATE_LIMIT: HeaderName = HeaderName::from_static("x-ratelimit-limit");
/// `X-RateLimit-Remaining`: requests left in the current minute.
const RATE_REMAINING: HeaderName = HeaderName::from_static("x-ratelimit-remaining");

/// What the key's rate window allows after the request was counted.
pub(crate) struct RateAllowance {
    /// The key's per-minute limit.
    pub(crate) limit: u32,
    /// Requests left in this window.
    pub(crate) remaining: u32,
}

impl RateAllowance {
    /// `response` with the window's `X-RateLimit-Limit` and `X-RateLimit-Remaining`.
    pub(crate) fn stamp(
        &self,
        mut response: http::Response<bytes::Bytes>,
    ) -> http::Response<bytes::Bytes> {
        let headers = response.headers_mut();
        headers.insert(RATE_LIMIT, limit_value(self.limit));
        headers.insert(RATE_REMAINING, HeaderValue::from(self.remaining));
        response
    }
}

/// `X-RateLimit-Limit`'s value for `limit`. A key's limit changes only with its terms, so
/// each thread keeps the last value it made and hands out that one again (a reference count)
/// while the limit is the same, instead of formatting and allocating one per answer.
fn limit_value(limit: u32) -> HeaderValue {
    thread_local! {
        static LAST: RefCell<Option<(u32, HeaderValue)>> = const { RefCell::new(None) };
    }
    LAST.with_borrow_mut(|last| match last {
        Some((kept, value)) if *kept == limit => value.clone(),
        _ => {
            let value = HeaderValue::from(limit);
            *last = Some((limit, value.clone()));
            value
        }
    })
}

/// What the rate window allows after the request was counted; 429 when it was refused.
pub(crate) fn rate_allowance(
    check: &KeyCheck,
    now: DateTime<Utc>,
    window: RateWindow,
) -> Result<RateAllowance, ApiError> {
    let key = &check.key;
    let hit = check.hit.unwrap_or(RateLimitHit {
        allowed: false,
        used: key.rate_limit,
    });
    if hit.allowed {
        return Ok(RateAllowance {
            limit: key.rate_limit,
            remaining: key.rate_limit.saturating_sub(hit.used),
        });
    }
    let retry_after = window.seconds_left(now);
    Err(ApiError::new(ErrorCode::RateLimited)
        .with_extra("retry_after", retry_after)
        .with_header(header::RETRY_AFTER, HeaderValue::from(retry_after))
        .with_header(RATE_LIMIT, limit_value(key.rate_limit))
        .with_header(RATE_REMAINING, HeaderValue::from(0)))
}

/// Account state, API status, side and ability, in that order (docs/authentication.md).
pub(crate) fn authorize(
    key: Arc<ApiKey>,
    account: Option<Arc<Account>>,
    endpoint: Endpoint,
) -> Result<Caller, ApiError> {
    let account = account.ok_or_else(|| ApiError::new(ErrorCode::AccountInactive))?;
    if account.state != AccountState::Active {
        return Err(ApiError::new(ErrorCode::AccountInactive));
    }
    if account.api_status != ApiStatus::Approved {
        return Err(ApiError::new(ErrorCode::ApiNotEnabled)
            .with_extra("api_status", account.api_status.as_str()));
    }
    if !endpoint.sides().serve(account.side) {
        return Err(ApiError::new(ErrorCode::WrongSide));
    }
    if !endpoint
        .abilities()
        .iter()
        .all(|ability| key.abilities.contains(ability))
    {
        return Err(ApiError::new(ErrorCode::ForbiddenAbility));
    }
    Ok(Caller { key, account })
}
