//! Framework-neutral engine of the marketer and supplier commerce API.
//!
//! [`Engine::handle`] answers `http::Request<Bytes>` with `http::Response<Bytes>` for every
//! endpoint under `/api/v1`; the [`Store`](store::Store) trait keeps the data
//! ([`MemoryStore`](store::MemoryStore) in memory; `commerce-store-sqlx` on SQLite or
//! PostgreSQL); the [`Operator`](operator::Operator) is the platform's Rust API for everything the HTTP API
//! only reads (accounts, keys, catalogue, shipping, order moves, withdrawals, the meter).
//! Adapters for axum and warp live in their own crates.
//!
//! ```
//! # use commerce_core as commerce;
//! use std::sync::Arc;
//! use commerce::{Engine, sandbox, store::MemoryStore};
//!
//! # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
//! let engine = Engine::new(Arc::new(MemoryStore::new()));
//! sandbox::seed(&engine).await.unwrap();
//! let request = http::Request::get("/api/v1/me")
//!     .header("authorization", "Bearer sk_demo_marketer")
//!     .body(bytes::Bytes::new())
//!     .unwrap();
//! let response = engine.handle(request).await;
//! assert_eq!(response.status(), 200);
//! assert_eq!(response.headers()["x-ratelimit-remaining"], "119");
//! # });
//! ```
//!
//! # Rules where the contract is silent
//!
//! The API as integrators see it is described in `docs/` in the repository (`docs/README.md`);
//! these are further choices this crate makes, each where an integrator of a payments-grade API
//! would expect it:
//!
//! - **Pipeline** ([`Engine::handle`]): route (404, or 405 with `Allow`) -> body size (413
//!   `payload_too_large` over [`Config::body_limit`](config::Config::body_limit), or [`Config::order_body_limit`](config::Config::order_body_limit) for
//!   `POST /orders`) -> key (401) -> rate limit (429; from here
//!   on every response carries `X-RateLimit-*`) -> account state -> API status -> side ->
//!   ability -> input (422) -> handler. Everything up to the ability is checked on the request
//!   head alone ([`Engine::head`], with the declared length as the body size); adapters call
//!   [`Engine::serve`], which reads the body only once the head passed (413 beyond the limit
//!   when the length was not declared, 408 `request_timeout` past [`Config::body_timeout`](config::Config::body_timeout),
//!   400 `bad_request` for a body that cannot be read). `HEAD` is answered as `GET`. Every response carries
//!   `Cache-Control: no-store`.
//! - **Input**: all field messages of a request are reported together; a blank required string
//!   is missing; strings are trimmed and their length counted in characters; `null` counts as
//!   absent; an unknown `category_id` is a 422 on `category_id`; a warranty listed twice on a
//!   line is a 422 on `lines.N.warranty_ids`. A query parameter the endpoint reads, given with
//!   a blank value (`q=`, `per_page=`), is a 422 on it. Text fields and query parameters hold
//!   printable text: a control character (Unicode `Cc`, NUL included) or a bidirectional
//!   embedding, override or isolate (U+202A-U+202E, U+2066-U+2069) anywhere in the value, even
//!   where trimming would drop it, is a 422 on the field; tab, CR and LF only in the multi-line
//!   fields `note`, `address` and `reason_note`.
//! - **Stock**: entering the cancelled family (marketer cancel, customer refusal, team
//!   cancel) releases the order's pieces exactly once; returned pieces recorded on a line come
//!   back once, by the difference when corrected ([`domain::pieces::stock_moves`]). The platform moves
//!   stock by deltas ([`Operator::adjust_stock`](operator::Operator::adjust_stock)), or sets a
//!   count as a compare-and-set on the quantity it read
//!   ([`Operator::set_stock`](operator::Operator::set_stock)); each change is kept with its
//!   cause. Any change of a variant, an order's reservation included, bumps the product's
//!   `updated_at`, so `updated_since` also reports availability changes.
//! - **Order lifecycle**: [`model::OrderStatus::can_move_to`] is the one table of allowed
//!   moves; the API may only cancel from `order_pending`.
//! - **Idempotency**: a request still in flight under a key for longer than
//!   [`Config::idempotency_stale_after`](config::Config::idempotency_stale_after) (2 minutes) is taken to have died: if it had already
//!   registered its order, the next request answers with that order (as a replay) and keeps it;
//!   otherwise it starts afresh. Records older than 24 hours are purged by
//!   [`Operator::purge_idempotency`](operator::Operator::purge_idempotency), which the
//!   platform calls periodically (hourly is plenty); until purged, expired records are ignored.
//! - **Payout**: `paid` is not emitted: withdrawals are amounts, not tied to orders, so a
//!   delivered order past its hold is `ready`; the wallet's `ready` subtracts what was received
//!   and what is pending.
//! - **Referral**: the wallet shows the platform's referral percent ([`Config::referral_percent`](config::Config::referral_percent),
//!   default 0) and zero amounts; referrals are not modelled.
//! - **`Location`** on 201 is `{mount}/api/v1/orders/{id}`, where `{mount}` is the
//!   [`MountPrefix`] request extension the adapters set when the API is mounted under a
//!   path (`/shop`), and empty otherwise.

// docs.rs builds with every feature and `--cfg docsrs`: each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

pub(crate) mod api;
// The engine's caches of rendered answers and the state they share.
mod cache;
pub mod clock;
pub mod config;
pub mod domain;
// The engine and its errors: every public item of the two is re-exported at the root.
mod engine;
mod error;
pub mod governorates;
#[cfg(feature = "http-server")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-server")))]
pub mod http_server;
mod limits;
pub mod model;
pub mod money;
pub mod observe;
pub mod operator;
pub mod owner;
pub mod owner_pages;
// What answers and events say: the JSON views, the Arabic messages, the request id.
pub(crate) mod render;
#[cfg(feature = "sandbox")]
#[cfg_attr(docsrs, doc(cfg(feature = "sandbox")))]
pub mod sandbox;
pub mod store;
pub(crate) mod time;
// The HTTP entry: routes, authentication, bodies, input and the OpenAPI document; what users
// need of it is re-exported below.
pub(crate) mod web;
pub mod webhooks;

#[cfg(feature = "testing")]
#[cfg_attr(docsrs, doc(cfg(feature = "testing")))]
pub mod testing;

pub use domain::keys::mint::{KEY_PREFIX, TEST_KEY_PREFIX, hash_key};
pub use engine::{Admitted, Engine, EngineBuilder, Head};
pub use error::{ApiError, ConflictReason, ErrorCode, FieldErrors};
pub use time::cairo_timestamp;
pub use web::auth::{Caller, bearer_token};
pub use web::routes::{API_PREFIX, MountPrefix};

/// The date and time types of the API ([`DateTime<Utc>`](chrono::DateTime) instants,
/// [`Duration`](chrono::Duration) settings), re-exported so that a caller needs no
/// dependency of its own.
pub use chrono;
/// Exact decimal money, the type of every amount, re-exported so that a caller needs no
/// dependency of its own (the `rust_decimal` crate itself is not: an application that wants its
/// other items, `dec!` or the rounding strategies, names it in its own `Cargo.toml`).
pub use rust_decimal::Decimal;
