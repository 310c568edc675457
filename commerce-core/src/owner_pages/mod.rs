//! The owner's pages: server-rendered HTML in Egyptian Arabic, right to left, that an
//! application mounts behind its own login (the onboarding of docs/onboarding.md):
//! API access (status, request activation, suspend, cancel), keys (list with the minute each
//! was last used, create: the key shown once, revoke), and the wallet (figures as
//! `GET /wallet`, a withdrawal request inside the window, the list of withdrawals).
//!
//! Framework-neutral like the engine: [`OwnerPages::serve`] turns an
//! `http::Request<Bytes>` (its path relative to where the pages are mounted) into an
//! `http::Response<Bytes>`; `commerce-axum` and `commerce-warp` mount it in a line. The host
//! says who is logged in through [`OwnerLogin`], from its own session (a cookie, a header its
//! middleware set, a request extension); a visitor it does not know is sent to its login page
//! ([`OwnerLogin::login_url`]) or refused with 401.
//!
//! Every rule is the [`Owner`](crate::owner::Owner)'s, so the platform's and the API's: the same
//! refusals and the same Arabic messages, shown next to the field they are about. Every POST
//! carries a CSRF token (signed double submit: an HMAC-SHA256 of a random cookie value and the
//! account id under a secret of these pages, compared in constant time), so another site
//! cannot submit the forms. No JavaScript; every value is escaped by the templates (maud);
//! pages send `Content-Security-Policy: default-src 'none'` (inline style only) and are not
//! framed. The page that shows a new key is `Cache-Control: no-store`, and the key is on it
//! once: the list shows names only.
//!
//! | method and path (under the mount) | page |
//! |---|---|
//! | `GET /` | API access: status, request activation, suspend, cancel |
//! | `POST /access/request`, `/access/suspend`, `/access/cancel` | the move, then `303` to `/` |
//! | `GET /keys` | keys, newest first, [`KEYS_PER_PAGE`] a page (`?page=2`), and the form of a new key |
//! | `POST /keys` | creates it: `200` with the key once (`no-store`), `422` with the errors |
//! | `POST /keys/{id}/revoke` | revokes it, then `303` to `/keys` (another account's: `404`) |
//! | `GET /wallet` | figures, the withdrawal form while the window is open, withdrawals |
//! | `POST /wallet/withdrawals` | requests one: `303` to `/wallet`, or `422`/`409` with the errors |

use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use http::request::Parts;
use http::{Request, Response, StatusCode};

use crate::Engine;
use crate::model::AccountId;

pub(crate) mod csrf;
pub(crate) mod forms;
pub(crate) mod handlers;
pub(crate) mod views;

pub use csrf::CSRF_COOKIE;

/// Largest form body the pages read, in bytes.
pub const MAX_FORM_BYTES: usize = 16 * 1024;

/// Keys on one page of the keys page (`GET /keys?page=2`), newest first.
pub const KEYS_PER_PAGE: u32 = 20;

/// How the host tells the pages who is logged in: implemented by the embedding application
/// over its own session (the pages never see a password or an API key).
///
/// ```
/// # use commerce_core as commerce;
/// use commerce::model::AccountId;
/// use commerce::owner_pages::OwnerLogin;
///
/// /// The host's session middleware put the logged-in account in the request's extensions.
/// struct Session;
///
/// #[async_trait::async_trait]
/// impl OwnerLogin for Session {
///     async fn logged_in(&self, request: &http::request::Parts) -> Option<AccountId> {
///         request.extensions.get::<AccountId>().copied()
///     }
///     fn login_url(&self) -> Option<String> {
///         Some("/login".into())
///     }
/// }
/// ```
#[async_trait]
pub trait OwnerLogin: Send + Sync + 'static {
    /// The account whose owner is logged in, from the request's head; `None` refuses.
    async fn logged_in(&self, request: &Parts) -> Option<AccountId>;

    /// Where a visitor who is not logged in is sent (`303`); `None` answers `401`.
    fn login_url(&self) -> Option<String> {
        None
    }

    /// Pages the login itself serves under the mount, before the owner's (the sandbox's demo
    /// login); `None` for every path it does not serve (the default).
    async fn serve(
        &self,
        request: &Parts,
        body: &Bytes,
        pages: &OwnerPages,
    ) -> Option<Response<Bytes>> {
        let _ = (request, body, pages);
        None
    }
}

/// The owner's pages over an engine, with the host's [`OwnerLogin`]. Cheap to clone.
#[derive(Clone)]
pub struct OwnerPages {
    engine: Engine,
    login: Arc<dyn OwnerLogin>,
    base: Arc<str>,
    api_url: Arc<str>,
    secret: [u8; 32],
    secure_cookies: bool,
}

