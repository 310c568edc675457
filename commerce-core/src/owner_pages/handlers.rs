//! The pages' routes: each reads its form, calls the [`Owner`], and renders a page.

use bytes::Bytes;
use http::request::Parts;
use http::{Method, Response, StatusCode, header};

use super::csrf::{self, Token};
use super::forms::{Errors, Form, amount, expiry_of_day};
use super::views::{self, KeysView, WalletView};
use super::{KEYS_PER_PAGE, MAX_FORM_BYTES, OwnerPages, html};
use crate::domain::keys::KeySpec;
use crate::model::{Ability, AccountId, KeyId, PageRequest};
use crate::operator::OperatorError;
use crate::owner::{Owner, WithdrawalForm};
use crate::render::messages;

/// A `303 See Other` to `location`.
pub(crate) fn redirect(location: &str) -> Response<Bytes> {
    let mut response = Response::new(Bytes::new());
    *response.status_mut() = StatusCode::SEE_OTHER;
    if let Ok(value) = http::HeaderValue::from_str(location) {
        response.headers_mut().insert(header::LOCATION, value);
    }
    response
}

/// One request of a logged-in owner.
pub(crate) struct Context<'a> {
    pages: &'a OwnerPages,
    owner: Owner,
    token: Token,
}

/// What a path names.
enum Route {
    Access,
    AccessMove(&'static str),
    Keys,
    Revoke(KeyId),
    Wallet,
    Withdrawals,
}

/// The `page` of a query (`page=2`), from 1; the first page when absent, `None` when given
/// but not a whole number from 1 (a 400 page, as the API refuses such a `page`).
fn page_of(query: &str) -> Option<u32> {
    match form_urlencoded::parse(query.as_bytes()).find(|(name, _)| name == "page") {
        None => Some(1),
        Some((_, value)) => value.parse::<u32>().ok().filter(|page| *page > 0),
    }
}

fn route_of(path: &str) -> Option<Route> {
    let path = path.trim_end_matches('/');
    Some(match path {
        "" => Route::Access,
        "/access/request" => Route::AccessMove("request"),
        "/access/suspend" => Route::AccessMove("suspend"),
        "/access/cancel" => Route::AccessMove("cancel"),
        "/keys" => Route::Keys,
        "/wallet" => Route::Wallet,
        "/wallet/withdrawals" => Route::Withdrawals,
        other => {
            let id = other.strip_prefix("/keys/")?.strip_suffix("/revoke")?;
            let id: i64 = id.parse().ok().filter(|id| *id > 0)?;
            Route::Revoke(KeyId::new(id))
        }
    })
}

impl<'a> Context<'a> {
    pub(crate) fn new(pages: &'a OwnerPages, account: AccountId, parts: &Parts) -> Self {
        Self {
            pages,
            owner: pages.engine().owner(account),
            token: pages.csrf_for(parts, account.get()),
        }
    }

    fn base(&self) -> &str {
        self.pages.base()
    }

