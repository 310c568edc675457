//! The commerce [`Store`](commerce_core::store::Store) on SQLite and PostgreSQL, with the same
//! guarantees as the in-memory store, checked by the same conformance suite
//! (`commerce_core::testing::store_cases`).
//!
//! * [`SqliteStore`] (feature `sqlite`): an embedded database file. Writes are serialised: an
//!   in-process writer lock plus `BEGIN IMMEDIATE` (WAL journal, `busy_timeout`), so concurrent
//!   requests never meet `SQLITE_BUSY` and every read-then-write is isolated. Each connection
//!   has a 16 MiB page cache and memory-maps the first 256 MiB of the file (`cache_size`,
//!   `mmap_size`), and the pool does not ping a connection before handing it out.
//! * [`PgStore`] (feature `postgres`): every write is one `READ COMMITTED` transaction (or one
//!   statement) in
//!   which races are decided by the database, never by a read followed by a write:
//!   stock is reserved with `UPDATE variants SET available = available - $q WHERE id = $v AND
//!   available >= $q`, one statement per variant in id order (the update locks the row; one
//!   lock order, no deadlocks); a repeated `external_reference`, a taken order number and a
//!   repeated `Idempotency-Key` are refused by unique indexes (`INSERT ... ON CONFLICT DO
//!   NOTHING`); the rate-limit counter is one conditional upsert, on its own (no transaction);
//!   status moves lock the order row (`SELECT ... FOR UPDATE`).
//!
//! `place_order` writes the rows every order contends for (variant stock, the product's
//! `updated_at`, the account's order counter and billing meter) last, just before the commit,
//! so that their locks are held briefly; on PostgreSQL an order of one variant (at most 100
//! lines and 100 warranties, at most one supplier, not placed delivered) is written by one
//! statement outside a transaction block, which the server commits as it ends (`checkout`: a
//! refusal aborts it whole, and the transaction then says why; any other order, or one whose
//! ids cannot be drawn, goes through the transaction). Its order and line ids are drawn ahead,
//! 64 at a time per store: ids have gaps, and two instances' ids interleave, so an order's id
//! says nothing of when it was placed (lists sort by `created_at`, then id). A future dropped
//! while the statement waits for a contended variant may leave the order placed and never
//! answered, as any write whose commit was sent: a client that retries sends an
//! `Idempotency-Key`. It returns the order built from what it wrote. Every
//! write takes the contended rows in one order (variants by id, products, the account's
//! counters by family, its meter), so concurrent writes never deadlock.
//! The unfiltered and `family=` order lists answer `total` from per-account, per-family
//! counters (`account_order_counts`) kept in the same transaction as `place_order` and
//! `change_order_status`; the other filters count the matching rows.
//!
//! Every write of more than one statement is one transaction; any failure part-way rolls
//! everything back and surfaces as [`StoreError::Backend`].
//!
//! # Cancellation
//! A store method's future may be dropped at any `.await` (a client that hung up, a timeout).
//! Transactions are begun and ended here with plain `BEGIN`/`COMMIT`/`ROLLBACK` on a pooled
//! connection of their own, and if the future is dropped in between, the connection is closed
//! rather than returned to the pool: the server rolls the transaction back, and no pooled
//! connection is ever handed out inside a transaction (sqlx's own `Transaction` returned one
//! when dropped while its `BEGIN` was in flight). The cancellation suite
//! (`commerce_core::testing::cancellation`) and `tests/disconnects.rs` check it on both
//! databases, PostgreSQL also through `pg_stat_activity`.
//!
//! # Webhooks
//! The outbox of webhook deliveries is written by `place_order` and `change_order_status` in
//! their own transaction: one `INSERT ... SELECT` queues the event for every enabled endpoint
//! of the account that receives its type (`webhook_endpoints.events` is the comma-joined
//! list, or `*` for an endpoint registered without `events`: every type, later ones
//! included), and only when the order's insert or row lock (a column of a statement they run
//! anyway) says there is one, so an account without endpoints pays nothing. On PostgreSQL
//! that insert rides in the `WITH` of the upsert of the account's order counters, so an
//! account with endpoints pays no extra round trip either. The dispatcher's
//! claim is one `UPDATE` of the due deliveries, picked oldest first, each the earliest pending
//! one of its order to its endpoint, under a lease; on PostgreSQL with `FOR UPDATE SKIP
//! LOCKED`, so that dispatchers sharing the database never take the same delivery. An attempt
//! is recorded only while its lease still holds the delivery.
//!
//! # Round trips (PostgreSQL)
//! What each request costs is measured by `examples/statements_per_request.rs` (figures in
//! BENCHMARKS.md). In short: the key, its rate-window hit and its account are one statement
//! ([`AccountStore::authenticate`](commerce_core::store::AccountStore::authenticate), a data-modifying CTE);
//! a key allowed thousands of requests a minute counts them from leases of its window (a
//! thousandth of its limit at a time), and its key and account records are kept by the process with their
//! rows' versions (`xmin`), so its check reads the two versions alone while neither changed
//! (the whole rows again at most 60 s later);
//! `rate_limit_windows` is `UNLOGGED`, so that per-minute counter costs no WAL flush (after a
//! crash of the database server the current minute starts from zero: a key may then get up to
//! twice its limit within that minute); catalogue pulls already recorded this month are not
//! written again, and new ones are one multi-row statement; a products or orders page and its
//! total are one statement (the orders' lines are read only for the orders whose JSON the
//! engine has not kept); in `place_order`, an order of one variant stamps its product in the
//! stock update's `WITH`, and the account's order counters, meter and webhook deliveries are
//! one statement; the checkout reads the products of the ordered variants through them (no
//! read of their ids first) and the shipping options with their rates in one statement; the
//! pool does not ping a connection before handing it out. A key's records are kept only
//! while the database says its row and its account's are unchanged: a revoked or expired
//! key, or a suspended account, is refused by the next request on every instance.
//!
//! # Wallet
//! Each order row keeps what it earns now (`earnings_net`, `earnings_commission`, from
//! [`OrderEarnings`](commerce_core::domain::earnings::OrderEarnings)) and `account_order_counts` keeps
//! their sums per account and family, in the same transaction as every write that changes
//! them; a wallet read is one statement over those sums and the orders delivered within the
//! hold period (index `orders_delivered`). Orders stored before these columns are booked by
//! `migrate()`.
//!
//! # Storage
//! * Money is integer piastres (`BIGINT`), converted with
//!   [`to_piastres`](commerce_core::money::to_piastres) and
//!   [`from_piastres`](commerce_core::money::from_piastres); an amount with more than two
//!   decimals is refused with `StoreError::Invalid`. Percent fields are stored the same way
//!   (hundredths of a percent).
//! * Instants are `BIGINT` nanoseconds since the Unix epoch, UTC (exact round trip).
//! * Tables are normalised (orders, order_lines, order_line_warranties, ...), except that an
//!   order's timeline is a JSON array on its row (`orders.timeline`: a page of orders is a plain
//!   read of its rows, and a move writes the status and its entry in one statement); the
//!   schema is embedded and applied by [`SqliteStore::migrate`] / [`PgStore::migrate`]
//!   (`migrations/sqlite`, `migrations/postgres`), in the store's own place (see "Where the
//!   tables live").
//! * Every write of an order or a product moves its `updated_at` forward (in SQL, whatever
//!   the writer's clock): its version (`OrderStore::order_versions`,
//!   `CatalogStore::product_versions`), by which engines keep its rendered JSON. A migration
//!   or a manual edit that changes what an order or a product shows must move it too.
//! * Title search is a literal, case-insensitive substring match on a lower-cased copy of the
//!   title (`%` and `_` match only themselves), exactly as `MemoryStore` does.
//!
//! # Where the tables live
//! The store shares a database with the application that embeds it without meeting the
//! application's tables or its sqlx migrations:
//!
//! * **PostgreSQL**: the store's tables are in a schema of their own, [`DEFAULT_SCHEMA`]
//!   (`commerce`), or the one named with [`PgStore::connect_with_schema`] (a plain identifier,
//!   `[a-z_][a-z0-9_]*`). Every connection of the store's pool is opened with `search_path` set
//!   to that schema alone, as a startup parameter (no extra round trip, and no statement of
//!   the store names a schema); [`PgStore::migrate`] creates the schema if missing. The
//!   application's `public.orders` and the store's `commerce.orders` are different tables;
//!   the application reads the store's data, if it wants to, as `commerce.orders`. Extensions
//!   and `pg_catalog` are unaffected (the store calls no extension function).
//! * **SQLite**: the store wants a database file of its own. SQLite has no schemas inside one
//!   file; giving the store's tables a prefix, or an attached database they are qualified
//!   with, would mean rewriting every statement of the store for one deployment shape, while
//!   a file of its own costs nothing. An application that shares one file with the store
//!   works as long as its table names differ from the store's (`orders`, `products`, ...);
//!   one that wants its own `orders` next to the store's data opens its own file and
//!   `ATTACH`es the store's (`ATTACH DATABASE 'commerce.db' AS commerce`, then
//!   `SELECT ... FROM commerce.orders`); `tests/side_by_side.rs` shows both.
//! * **Migrations** (both): the store records its applied migrations in
//!   [`MIGRATIONS_TABLE`] (`_commerce_migrations`, in the store's schema on PostgreSQL), not
//!   in sqlx's `_sqlx_migrations`, which stays the application's: the application's own
//!   `sqlx::migrate!()` neither sees the store's migrations (it would refuse them as
//!   "applied but missing") nor changes them.
//!
//! A database migrated by an earlier version of this crate (tables in the pool's schema,
//! usually `public`; migrations in `_sqlx_migrations`) keeps working: opened where its tables
//! are (`PgStore::connect_with_schema(options, "public")`, or the same SQLite file), `migrate`
//! copies the store's rows of `_sqlx_migrations` (those whose version and checksum are the
//! store's) to `_commerce_migrations` once. Opened in `commerce` while its tables are in
//! `public`, `migrate` refuses with [`SetupError::TablesElsewhere`] instead of starting an empty
//! store next to the old one; moving the tables is then the operator's choice
//! (`ALTER TABLE ... SET SCHEMA commerce` for each, and the store's rows of `_sqlx_migrations`
//! copied to `commerce._commerce_migrations`).
//!
//! # Housekeeping
//! Idempotency records are kept until purged. The platform calls
//! [`IdempotencyStore::purge_idempotency`](commerce_core::store::IdempotencyStore::purge_idempotency) (or the engine's
//! purge, which calls it) periodically, e.g. hourly with "now minus 24 hours". Rate-limit
//! windows of a key are deleted when the key's next window starts.
//!
//! # Example
//! ```no_run
//! # mod commerce { pub use commerce_core::*; pub mod sqlx { pub use commerce_store_sqlx::*; } }
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use commerce::store::prelude::*;
//! use commerce::sqlx::SqliteStore;
//!
//! let store = SqliteStore::connect("sqlite://commerce.db").await?;
//! store.migrate().await?;
//! let store: Arc<dyn Store> = Arc::new(store);
//! # Ok(()) }
//! ```
//!
//! On PostgreSQL, in the schema `shop` of the application's database:
//! ```no_run
//! # mod commerce { pub use commerce_core::*; pub mod sqlx { pub use commerce_store_sqlx::*; } }
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use commerce::sqlx::PgStore;
//! use commerce::sqlx::sqlx::postgres::PgConnectOptions;
//!
//! let options: PgConnectOptions = "postgres://app@localhost/app".parse()?;
//! let store = PgStore::connect_with_schema(options, "shop").await?;
//! store.migrate().await?; // creates the schema `shop` if missing
//! # Ok(()) }
//! ```

