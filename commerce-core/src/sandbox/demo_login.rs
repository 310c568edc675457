//! The sandbox's demo login of the owner pages: a page listing every sandbox account, each
//! with a button that logs in as its owner (a cookie naming the account). Clearly marked as a
//! demo: anyone who reaches the sandbox can be anyone. A platform logs its owners in with its
//! own login instead and tells the pages who it is with an [`OwnerLogin`] of its own.

use async_trait::async_trait;
use bytes::Bytes;
use http::request::Parts;
use http::{Method, Response, StatusCode, header};
use maud::html;

use crate::engine::Engine;
use crate::model::{AccountId, Side};
use crate::owner_pages::csrf::{self, cookie};
use crate::owner_pages::handlers::redirect;
use crate::owner_pages::views::{Nav, csrf_field, layout};
use crate::owner_pages::{OwnerLogin, OwnerPages, html as html_response};
use crate::render::messages::api_status_label;

/// The cookie naming the account logged in through the demo login.
pub const DEMO_ACCOUNT_COOKIE: &str = "commerce_demo_account";

/// The most accounts the demo login lists (the sandbox seeds a handful).
const MAX_LISTED: i64 = 50;

/// The sandbox's [`OwnerLogin`]: the account named by the [`DEMO_ACCOUNT_COOKIE`] cookie,
/// set by the demo login page it serves at `{mount}/login` (and cleared at `{mount}/logout`).
#[derive(Debug, Clone)]
pub struct DemoLogin {
    base: String,
}

impl DemoLogin {
    /// The demo login of pages mounted at `base` (`/account`).
    pub fn new(base: &str) -> Self {
        Self {
            base: base.trim_end_matches('/').to_owned(),
        }
    }
}

/// The owner pages of the sandbox, mounted at `/account` with the [`DemoLogin`]; the key page
/// shows `api_url` (`http://127.0.0.1:8080/api/v1`) in its first test request.
pub fn account_pages(engine: &Engine, api_url: &str) -> OwnerPages {
    OwnerPages::new(engine.clone(), DemoLogin::new("/account"))
        .mounted_at("/account")
        .with_api_url(api_url)
}

fn side_label(side: Side) -> &'static str {
    match side {
        Side::Marketer => "مسوّق",
        Side::Supplier => "مورد",
        Side::Shipping => "شركة شحن",
    }
}

impl DemoLogin {
    async fn login_page(&self, parts: &Parts, pages: &OwnerPages) -> Response<Bytes> {
        let token = pages.csrf_for(parts, 0);
        let store = pages.engine().store();
        let mut accounts = Vec::new();
        for id in 1..=MAX_LISTED {
            match store.account(AccountId::new(id)).await {
                Ok(Some(account)) => accounts.push(account),
                _ => break,
            }
        }
        let body = html! {
            p.demo role="note" {
                "دخول تجريبي (sandbox): أي حد يوصل للسيرفر ده يقدر يدخل بأي حساب. "
                "في منصتك، الدخول بيبقى من نظام تسجيل الدخول بتاعك."
            }
            section {
                h2 { "ادخل كصاحب حساب" }
                table {
                    thead { tr { th { "الحساب" } th { "النوع" } th { "الربط بالـ API" } th {} } }
                    tbody {
                        @for account in &accounts {
                            tr {
                                td data-label="الحساب" { (account.name) }
                                td data-label="النوع" { (side_label(account.side)) }
                                td data-label="الربط بالـ API" { (api_status_label(account.api_status)) }
                                td {
                                    form method="post" action=(format!("{}/login", self.base)) {
                                        (csrf_field(&token.value))
                                        input type="hidden" name="account" value=(account.id);
                                        button type="submit" aria-label=(format!("ادخل كـ {}", account.name)) { "ادخل" }
                                    }
                                }
                            }
                        }
                    }
                }
            }
            form method="post" action=(format!("{}/logout", self.base)) {
                (csrf_field(&token.value))
                button.danger type="submit" { "اخرج" }
            }
        };
        let page = layout(&self.base, "دخول تجريبي", Nav::None, None, body);
        let mut response = html_response(StatusCode::OK, page);
        if let Some(value) = &token.new_cookie
            && let Ok(value) = http::HeaderValue::from_str(&csrf::set_cookie(pages, value))
        {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
        response
    }

    fn session_cookie(pages: &OwnerPages, value: &str, max_age: i64) -> String {
        let attributes = format!("SameSite=Lax; Max-Age={max_age}");
        pages.set_cookie(DEMO_ACCOUNT_COOKIE, value, &attributes)
    }

    fn with_session(&self, mut response: Response<Bytes>, cookie: String) -> Response<Bytes> {
        if let Ok(value) = http::HeaderValue::from_str(&cookie) {
            response.headers_mut().append(header::SET_COOKIE, value);
        }
        response
    }
}

#[async_trait]
impl OwnerLogin for DemoLogin {
    async fn logged_in(&self, request: &Parts) -> Option<AccountId> {
        let id: i64 = cookie(request, DEMO_ACCOUNT_COOKIE)?.parse().ok()?;
        (id > 0).then_some(AccountId::new(id))
    }

    fn login_url(&self) -> Option<String> {
        Some(format!("{}/login", self.base))
    }

    async fn serve(
        &self,
        parts: &Parts,
        body: &Bytes,
        pages: &OwnerPages,
    ) -> Option<Response<Bytes>> {
        let path = parts.uri.path().trim_end_matches('/');
        if path != "/login" && path != "/logout" {
            return None;
        }
        let method = &parts.method;
        if *method == Method::GET || *method == Method::HEAD {
            return Some(if path == "/login" {
                self.login_page(parts, pages).await
            } else {
                pages.message_page(
                    StatusCode::METHOD_NOT_ALLOWED,
                    crate::render::messages::METHOD_NOT_ALLOWED,
                )
            });
        }
        if *method != Method::POST {
            return Some(pages.message_page(
                StatusCode::METHOD_NOT_ALLOWED,
                crate::render::messages::METHOD_NOT_ALLOWED,
            ));
        }
        let form: Vec<(String, String)> = form_urlencoded::parse(body).into_owned().collect();
        let field = |name: &str| {
            form.iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        if !pages.csrf_ok(parts, 0, field(csrf::FIELD)) {
            return Some(
                pages.message_page(StatusCode::FORBIDDEN, crate::render::messages::FORM_EXPIRED),
            );
        }
        if path == "/logout" {
            let response = redirect(&format!("{}/login", self.base));
            return Some(self.with_session(response, Self::session_cookie(pages, "", 0)));
        }
        let account = field("account")
            .and_then(|v| v.parse::<i64>().ok())
            .filter(|id| *id > 0);
        let known = match account {
            Some(id) => pages
                .engine()
                .store()
                .account(AccountId::new(id))
                .await
                .ok()
                .flatten(),
            None => None,
        };
        Some(match known {
            Some(account) => {
                let response = redirect(&format!("{}/", self.base));
                self.with_session(
                    response,
                    Self::session_cookie(pages, &account.id.to_string(), 86_400),
                )
            }
            None => pages.message_page(StatusCode::NOT_FOUND, crate::render::messages::NOT_FOUND),
        })
    }
}
