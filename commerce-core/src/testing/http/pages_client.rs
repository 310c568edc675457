//! A small browser for the owner pages' cases: it keeps cookies, reads the CSRF token of the
//! last page and posts forms with it, like a browser without JavaScript.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use http::{HeaderMap, Method, Request, StatusCode, header};

use crate::owner_pages::OwnerPages;
use crate::sandbox::DemoLogin;

use super::{Harness, HttpIntegration};

#[async_trait::async_trait]
impl HttpIntegration for OwnerPages {
    async fn send(&self, request: Request<Bytes>) -> http::Response<Bytes> {
        self.serve(request).await
    }
}

/// A page as the browser received it.
#[derive(Debug)]
#[non_exhaustive]
pub struct Page {
    /// Status.
    pub status: StatusCode,
    /// Headers.
    pub headers: HeaderMap,
    /// The HTML.
    pub body: String,
}

impl Page {
    /// A `Page` of its fields, in their order.
    pub fn new(status: StatusCode, headers: HeaderMap, body: String) -> Self {
        Self {
            status,
            headers,
            body,
        }
    }
}

impl Page {
    /// The CSRF token of the page's first form.
    pub fn csrf(&self) -> String {
        let marker = "name=\"csrf\" value=\"";
        let at = self
            .body
            .find(marker)
            .expect("the page has a form with a CSRF token")
            + marker.len();
        let end = self.body[at..].find('"').expect("the value ends");
        self.body[at..at + end].to_owned()
    }

    /// A header's value.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }

    /// The text of the element with this id (the first `>` after it to the next `<`).
    pub fn text_of(&self, id: &str) -> String {
        let marker = format!("id=\"{id}\"");
        let at = self
            .body
            .find(&marker)
            .unwrap_or_else(|| panic!("no #{id} in {}", self.body));
        let start = at + self.body[at..].find('>').expect("a tag") + 1;
        let end = start + self.body[start..].find('<').expect("a closing tag");
        self.body[start..end].to_owned()
    }
}

/// A cookie jar in front of the owner pages: called directly, or through an adapter that
/// mounts them (every path then gets the mount's prefix).
pub struct Browser {
    client: Arc<dyn HttpIntegration>,
    prefix: String,
    cookies: Mutex<BTreeMap<String, String>>,
}

impl Browser {
    /// A browser on the pages of `h`'s engine, logged in as nobody.
    pub fn new(h: &Harness) -> Self {
        Self::on(
            OwnerPages::new(h.engine.clone(), DemoLogin::new("/account")).mounted_at("/account"),
        )
    }

    /// A browser on `pages`, called directly (paths relative to the mount).
    pub fn on(pages: OwnerPages) -> Self {
        Self::through(Arc::new(pages), "")
    }

    /// A browser on an adapter serving the pages under `prefix` (`/account`).
    pub fn through(client: Arc<dyn HttpIntegration>, prefix: &str) -> Self {
        Self {
            client,
            prefix: prefix.to_owned(),
            cookies: Mutex::new(BTreeMap::new()),
        }
    }

    /// Sends a request (path under the mount) with the jar's cookies; keeps those set.
    pub async fn send(&self, method: Method, path: &str, body: String) -> Page {
        let cookie = {
            let jar = self.cookies.lock().expect("jar");
            jar.iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>()
                .join("; ")
        };
        let uri = format!("{}{path}", self.prefix);
        let mut request = Request::builder().method(method).uri(uri);
        if !cookie.is_empty() {
            request = request.header(header::COOKIE, cookie);
        }
        if !body.is_empty() {
            request = request.header(header::CONTENT_TYPE, "application/x-www-form-urlencoded");
        }
        let request = request.body(Bytes::from(body)).expect("a request");
        let response = self.client.send(request).await;
        let mut jar = self.cookies.lock().expect("jar");
        for set in response.headers().get_all(header::SET_COOKIE) {
            let text = set.to_str().expect("ASCII cookie");
            let pair = text.split(';').next().unwrap_or_default();
            if let Some((name, value)) = pair.split_once('=') {
                if value.is_empty() {
                    jar.remove(name);
                } else {
                    jar.insert(name.to_owned(), value.to_owned());
                }
            }
        }
        let (parts, body) = response.into_parts();
        Page {
            status: parts.status,
            headers: parts.headers,
            body: String::from_utf8(body.to_vec()).expect("UTF-8 HTML"),
        }
    }

    /// `GET path`.
    pub async fn get(&self, path: &str) -> Page {
        self.send(Method::GET, path, String::new()).await
    }

    /// `POST path` with these fields (the CSRF token given as a field when wanted).
    pub async fn post_raw(&self, path: &str, fields: &[(&str, &str)]) -> Page {
        let body = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(fields)
            .finish();
        self.send(Method::POST, path, body).await
    }

    /// Loads `page` then posts `fields` to `action` with the page's CSRF token.
    pub async fn submit(&self, page: &str, action: &str, fields: &[(&str, &str)]) -> Page {
        let token = self.get(page).await.csrf();
        let mut all = vec![("csrf", token.as_str())];
        all.extend_from_slice(fields);
        self.post_raw(action, &all).await
    }

    /// Logs in through the demo login as account `id`.
    pub async fn log_in(&self, id: crate::model::AccountId) {
        let page = self
            .submit("/login", "/login", &[("account", &id.to_string())])
            .await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
        assert_eq!(page.header("location"), Some("/account/"));
    }
}