// docs.rs builds with every feature and `--cfg docsrs`: each feature-gated item says which
// feature it needs.
#![cfg_attr(docsrs, feature(doc_cfg))]
// The links to the store of a feature that is off go to docs.rs (built with every feature).
#![cfg_attr(
    not(feature = "postgres"),
    doc = "\n[`PgStore`]: https://docs.rs/commerce-store-sqlx/latest/commerce_store_sqlx/type.PgStore.html\n[`PgStore::migrate`]: https://docs.rs/commerce-store-sqlx/latest/commerce_store_sqlx/type.PgStore.html\n[`PgStore::connect_with_schema`]: https://docs.rs/commerce-store-sqlx/latest/commerce_store_sqlx/type.PgStore.html\n[`DEFAULT_SCHEMA`]: https://docs.rs/commerce-store-sqlx/latest/commerce_store_sqlx/constant.DEFAULT_SCHEMA.html"
)]
#![cfg_attr(
    not(feature = "sqlite"),
    doc = "\n[`SqliteStore`]: https://docs.rs/commerce-store-sqlx/latest/commerce_store_sqlx/type.SqliteStore.html\n[`SqliteStore::migrate`]: https://docs.rs/commerce-store-sqlx/latest/commerce_store_sqlx/type.SqliteStore.html"
)]
// With neither backend feature the crate has no store to offer, and the code the two share
// is unused: build it anyway (CI checks every feature combination), without the warnings.
#![cfg_attr(
    not(any(feature = "sqlite", feature = "postgres")),
    allow(dead_code, unused_imports, unused_macros)
)]

