//! The commerce API as a library: one dependency line for the engine, its stores and its
//! framework adapters.
//!
//! - [`Engine`]: the framework-neutral engine (`handle(http::Request<Bytes>) -> http::Response<Bytes>`).
//! - [`store`]: the `Store` trait and the in-memory store.
//! - `axum` (feature `axum`, on by default): mount the engine in an axum app.
//! - [`owner`] and [`owner_pages`]: the account owner's API and pages (API access, keys,
//!   wallet), mounted behind the application's own login.
//! - `sqlx` (features `sqlx-sqlite`, `sqlx-postgres`, or `sqlx` for both): the store on
//!   SQLite and PostgreSQL.
//! - `sandbox` (feature `sandbox`): the demo fixture the examples and tests use; leave it off
//!   in production (it knows fixed demo keys).
//! - `warp` (feature `warp`): mount the engine in a warp app, as a `Filter`.
//! - `metrics` (feature `metrics`): request metrics through the `metrics` facade
//!   ([`observe`] names them, with the engine's `tracing` spans), and the webhook dispatcher's.
//! - `webhooks` (feature `webhooks`, on by default): the webhook dispatcher,
//!   `Engine::dispatcher`, which sends the queued order events to the receivers registered
//!   through the API.
//!
//! # What an application runs
//!
//! Besides serving the API (`commerce::axum::router`, `commerce::warp::api`, or
//! [`Engine::serve`] under any server), once per app instance:
//!
//! - **the dispatcher**: `tokio::spawn(engine.dispatcher().run(shutdown))`. Order events are
//!   written to an outbox with each order change and sent only by a running dispatcher;
//! - **the purges**, hourly: `engine.operator().purge_idempotency()` and
//!   `purge_webhook_deliveries()`;
//! - **a shutdown** that stops accepting, lets requests finish, stops the dispatcher and closes
//!   the store's pool.
//!
//! [`Engine::run_background`] runs the dispatcher and the purges until a shutdown future
//! resolves, then drains them and closes the store; the README's axum app shows it with a
//! shutdown on SIGTERM or ctrl-c. `examples/production.rs` in the repository does all of it on
//! PostgreSQL.
//!
//! # Logs
//!
//! The library logs through `tracing` with the targets of its crates (`commerce_core::...`,
//! `commerce_store_sqlx::...`): a filter directive on `commerce` matches all of them, since a
//! directive matches every target it starts (`RUST_LOG=warn,commerce=info`). Names of spans,
//! fields and metrics: [`observe`].
//!
//! See the README for the two commands that run the sandbox and the tests, and for the
//! environment variables the examples, tests and benches read.

// docs.rs builds with every feature and `--cfg docsrs`: each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]

// Re-exports without a glob, here and in the adapter modules below. Root items reach users of
// `commerce` only when named here; the modules re-exported whole (`model`, `store`, ...) pass on
// every public item they gain, which `public-api/commerce-core.txt` shows.
/// The demo fixture (feature `sandbox`): demo accounts, fixed demo keys, a catalogue.
#[cfg(feature = "sandbox")]
#[cfg_attr(docsrs, doc(cfg(feature = "sandbox")))]
pub use commerce_core::sandbox;
pub use commerce_core::{
    API_PREFIX, Admitted, ApiError, Caller, ConflictReason, Decimal, Engine, EngineBuilder,
    ErrorCode, FieldErrors, Head, KEY_PREFIX, MountPrefix, TEST_KEY_PREFIX, bearer_token,
    cairo_timestamp, hash_key,
};
pub use commerce_core::{
    chrono, clock, config, domain, governorates, model, money, observe, operator, owner,
    owner_pages, store, webhooks,
};

#[cfg(feature = "http-server")]
#[cfg_attr(docsrs, doc(cfg(feature = "http-server")))]
pub use commerce_core::http_server;

