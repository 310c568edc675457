//! Framework-neutral engine of the marketer and supplier commerce API.
//!
//! [`Engine::handle`] answers `http::Request<Bytes>` with `http::Response<Bytes>` for every
//! endpoint under `/api/v1`; the [`Store`](store::Store) trait keeps the data
//! ([`MemoryStore`](store::MemoryStore) in memory; `commerce-store-sqlx` on SQLite or
//! PostgreSQL); the [`Operator`] is the platform's Rust API for everything the HTTP API
//! only reads. Adapters for axum and warp live in their own crates.
//!
//! Rules where the contract is silent are written down next to the code that applies them:
//! pricing in [`pricing`], money in [`money`], statuses in [`model::OrderStatus`], the request
//! pipeline in [`Engine`], idempotency on `POST /orders` in the [`Store`](store::Store) docs.

pub mod api;
pub mod auth;
pub mod clock;
pub mod engine;
pub mod error;
pub mod input;
pub mod messages;
pub mod model;
pub mod money;
pub mod operator;
pub mod pricing;
pub mod routes;
pub mod sandbox;
pub mod store;
pub mod time;
pub mod wire;

#[cfg(feature = "testing")]
pub mod testing;

pub use engine::{Caller, Config, Engine};
pub use error::{ApiError, ErrorCode};
pub use operator::{Operator, OperatorError};