    /// The page of `method path`.
    pub(crate) async fn route(
        &self,
        method: &Method,
        path: &str,
        parts: &Parts,
        body: Bytes,
    ) -> Response<Bytes> {
        let Some(route) = route_of(path) else {
            return self
                .pages
                .message_page(StatusCode::NOT_FOUND, messages::ROUTE_NOT_FOUND);
        };
        let post = matches!(
            route,
            Route::AccessMove(_) | Route::Revoke(_) | Route::Withdrawals
        );
        let allowed = match (&route, post) {
            (Route::Keys, _) => {
                *method == Method::GET || *method == Method::HEAD || *method == Method::POST
            }
            (_, true) => *method == Method::POST,
            (_, false) => *method == Method::GET || *method == Method::HEAD,
        };
        if !allowed {
            let mut response = self
                .pages
                .message_page(StatusCode::METHOD_NOT_ALLOWED, messages::METHOD_NOT_ALLOWED);
            let allow = match (&route, post) {
                (Route::Keys, _) => "GET, HEAD, POST",
                (_, true) => "POST",
                _ => "GET, HEAD",
            };
            response
                .headers_mut()
                .insert(header::ALLOW, http::HeaderValue::from_static(allow));
            return response;
        }
        let query = parts.uri.query().unwrap_or_default();
        let done = query.split('&').any(|pair| pair == "done=1");
        let response = if *method == Method::POST {
            if body.len() > MAX_FORM_BYTES {
                return self
                    .pages
                    .message_page(StatusCode::PAYLOAD_TOO_LARGE, messages::PAYLOAD_TOO_LARGE);
            }
            let form = Form::parse(&body);
            if !self
                .pages
                .csrf_ok(parts, self.owner.account_id().get(), form.get(csrf::FIELD))
            {
                return self
                    .pages
                    .message_page(StatusCode::FORBIDDEN, messages::FORM_EXPIRED);
            }
            match route {
                Route::AccessMove(step) => self.move_access(step).await,
                Route::Keys => self.create_key(&form).await,
                Route::Revoke(id) => self.revoke(id).await,
                _ => self.request_withdrawal(&form).await,
            }
        } else {
            let none = (&Form::default(), &Errors::default());
            match route {
                Route::Keys => match page_of(query) {
                    Some(page) => {
                        self.keys_page(none.0, none.1, StatusCode::OK, done, page)
                            .await
                    }
                    None => self
                        .pages
                        .message_page(StatusCode::BAD_REQUEST, messages::PAGE_NUMBER),
                },
                Route::Wallet => self.wallet_page(none.0, none.1, StatusCode::OK, done).await,
                _ => self.access_page(none.1, StatusCode::OK, done).await,
            }
        };
        self.with_cookie(response)
    }

    /// Sets the CSRF cookie when the request had none.
    fn with_cookie(&self, mut response: Response<Bytes>) -> Response<Bytes> {
        if let Some(value) = &self.token.new_cookie {
            let cookie = csrf::set_cookie(self.pages, value);
            if let Ok(value) = http::HeaderValue::from_str(&cookie) {
                response.headers_mut().append(header::SET_COOKIE, value);
            }
        }
        response
    }

    /// A page for a refusal that is not about the form.
    fn failure(&self, error: &OperatorError) -> Response<Bytes> {
        match error {
            OperatorError::NotFound => self
                .pages
                .message_page(StatusCode::NOT_FOUND, messages::NOT_FOUND),
            _ => {
                tracing::error!(target: "commerce_core::owner_pages", %error, "owner page failed");
                self.pages
                    .message_page(StatusCode::INTERNAL_SERVER_ERROR, messages::SERVER_ERROR)
            }
        }
    }

    async fn access_page(
        &self,
        errors: &Errors,
        status: StatusCode,
        done: bool,
    ) -> Response<Bytes> {
        match self.owner.account().await {
            Ok(account) => html(
                status,
                views::access_page(self.base(), &account, &self.token.value, errors, done),
            ),
            Err(error) => self.failure(&error),
        }
    }

    async fn move_access(&self, step: &str) -> Response<Bytes> {
        let result = match step {
            "request" => self.owner.request_api_access().await,
            "suspend" => self.owner.suspend_api_access().await,
            _ => self.owner.cancel_api_access().await,
        };
        match result {
            Ok(_) => redirect(&format!("{}/?done=1", self.base())),
            Err(error) => match Errors::of_error(&error) {
                Some((status, errors)) => self.access_page(&errors, status, false).await,
                None => self.failure(&error),
            },
        }
    }

    async fn keys_page(
        &self,
        form: &Form,
        errors: &Errors,
        status: StatusCode,
        revoked: bool,
        page: u32,
    ) -> Response<Bytes> {
        let request = PageRequest::new(page.max(1), KEYS_PER_PAGE).unwrap_or_default();
        let (account, keys) = match (
            self.owner.account().await,
            self.owner.key_page(request).await,
        ) {
            (Ok(account), Ok(keys)) => (account, keys),
            (Err(error), _) | (_, Err(error)) => return self.failure(&error),
        };
        let view = KeysView {
            account: &account,
            keys: &keys.items,
            page: request,
            total: keys.total,
            now: self.owner.now(),
            token: &self.token.value,
            form,
            errors,
            revoked,
        };
        html(status, views::keys_page(self.base(), &view))
    }