use commerce_core::store::StoreError;
use sqlx::QueryBuilder;
use sqlx::pool::PoolConnection;

mod accounts;
mod auth_records;
pub(crate) mod back_office;
mod catalog;
mod catalog_edits;
mod changes;
mod checkout;
mod dialect;
mod dispatch;
mod id_blocks;
mod idempotency;
mod meter;
mod migrations;
mod order_reads;
mod orders;
mod outbox;
mod placing;
mod products;
mod rate_slots;
mod rows;
mod settings;
mod shipping;
mod sql_store;
mod statement;
mod stock;
mod supply;
mod wallet;
mod webhooks;
mod withdrawals;

#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

#[doc(hidden)]
pub use back_office::Explain;
pub use migrations::MIGRATIONS_TABLE;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::{DEFAULT_SCHEMA, PgStore};
pub use settings::PoolSettings;
pub use sql_store::SqlStore;
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::SqliteStore;

pub use sqlx;

/// Ids per `IN (...)` list (SQLite allows 32766 bind parameters, PostgreSQL 65535).
pub(crate) const MAX_BIND_CHUNK: usize = 500;

/// A transaction of one store operation on a pooled connection of its own, holding the SQLite
/// writer lock when it may write.
///
/// # Cancellation
/// The transaction is begun, committed and rolled back here with plain `BEGIN`/`COMMIT`/
/// `ROLLBACK` statements, and the connection goes back to the pool only once one of them has
/// answered. If the operation's future is dropped at any `.await` in between (a client that
/// disconnected, a timeout layer), the guard's `Drop` marks the connection to be closed instead:
/// the server rolls the open transaction back when the session ends, and no pooled connection
/// is ever handed out inside a transaction, or with a `BEGIN` sent whose answer was never read.
/// (sqlx's own `Transaction` misses that last case: a future dropped while `BEGIN` is in flight
/// returns the connection with the transaction open.)
pub(crate) struct Tx<DB: dialect::Dialect> {
    /// The connection the transaction runs on.
    pub(crate) tx: PoolConnection<DB>,
    /// Until `COMMIT` or `ROLLBACK` has answered: the session's state is not known to be clean.
    open: bool,
    _writer: Option<tokio::sync::OwnedMutexGuard<()>>,
}

