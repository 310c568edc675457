//! The HTTP entry: everything between a request's bytes and the product's rules, and back.
//! A newcomer looking for how a request is read or an answer written starts here; the
//! handlers of each endpoint are in `api/`, the rules they apply in [`domain`](crate::domain).
//!
//! - `routes`: the one endpoint table (method, path, ability, sides, billing, handler,
//!   OpenAPI operation) and the dispatch built from it, [`MountPrefix`](crate::MountPrefix);
//! - `auth`: bearer keys, their hashes and the [`Caller`](crate::Caller);
//! - `unknown_keys`: the bearer tokens found unknown lately;
//! - `body`: reading a request body within its limits;
//! - `input`: parsing query strings and JSON bodies into checked input;
//! - `wire`: the JSON views of the answers (and `wire::supply`, the supply side's);
//! - `messages`: the Egyptian Arabic messages of every error;
//! - `request_id`: the request id every answer carries;
//! - `openapi`: the OpenAPI document and the `GET /api/v1/docs` reference page;
//! - `html`: the headers of every HTML page (the owner pages, the reference).

pub(crate) mod auth;
pub(crate) mod body;
pub(crate) mod html;
pub(crate) mod input;
pub(crate) mod messages;
pub(crate) mod openapi;
pub(crate) mod request_id;
pub(crate) mod routes;
pub(crate) mod unknown_keys;
pub(crate) mod wire;
