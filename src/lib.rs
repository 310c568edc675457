//! The commerce API as a library: one dependency line for the engine, its stores and its
//! framework adapters.
//!
//! - [`Engine`]: the framework-neutral engine (`handle(http::Request<Bytes>) -> http::Response<Bytes>`).
//! - [`store`]: the `Store` trait and the in-memory store.
//! - [`axum`] (feature `axum`, on by default): mount the engine in an axum app.
//! - [`Owner`] and [`owner_pages`]: the account owner's API and pages (API access, keys,
//!   wallet), mounted behind the application's own login.
//! - [`sqlx`] (features `sqlx-sqlite`, `sqlx-postgres`, or `sqlx` for both): the store on
//!   SQLite and PostgreSQL.
//! - `sandbox` (feature `sandbox`): the demo fixture the examples and tests use; leave it off
//!   in production (it knows fixed demo keys).
//! - `warp` (feature `warp`): mount the engine in a warp app, as a `Filter`.
//! - `metrics` (feature `metrics`): request metrics through the `metrics` facade
//!   ([`observe`] names them, with the engine's `tracing` spans).
//!
//! See the README for the two commands that run the sandbox and the tests.

// Explicit re-exports: the facade's surface is this list, not whatever the core happens to
// make public (a new public item of `commerce-core` reaches users of `commerce` only when
// added here; `public-api/commerce.txt` shows the list).
/// The demo fixture (feature `sandbox`): demo accounts, fixed demo keys, a catalogue.
#[cfg(feature = "sandbox")]
pub use commerce_core::sandbox;
pub use commerce_core::{
    API_PREFIX, Admitted, ApiError, Caller, Config, ConfigError, Conflict, ConflictReason, Decimal,
    Engine, EngineBuilder, ErrorCode, Head, KEY_PREFIX, MountPrefix, Operator, OperatorError,
    Owner, OwnerLogin, OwnerPages, bearer_token, cairo_month, cairo_timestamp, hash_key,
};
pub use commerce_core::{
    chrono, clock, config, domain, earnings, engine, error, governorates, model, money, observe,
    operator, owner, owner_pages, pricing, rust_decimal, store, webhooks,
};

/// Mount the engine in an axum application (feature `axum`).
#[cfg(feature = "axum")]
pub mod axum {
    pub use commerce_axum::*;
}

/// Mount the engine in a warp application (feature `warp`).
#[cfg(feature = "warp")]
pub mod warp {
    pub use commerce_warp::*;
}

/// The store on SQLite (feature `sqlx-sqlite`) and PostgreSQL (feature `sqlx-postgres`).
#[cfg(any(feature = "sqlx-sqlite", feature = "sqlx-postgres"))]
pub mod sqlx {
    pub use commerce_store_sqlx::*;
}
