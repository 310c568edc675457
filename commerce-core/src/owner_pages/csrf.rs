//! CSRF protection of the pages' forms: a signed double submit. A random value lives in a
//! cookie of the pages' path (`HttpOnly`, `SameSite=Strict`); each form carries
//! HMAC-SHA256(secret, account id and that value), which another site can neither read nor
//! compute. A POST is accepted only when its token is the one of its own cookie and of the
//! logged-in account, compared in constant time.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use hmac::{Hmac, Mac};
use http::request::Parts;
use sha2::Sha256;

/// The cookie holding the random value the tokens are bound to.
pub const CSRF_COOKIE: &str = "commerce_csrf";

/// The form field of the token.
pub(crate) const FIELD: &str = "csrf";

/// A token for a page, and the cookie to set when the request had none.
pub(crate) struct Token {
    /// The form field's value.
    pub(crate) value: String,
    /// The cookie's new value, when the request did not carry one.
    pub(crate) new_cookie: Option<String>,
}

/// The value of `name` in the request's `Cookie` headers.
pub(crate) fn cookie<'a>(parts: &'a Parts, name: &str) -> Option<&'a str> {
    parts
        .headers
        .get_all(http::header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(key, _)| *key == name)
        .map(|(_, value)| value)
}

/// The request's cookie value, when it is well formed (32 random bytes, base64url).
fn nonce(parts: &Parts) -> Option<&str> {
    cookie(parts, CSRF_COOKIE).filter(|v| {
        URL_SAFE_NO_PAD
            .decode(v)
            .is_ok_and(|bytes| bytes.len() == 32)
    })
}

fn mac(secret: &[u8; 32], account: i64, nonce: &str) -> Hmac<Sha256> {
    let mut mac = Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length");
    mac.update(b"commerce owner pages csrf\0");
    mac.update(&account.to_be_bytes());
    mac.update(nonce.as_bytes());
    mac
}

impl Token {
    /// The token of the request's cookie (a new cookie value when it has none).
    pub(crate) fn for_request(secret: &[u8; 32], parts: &Parts, account: i64) -> Self {
        let (nonce, new_cookie) = match nonce(parts) {
            Some(nonce) => (nonce.to_owned(), None),
            None => {
                let fresh = URL_SAFE_NO_PAD.encode(rand::random::<[u8; 32]>());
                (fresh.clone(), Some(fresh))
            }
        };
        let value = URL_SAFE_NO_PAD.encode(mac(secret, account, &nonce).finalize().into_bytes());
        Self { value, new_cookie }
    }
}

/// Whether `sent` is the token of the request's cookie and `account` (constant time).
pub(crate) fn verify(secret: &[u8; 32], parts: &Parts, account: i64, sent: Option<&str>) -> bool {
    let (Some(nonce), Some(sent)) = (nonce(parts), sent) else {
        return false;
    };
    let Ok(sent) = URL_SAFE_NO_PAD.decode(sent) else {
        return false;
    };
    mac(secret, account, nonce).verify_slice(&sent).is_ok()
}

/// The `Set-Cookie` value of a new CSRF cookie of `pages`.
pub(crate) fn set_cookie(pages: &super::OwnerPages, value: &str) -> String {
    pages.set_cookie(CSRF_COOKIE, value, "SameSite=Strict")
}