impl<DB: dialect::Dialect> Tx<DB> {
    /// Takes a connection from `pool` and runs `begin` (`BEGIN ...`) on it.
    pub(crate) async fn begin(
        pool: &sqlx::Pool<DB>,
        begin: &'static str,
        writer: Option<tokio::sync::OwnedMutexGuard<()>>,
    ) -> Result<Self, StoreError> {
        let connection = pool.acquire().await.map_err(rows::backend)?;
        let mut tx = Self {
            tx: connection,
            open: true,
            _writer: writer,
        };
        tx.run(begin).await?;
        Ok(tx)
    }

    /// Takes a connection from `pool` for a write of one statement, which commits by itself
    /// (no `BEGIN`): until [`Tx::settle`] says its statement has answered, dropping it closes
    /// the connection (a statement whose answer was not read leaves the session's state
    /// unknown).
    pub(crate) async fn autocommit(pool: &sqlx::Pool<DB>) -> Result<Self, StoreError> {
        Ok(Self {
            tx: pool.acquire().await.map_err(rows::backend)?,
            open: true,
            _writer: None,
        })
    }

    /// The statement of an [`Tx::autocommit`] connection has answered: the connection goes
    /// back to the pool.
    pub(crate) fn settle(mut self) {
        self.open = false;
    }