/// Mount the engine in an axum application (feature `axum`); `serve` takes
/// [`http_server::ServeOptions`].
#[cfg(feature = "axum")]
#[cfg_attr(docsrs, doc(cfg(feature = "axum")))]
pub mod axum {
    pub use commerce_axum::{
        CommerceService, OwnerPagesService, app, owner_pages, router, serve, service,
    };
}

/// Mount the engine in a warp application (feature `warp`); `serve` takes
/// [`http_server::ServeOptions`].
#[cfg(feature = "warp")]
#[cfg_attr(docsrs, doc(cfg(feature = "warp")))]
pub mod warp {
    pub use commerce_warp::{
        WarpResponse, api, api_under, api_with_extensions, owner_pages, serve,
    };
}

/// The store on SQLite (feature `sqlx-sqlite`) and PostgreSQL (feature `sqlx-postgres`).
#[cfg(any(feature = "sqlx-sqlite", feature = "sqlx-postgres"))]
#[cfg_attr(
    docsrs,
    doc(cfg(any(feature = "sqlx-sqlite", feature = "sqlx-postgres")))
)]
pub mod sqlx {
    #[cfg(feature = "sqlx-sqlite")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sqlx-sqlite")))]
    pub use commerce_store_sqlx::SqliteStore;
    #[cfg(feature = "sqlx-postgres")]
    #[cfg_attr(docsrs, doc(cfg(feature = "sqlx-postgres")))]
    pub use commerce_store_sqlx::{DEFAULT_SCHEMA, PgStore};
    pub use commerce_store_sqlx::{MIGRATIONS_TABLE, PoolSettings, SetupError, SqlStore, sqlx};
}

/// Compiles the Rust blocks of Markdown pages (the README, the pages of `docs/`) as doctests:
/// one item per page, and the list of the pages, which a unit test holds to their contents.
macro_rules! doctests_of {
    ($($item:ident = $page:literal,)*) => {
        $(
            /// A page's Rust blocks, compiled by `cargo test --doc --all-features` so that they
            /// stay true to the facade (never part of the API: built for doctests only).
            #[cfg(all(
                doctest,
                feature = "axum",
                feature = "warp",
                feature = "sqlx-postgres",
                feature = "webhooks"
            ))]
            #[doc = include_str!(concat!("../", $page))]
            pub struct $item;
        )*

        /// The pages whose Rust blocks are compiled, from the crate's root.
        #[cfg(test)]
        const COMPILED_PAGES: &[&str] = &[$($page),*];
    };
}

doctests_of! {
    ReadmeDoctests = "README.md",
    OnboardingDoctests = "docs/onboarding.md",
    WebhooksDoctests = "docs/webhooks.md",
}

#[cfg(test)]
mod tests {
    use std::path::Path;

    /// Whether the Markdown page at `path` (from the crate's root) has a Rust block.
    fn has_rust_block(path: &str) -> bool {
        let root = Path::new(env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(root.join(path))
            .expect("a page")
            .lines()
            .any(|line| line.starts_with("```rust"))
    }

    /// Every page with a Rust block (```` ```rust ````), the README and those of `docs/`, is in
    /// [`super::COMPILED_PAGES`], so that its blocks compile as doctests of this crate, and no
    /// other page is.
    #[test]
    fn every_page_with_rust_blocks_is_compiled() {
        let docs = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs");
        let mut pages: Vec<String> = std::fs::read_dir(docs)
            .expect("docs/")
            .map(|entry| {
                entry
                    .expect("an entry")
                    .file_name()
                    .to_string_lossy()
                    .into_owned()
            })
            .filter(|name| name.ends_with(".md"))
            .map(|name| format!("docs/{name}"))
            .chain(["README.md".to_owned()])
            .filter(|page| has_rust_block(page))
            .collect();
        pages.sort();
        let mut compiled = super::COMPILED_PAGES.to_vec();
        compiled.sort_unstable();
        assert_eq!(pages, compiled);
    }
}