impl std::fmt::Debug for OwnerPages {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OwnerPages")
            .field("base", &self.base)
            .field("api_url", &self.api_url)
            .field("secure_cookies", &self.secure_cookies)
            .finish_non_exhaustive()
    }
}

impl OwnerPages {
    /// The pages over `engine`, mounted at `/account`, with a random CSRF secret (tokens of
    /// pages served before a restart are refused after it: set one with
    /// [`with_csrf_secret`](Self::with_csrf_secret) when several instances serve the pages).
    pub fn new(engine: Engine, login: impl OwnerLogin) -> Self {
        Self {
            engine,
            login: Arc::new(login),
            base: "/account".into(),
            api_url: "/api/v1".into(),
            secret: rand::random(),
            secure_cookies: false,
        }
    }

    /// The path the host mounts the pages at (default `/account`), for the links and forms
    /// of the pages and the cookies' path.
    pub fn mounted_at(mut self, base: &str) -> Self {
        self.base = base.trim_end_matches('/').into();
        self
    }

    /// The API's address as the integrator calls it (default `/api/v1`), shown with a new key.
    pub fn with_api_url(mut self, url: &str) -> Self {
        self.api_url = url.trim_end_matches('/').into();
        self
    }

    /// The secret of the CSRF tokens (every instance serving the pages must share it).
    pub fn with_csrf_secret(mut self, secret: [u8; 32]) -> Self {
        self.secret = secret;
        self
    }

    /// Whether the pages are served over `https` (default `false`): then every cookie they
    /// set (the CSRF cookie, the sandbox's demo login) is `Secure`, so a browser never sends
    /// it over plain `http`. Turn it on wherever the pages are served over `https`, also
    /// behind a proxy that ends TLS.
    pub fn with_secure_cookies(mut self, secure: bool) -> Self {
        self.secure_cookies = secure;
        self
    }

    /// The `Set-Cookie` value of `name=value` under the pages' path: `HttpOnly`, with
    /// `attributes` (`SameSite=...`, `Max-Age=...`), and `Secure` when the pages say so.
    pub(crate) fn set_cookie(&self, name: &str, value: &str, attributes: &str) -> String {
        let path = if self.base.is_empty() {
            "/"
        } else {
            &self.base
        };
        let secure = if self.secure_cookies { "; Secure" } else { "" };
        format!("{name}={value}; Path={path}; HttpOnly; {attributes}{secure}")
    }

    /// The mount path (`/account`).
    pub fn base(&self) -> &str {
        &self.base
    }

    /// The engine.
    pub fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Serves one request whose path is relative to the mount (`/`, `/keys`, ...; an adapter
    /// that nests the pages strips the mount). Never fails: errors are pages.
    pub async fn serve(&self, request: Request<Bytes>) -> Response<Bytes> {
        let (parts, body) = request.into_parts();
        if let Some(response) = self.login.serve(&parts, &body, self).await {
            return response;
        }
        let Some(account) = self.login.logged_in(&parts).await else {
            return match self.login.login_url() {
                Some(url) => handlers::redirect(&url),
                None => self.message_page(
                    StatusCode::UNAUTHORIZED,
                    crate::render::messages::NOT_LOGGED_IN,
                ),
            };
        };
        let context = handlers::Context::new(self, account, &parts);
        context
            .route(&parts.method, parts.uri.path(), &parts, body)
            .await
    }

    /// A page with one message and a link back (`404`, `401`, `403`, ...).
    pub(crate) fn message_page(&self, status: StatusCode, message: &str) -> Response<Bytes> {
        let body = views::message_page(self.base(), message);
        html(status, body)
    }

    /// A CSRF token for `account` (0 before login) and the cookie value it is bound to, and
    /// whether the cookie must be set.
    pub(crate) fn csrf_for(&self, parts: &Parts, account: i64) -> csrf::Token {
        csrf::Token::for_request(&self.secret, parts, account)
    }

    /// Whether a form's token is the one of the request's cookie and `account`.
    pub(crate) fn csrf_ok(&self, parts: &Parts, account: i64, sent: Option<&str>) -> bool {
        csrf::verify(&self.secret, parts, account, sent)
    }

    pub(crate) fn api_url(&self) -> &str {
        &self.api_url
    }
}

/// An HTML response with the pages' headers ([`crate::web::html::page`]).
pub(crate) fn html(status: StatusCode, body: String) -> Response<Bytes> {
    crate::web::html::page(status, body)
}