    async fn run(&mut self, statement: &'static str) -> Result<(), StoreError> {
        DB::execute_raw(&mut self.tx, statement)
            .await
            .map_err(rows::backend)
    }

    /// Commits on success, rolls back on any error (before the writer lock is released).
    pub(crate) async fn finish<T, E: From<StoreError>>(
        mut self,
        result: Result<T, E>,
    ) -> Result<T, E> {
        match result {
            Ok(value) => {
                self.run("COMMIT").await?;
                self.open = false;
                Ok(value)
            }
            Err(error) => {
                // The operation already failed; if the rollback fails too, `Drop` closes the
                // connection, which rolls back on the server.
                if self.run("ROLLBACK").await.is_ok() {
                    self.open = false;
                }
                Err(error)
            }
        }
    }
}

impl<DB: dialect::Dialect> Drop for Tx<DB> {
    fn drop(&mut self) {
        if self.open {
            // Dropped mid-operation, or BEGIN/COMMIT/ROLLBACK failed: never reuse the session.
            self.tx.close_on_drop();
        }
    }
}

/// `head` (ending with a column) + the test that the column is one of `ids`
/// ([`Dialect::push_one_of`](dialect::Dialect::push_one_of)) + `tail`.
pub(crate) fn in_list<DB: dialect::Dialect, I: Copy + Into<i64>>(
    head: &str,
    ids: &[I],
    tail: &str,
) -> QueryBuilder<DB> {
    let ids: Vec<i64> = ids.iter().map(|&id| id.into()).collect();
    let mut q = QueryBuilder::new(head);
    DB::push_one_of(&mut q, &ids);
    q.push(tail);
    q
}

/// Pushes `$n, $n+1, ...` onto `q`, one bind per id.
pub(crate) fn push_list<DB: dialect::Dialect + dialect::Bind<I>, I: Copy>(
    q: &mut QueryBuilder<DB>,
    ids: &[I],
) {
    use dialect::Builder;
    for (i, id) in ids.iter().enumerate() {
        if i > 0 {
            q.push(", ");
        }
        q.push_arg(*id);
    }
}

/// Why a store could not be opened or migrated.
///
/// `sqlx` is a public dependency of this crate (the stores hand out their `sqlx` pool), so
/// its errors are carried as they are; new variants may come in a minor release.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SetupError {
    /// Connecting or configuring the database failed.
    #[error("database connection failed: {0}")]
    Connect(#[from] sqlx::Error),
    /// Applying the embedded migrations failed.
    #[error("migration failed: {0}")]
    Migrate(#[from] sqlx::migrate::MigrateError),
    /// Booking the earnings of orders stored before they were kept failed.
    #[error("booking stored orders' earnings failed: {0}")]
    Earnings(#[from] StoreError),
    /// The PostgreSQL schema name is not a plain lower-case identifier (`[a-z_][a-z0-9_]*`, at
    /// most 63 bytes, not starting with `pg_`).
    #[error("invalid schema name {0:?}: expected [a-z_][a-z0-9_]*, at most 63 bytes, not pg_*")]
    InvalidSchema(String),
    /// The store's tables were found in another schema than the one it was opened in (a
    /// database migrated before the store had a schema of its own): open the store in the
    /// schema `found`, or move the tables (and the store's rows of `_sqlx_migrations`) to
    /// `configured`.
    #[error(
        "the store's tables are in schema {found:?} (migrated by an earlier version), not in \
         {configured:?}: open the store in schema {found:?} or move its tables"
    )]
    TablesElsewhere {
        /// The schema holding the store's tables.
        found: String,
        /// The schema the store was opened in.
        configured: String,
    },
}
