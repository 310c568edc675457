//! Standard Webhooks 1.0 signatures: the sender's [`sign`], the receiver's [`verify`].

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use chrono::{DateTime, TimeDelta, Utc};
use hmac::{Hmac, Mac};
use http::HeaderMap;
use rand::RngCore;
use sha2::Sha256;
use subtle::{Choice, ConstantTimeEq};

/// The header carrying the event id (the same on every attempt: receivers dedupe on it).
pub const WEBHOOK_ID_HEADER: &str = "webhook-id";
/// The header carrying the attempt's Unix time in seconds.
pub const TIMESTAMP_HEADER: &str = "webhook-timestamp";
/// The header carrying the signatures (`v1,<base64>`, space-separated).
pub const SIGNATURE_HEADER: &str = "webhook-signature";

const SECRET_PREFIX: &str = "whsec_";

/// How many space-separated signatures of a `webhook-signature` header [`verify`] looks at;
/// the rest are ignored. A sender signs with at most two secrets (during the day after a
/// rotation); the cap keeps a request with thousands of candidates as cheap as one.
pub const MAX_SIGNATURES: usize = 8;

#[cfg(test)]
thread_local! {
    /// HMACs computed on this thread (tests count them).
    static MACS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// A new signing secret: `whsec_` and the base64 of 32 random bytes.
pub fn new_secret() -> String {
    let mut bytes = [0u8; 32];
    rand::rng().fill_bytes(&mut bytes);
    format!("{SECRET_PREFIX}{}", BASE64.encode(bytes))
}

/// The key bytes of a secret: the base64 after `whsec_` (a secret that is not base64 is used
/// as its own bytes, as the Standard Webhooks libraries do for raw keys).
fn key_bytes(secret: &str) -> Vec<u8> {
    let encoded = secret.strip_prefix(SECRET_PREFIX).unwrap_or(secret);
    BASE64
        .decode(encoded)
        .unwrap_or_else(|_| encoded.as_bytes().to_vec())
}

fn mac(secret: &str, id: &str, timestamp: i64, body: &[u8]) -> Hmac<Sha256> {
    #[cfg(test)]
    MACS.with(|count| count.set(count.get() + 1));
    let mut mac =
        Hmac::<Sha256>::new_from_slice(&key_bytes(secret)).expect("HMAC takes keys of any length");
    mac.update(id.as_bytes());
    mac.update(b".");
    mac.update(timestamp.to_string().as_bytes());
    mac.update(b".");
    mac.update(body);
    mac
}

/// The `webhook-signature` value for one attempt: `v1,<base64 of HMAC-SHA256 over
/// "{id}.{timestamp}.{body}">` for each secret, space-separated (two during the day after a
/// rotation).
pub fn sign(secrets: &[&str], id: &str, timestamp: i64, body: &[u8]) -> String {
    secrets
        .iter()
        .map(|secret| {
            let tag = mac(secret, id, timestamp, body).finalize().into_bytes();
            format!("v1,{}", BASE64.encode(tag))
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Why [`verify`] refused a request.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VerifyError {
    /// A `webhook-*` header is missing or not text.
    #[error("missing header {0}")]
    MissingHeader(&'static str),
    /// `webhook-timestamp` is not an integer.
    #[error("webhook-timestamp is not a Unix time")]
    BadTimestamp,
    /// The timestamp is further from now than the tolerance (a replay, or a wrong clock).
    #[error("webhook-timestamp is outside the tolerance")]
    TooOld,
    /// No signature matches.
    #[error("no signature matches")]
    NoMatch,
}

/// Checks a webhook request as a receiver: the `webhook-id`, `webhook-timestamp` and
/// `webhook-signature` headers, the raw `body`, `now` and how far the timestamp may be from
/// it (Standard Webhooks libraries use 5 minutes). `Ok` when the timestamp is recent and one
/// of the first [`MAX_SIGNATURES`] signatures is the HMAC of `secret`. The HMAC is computed
/// once, and each signature compared with it in constant time; any timestamp, however far,
/// is refused without overflow.
///
/// ```
/// # use commerce_core as commerce;
/// use commerce::webhooks::{new_secret, sign, verify};
///
/// let secret = new_secret();
/// let now = chrono::Utc::now();
/// let body = br#"{"type":"ping"}"#;
/// let mut headers = http::HeaderMap::new();
/// headers.insert("webhook-id", "evt_abc".parse().unwrap());
/// headers.insert("webhook-timestamp", now.timestamp().into());
/// let signature = sign(&[&secret], "evt_abc", now.timestamp(), body);
/// headers.insert("webhook-signature", signature.parse().unwrap());
/// assert!(verify(&secret, &headers, body, now, chrono::TimeDelta::minutes(5)).is_ok());
/// assert!(verify(&new_secret(), &headers, body, now, chrono::TimeDelta::minutes(5)).is_err());
/// ```
pub fn verify(
    secret: &str,
    headers: &HeaderMap,
    body: &[u8],
    now: DateTime<Utc>,
    tolerance: TimeDelta,
) -> Result<(), VerifyError> {
    let header = |name: &'static str| {
        headers
            .get(name)
            .and_then(|v| v.to_str().ok())
            .ok_or(VerifyError::MissingHeader(name))
    };
    let id = header(WEBHOOK_ID_HEADER)?;
    let timestamp: i64 = header(TIMESTAMP_HEADER)?
        .trim()
        .parse()
        .map_err(|_| VerifyError::BadTimestamp)?;
    let signatures = header(SIGNATURE_HEADER)?;
    let skew = now
        .timestamp()
        .checked_sub(timestamp)
        .and_then(i64::checked_abs);
    if skew.is_none_or(|skew| skew > tolerance.num_seconds()) {
        return Err(VerifyError::TooOld);
    }
    let expected = mac(secret, id, timestamp, body).finalize().into_bytes();
    let matches = signatures
        .split_ascii_whitespace()
        .take(MAX_SIGNATURES)
        .filter_map(|candidate| candidate.strip_prefix("v1,"))
        .filter_map(|encoded| BASE64.decode(encoded).ok())
        .fold(Choice::from(0), |found, tag| {
            found | tag.as_slice().ct_eq(expected.as_slice())
        });
    if bool::from(matches) {
        Ok(())
    } else {
        Err(VerifyError::NoMatch)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(id: &str, timestamp: i64, signature: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(WEBHOOK_ID_HEADER, id.parse().unwrap());
        h.insert(TIMESTAMP_HEADER, timestamp.into());
        h.insert(SIGNATURE_HEADER, signature.parse().unwrap());
        h
    }

    /// The example of the Standard Webhooks specification (its test vector).
    #[test]
    fn matches_the_standard_webhooks_test_vector() {
        let secret = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
        let body = br#"{"test": 2432232314}"#;
        let signature = sign(&[secret], "msg_p5jXN8AQM9LWM0D4loKWxJek", 1614265330, body);
        assert_eq!(signature, "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=");
    }

    #[test]
    fn verify_refuses_what_it_must() {
        let secret = new_secret();
        assert!(secret.starts_with("whsec_") && key_bytes(&secret).len() == 32);
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let t = now.timestamp();
        let body = b"{}";
        let five = TimeDelta::minutes(5);
        let good = sign(&[&secret], "evt_1", t, body);
        assert_eq!(
            verify(&secret, &headers("evt_1", t, &good), body, now, five),
            Ok(())
        );
        assert_eq!(
            verify(&secret, &headers("evt_2", t, &good), body, now, five),
            Err(VerifyError::NoMatch)
        );
        assert_eq!(
            verify(&secret, &headers("evt_1", t, &good), b"{ }", now, five),
            Err(VerifyError::NoMatch)
        );
        assert_eq!(
            verify(
                &secret,
                &headers("evt_1", t - 301, &sign(&[&secret], "evt_1", t - 301, body)),
                body,
                now,
                five
            ),
            Err(VerifyError::TooOld)
        );
        assert_eq!(
            verify(&secret, &HeaderMap::new(), body, now, five),
            Err(VerifyError::MissingHeader(WEBHOOK_ID_HEADER))
        );
        // After a rotation both secrets sign: a receiver with either accepts.
        let old = new_secret();
        let both = sign(&[&secret, &old], "evt_1", t, body);
        assert_eq!(both.split(' ').count(), 2);
        for s in [&secret, &old] {
            assert_eq!(
                verify(s, &headers("evt_1", t, &both), body, now, five),
                Ok(())
            );
        }
    }

    /// A timestamp at either end of `i64` is too old, not an overflow (a panic in debug
    /// builds before).
    #[test]
    fn extreme_timestamps_are_refused_without_overflow() {
        let secret = new_secret();
        let body = b"{}";
        let five = TimeDelta::minutes(5);
        for (now, t) in [
            (
                DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
                i64::MIN,
            ),
            (
                DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
                i64::MAX,
            ),
            (
                DateTime::from_timestamp(-1_800_000_000, 0).unwrap(),
                i64::MAX,
            ),
            (DateTime::<Utc>::MIN_UTC, i64::MAX),
            (DateTime::<Utc>::MAX_UTC, i64::MIN),
        ] {
            let signature = sign(&[&secret], "evt_1", t, body);
            assert_eq!(
                verify(&secret, &headers("evt_1", t, &signature), body, now, five),
                Err(VerifyError::TooOld),
                "{t} at {now}"
            );
        }
    }

    /// A header of 40,000 candidates costs one HMAC, and only the first [`MAX_SIGNATURES`]
    /// are looked at: a valid signature after them does not count.
    #[test]
    fn one_hmac_and_at_most_eight_candidates() {
        let secret = new_secret();
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        let t = now.timestamp();
        let body = vec![b'x'; 1024 * 1024];
        let five = TimeDelta::minutes(5);
        let good = sign(&[&secret], "evt_1", t, &body);
        let wrong = sign(&[&new_secret()], "evt_1", t, &body);
        let macs = || MACS.with(std::cell::Cell::get);

        let many = vec![wrong.as_str(); 40_000].join(" ");
        let before = macs();
        assert_eq!(
            verify(&secret, &headers("evt_1", t, &many), &body, now, five),
            Err(VerifyError::NoMatch)
        );
        assert_eq!(macs() - before, 1, "one HMAC for 40,000 candidates");

        for (position, expected) in [
            (1, Ok(())),
            (MAX_SIGNATURES, Ok(())),
            (MAX_SIGNATURES + 1, Err(VerifyError::NoMatch)),
            (40_000, Err(VerifyError::NoMatch)),
        ] {
            let mut candidates = vec![wrong.as_str(); position - 1];
            candidates.push(&good);
            let header = candidates.join(" ");
            assert_eq!(
                verify(&secret, &headers("evt_1", t, &header), &body, now, five),
                expected,
                "the valid signature at position {position}"
            );
        }
        // Junk and other versions count as candidates too; double spaces do not.
        let mixed = format!("v2,abc  v1,!!! {good}");
        assert_eq!(
            verify(&secret, &headers("evt_1", t, &mixed), &body, now, five),
            Ok(())
        );
    }
}
