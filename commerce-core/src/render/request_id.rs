//! Request ids (docs/errors.md): every answer carries `Request-Id`, the client's own when it
//! sent a valid one, else `req_` and 24 characters from `[a-z0-9]`; an error body repeats it as
//! `error.request_id`, and the request's `commerce.request` span records it.

use bytes::Bytes;
use http::{HeaderMap, HeaderName, HeaderValue, Response};

use crate::limits::MAX_REQUEST_ID;

/// The request and response header.
pub(crate) const HEADER: HeaderName = HeaderName::from_static("request-id");

/// What a generated id starts with.
const PREFIX: &str = "req_";

/// The id of one request: its header value, which is also its text (printable ASCII).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct RequestId {
    value: HeaderValue,
}

impl RequestId {
    /// The client's `Request-Id` when it sent exactly one of 1 to [`MAX_REQUEST_ID`] printable
    /// ASCII characters (surrounding spaces are not part of it), else a new id.
    pub(crate) fn of(headers: &HeaderMap) -> Self {
        Self::from_client(headers).unwrap_or_else(Self::generate)
    }

    fn from_client(headers: &HeaderMap) -> Option<Self> {
        let mut all = headers.get_all(&HEADER).iter();
        let (Some(value), None) = (all.next(), all.next()) else {
            return None;
        };
        let text = value.to_str().ok()?;
        let trimmed = text.trim();
        let printable = trimmed.bytes().all(|b| b.is_ascii_graphic() || b == b' ');
        if trimmed.is_empty() || trimmed.len() > MAX_REQUEST_ID || !printable {
            return None;
        }
        let value = if trimmed.len() == text.len() {
            // The client's own value (a reference count, no copy).
            value.clone()
        } else {
            HeaderValue::from_str(trimmed).ok()?
        };
        Some(Self { value })
    }

    /// A new id: `req_` and 24 characters from `[a-z0-9]`, in one allocation.
    pub(crate) fn generate() -> Self {
        let mut text = Vec::with_capacity(PREFIX.len() + crate::model::RANDOM_ID_LEN);
        text.extend_from_slice(PREFIX.as_bytes());
        crate::model::push_random_id(&mut text);
        let value = HeaderValue::from_maybe_shared(Bytes::from(text)).expect("letters and digits");
        Self { value }
    }

    /// The id.
    pub(crate) fn as_str(&self) -> &str {
        // Only printable ASCII gets in (`from_client`, `generate`).
        self.value.to_str().unwrap_or_default()
    }

    /// `response` with this id's `Request-Id` header (an error's body already has it:
    /// [`ApiError::render`](crate::ApiError) takes the id).
    pub(crate) fn stamp(&self, mut response: Response<Bytes>) -> Response<Bytes> {
        response.headers_mut().insert(HEADER, self.value.clone());
        response
    }

    /// [`stamp`](Self::stamp) for the request's last use of its id: the header takes the
    /// id's value itself (no copy of it, which would allocate).
    pub(crate) fn stamp_last(self, mut response: Response<Bytes>) -> Response<Bytes> {
        response.headers_mut().insert(HEADER, self.value);
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn with(values: &[&str]) -> HeaderMap {
        let mut headers = HeaderMap::new();
        for value in values {
            headers.append(&HEADER, HeaderValue::from_str(value).unwrap());
        }
        headers
    }

    fn generated(id: &RequestId) -> bool {
        let tail = id.as_str().strip_prefix("req_").unwrap_or_default();
        tail.len() == 24
            && tail
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
    }

    #[test]
    fn a_valid_client_id_is_echoed_and_anything_else_replaced() {
        assert_eq!(RequestId::of(&with(&["abc-123"])).as_str(), "abc-123");
        assert_eq!(RequestId::of(&with(&[" a b "])).as_str(), "a b");
        let longest = "x".repeat(MAX_REQUEST_ID);
        assert_eq!(RequestId::of(&with(&[&longest])).as_str(), longest);
        for refused in [
            &[][..],
            &[""],
            &["   "],
            &[&"x".repeat(MAX_REQUEST_ID + 1)],
            &["one", "two"],
        ] {
            let id = RequestId::of(&with(refused));
            assert!(generated(&id), "{refused:?} gave {}", id.as_str());
        }
        let mut headers = HeaderMap::new();
        headers.insert(&HEADER, HeaderValue::from_bytes(b"caf\xc3\xa9").unwrap());
        assert!(generated(&RequestId::of(&headers)));
        assert_ne!(RequestId::generate(), RequestId::generate());
    }
}
