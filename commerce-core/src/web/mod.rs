//! The HTTP entry: everything between a request's bytes and the product's rules, and back.
//! A newcomer looking for how a request is read or an answer written starts here; the
//! handlers of each endpoint are in `api/`, the rules they apply in [`domain`](crate::domain).
//!
//! - `routes`: the one endpoint table (method, path, ability, sides, billing, handler,
//!   OpenAPI operation) and the dispatch built from it, [`MountPrefix`](crate::MountPrefix);
//! - `auth`: bearer keys, their hashes and the [`Caller`](crate::Caller);
//! - `body`: reading a request body within its limits;
//! - `input`: parsing query strings and JSON bodies into checked input;
//! - `openapi`: the OpenAPI document and the `GET /api/v1/docs` reference page;
//! - `html`: the headers of every HTML page (the owner pages, the reference).
//!
//! What an answer says (the JSON views, the Arabic messages, the request id) is rendered in
//! [`render`](crate::render), which the services (errors, webhook events) share with it.

pub(crate) mod auth;
pub(crate) mod body;
pub(crate) mod html;
pub(crate) mod input;
pub(crate) mod openapi;
pub(crate) mod routes;