    async fn create_key(&self, form: &Form) -> Response<Bytes> {
        let mut errors = Errors::default();
        let abilities: Vec<Ability> = form
            .all("abilities")
            .into_iter()
            .filter_map(|text| {
                let ability = Ability::parse(text);
                if ability.is_none() {
                    errors.add("abilities", messages::UNKNOWN_VALUE.into());
                }
                ability
            })
            .collect();
        let expiry = match expiry_of_day(form.text("expires_at")) {
            Ok(expiry) => expiry,
            Err(problem) => {
                errors.add("expires_at", messages::problem(problem));
                None
            }
        };
        if !errors.fields.is_empty() {
            return self
                .keys_page(form, &errors, StatusCode::UNPROCESSABLE_ENTITY, false, 1)
                .await;
        }
        let spec = KeySpec::new(form.text("name").to_owned(), abilities, expiry, None);
        match self.owner.create_key(spec).await {
            Ok(created) => {
                let account = match self.owner.account().await {
                    Ok(account) => account,
                    Err(error) => return self.failure(&error),
                };
                let page = views::key_created_page(
                    self.base(),
                    &account,
                    &created.key,
                    &created.plaintext,
                    self.pages.api_url(),
                );
                let mut response = html(StatusCode::OK, page);
                response.headers_mut().insert(
                    header::CACHE_CONTROL,
                    http::HeaderValue::from_static("no-store"),
                );
                response
            }
            Err(error) => match Errors::of_error(&error) {
                Some((status, errors)) => self.keys_page(form, &errors, status, false, 1).await,
                None => self.failure(&error),
            },
        }
    }

    async fn revoke(&self, id: KeyId) -> Response<Bytes> {
        match self.owner.revoke_key(id).await {
            Ok(_) => redirect(&format!("{}/keys?done=1", self.base())),
            Err(error) => self.failure(&error),
        }
    }

    async fn wallet_page(
        &self,
        form: &Form,
        errors: &Errors,
        status: StatusCode,
        done: bool,
    ) -> Response<Bytes> {
        let (account, figures, withdrawals) = match (
            self.owner.account().await,
            self.owner.wallet().await,
            self.owner.withdrawals().await,
        ) {
            (Ok(a), Ok(f), Ok(w)) => (a, f, w),
            (Err(error), _, _) | (_, Err(error), _) | (_, _, Err(error)) => {
                return self.failure(&error);
            }
        };
        let view = WalletView {
            account: &account,
            figures: &figures,
            window: self.owner.withdrawal_window(),
            minimum: self.pages.engine().config().withdrawal_minimum,
            withdrawals: &withdrawals,
            token: &self.token.value,
            form,
            errors,
            done,
        };
        html(status, views::wallet_page(self.base(), &view))
    }

    async fn request_withdrawal(&self, form: &Form) -> Response<Bytes> {
        let amount = match amount(form.text("amount")) {
            Ok(amount) => amount,
            Err(problem) => {
                let errors = Errors::field("amount", problem);
                return self
                    .wallet_page(form, &errors, StatusCode::UNPROCESSABLE_ENTITY, false)
                    .await;
            }
        };
        let request = WithdrawalForm::new(
            amount,
            form.text("wallet_number"),
            form.text("wallet_description"),
        );
        match self.owner.request_withdrawal(request).await {
            Ok(_) => redirect(&format!("{}/wallet?done=1", self.base())),
            Err(error) => match Errors::of_error(&error) {
                Some((status, errors)) => self.wallet_page(form, &errors, status, false).await,
                None => self.failure(&error),
            },
        }
    }
}
