//! [`SqlStore`]: the store over a sqlx pool of any [`Dialect`], its transactions, and what
//! every concern shares.

use std::sync::Arc;

use commerce_core::store::StoreError;
use sqlx::Pool;
use sqlx::pool::PoolConnection;
use tokio::sync::Mutex;

use crate::Tx;
use crate::dialect::*;
use crate::rate_slots::{FullWindows, Leases};
use crate::rows::backend;

/// The result of a store operation.
pub(crate) type StoreResult<T> = Result<T, StoreError>;

/// The most attempts a write makes when the database ends it to break a deadlock (`40P01`)
/// or a serialization conflict (`40001`): each attempt is a new transaction, and only the
/// last one's failure reaches the caller.
pub(crate) const WRITE_ATTEMPTS: u32 = 5;

/// An error a write may fail with: whether the database ended the transaction only to break
/// a deadlock or a serialization conflict, so that running it again may succeed.
pub(crate) trait Transient {
    /// Whether running the write again may succeed.
    fn is_transient(&self) -> bool;
}

impl Transient for StoreError {
    fn is_transient(&self) -> bool {
        let StoreError::Backend(error) = self else {
            return false;
        };
        error
            .downcast_ref::<sqlx::Error>()
            .and_then(|e| e.as_database_error())
            .and_then(|e| e.code())
            .is_some_and(|code| code == "40P01" || code == "40001")
    }
}

/// Implements [`Transient`] for an operation's error that carries a [`StoreError`].
macro_rules! transient_via_store {
    ($($error:ident),* $(,)?) => {$(
        impl Transient for commerce_core::store::$error {
            fn is_transient(&self) -> bool {
                matches!(self, commerce_core::store::$error::Store(e) if e.is_transient())
            }
        }
    )*};
}
transient_via_store!(
    InsertQuoteError,
    PlaceOrderError,
    StatusChangeError,
    WithdrawalRequestError,
    QuoteDecisionError,
    StockError,
);

/// Runs `attempt` (one whole write transaction) until it succeeds, fails for another reason
/// than [`Transient`], or has been tried [`WRITE_ATTEMPTS`] times. Every transaction takes
/// its rows in one order (crate docs), so a deadlock is rare; the database still ends one
/// when writes meet on rows a foreign key check shares, and a client must never see it.
pub(crate) async fn retrying<T, E, F, Fut>(mut attempt: F) -> Result<T, E>
where
    E: Transient,
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = Result<T, E>>,
{
    let mut tries = 1;
    loop {
        match attempt().await {
            Err(e) if e.is_transient() && tries < WRITE_ATTEMPTS => tries += 1,
            done => return done,
        }
    }
}

/// The store over a pool of SQLite or PostgreSQL connections: `PgStore` and `SqliteStore`
/// (features `postgres`, `sqlite`) are this type on each database.
///
/// Every operation of the store contract is written once, generic over the database; what
/// differs between the two is the database's `Dialect` (row locks, string search, the
/// timeline aggregate, how transactions begin).
#[derive(Debug)]
pub struct SqlStore<DB: sqlx::Database> {
    pub(crate) pool: Pool<DB>,
    /// Serialises this process's write transactions (SQLite: one writer at a time, so that
    /// `BEGIN IMMEDIATE` waits here instead of failing with `SQLITE_BUSY`); `None` on
    /// PostgreSQL.
    writer: Option<Arc<Mutex<()>>>,
    pub(crate) full_windows: Arc<FullWindows>,
    pub(crate) leases: Arc<Leases>,
    /// The schema the store's connections were opened in (PostgreSQL, by `connect*`), created
    /// by `migrate` if missing; `None` for a pool given by the application, and on SQLite.
    pub(crate) schema: Option<Arc<str>>,
    /// Whether the store opened its pool itself (`connect*`), and so closes it in `close`; a
    /// pool given to `from_pool` is the application's to close.
    pub(crate) owns_pool: bool,
    /// Order and line ids drawn ahead, for orders placed in one statement (PostgreSQL).
    pub(crate) ids: Arc<crate::id_blocks::IdBlocks>,
    /// The keys and accounts last read for a key check, with their rows' versions
    /// (PostgreSQL).
    pub(crate) auth_records: Arc<crate::auth_records::AuthRecords>,
}

impl<DB: sqlx::Database> Clone for SqlStore<DB> {
    fn clone(&self) -> Self {
        Self {
            pool: self.pool.clone(),
            writer: self.writer.clone(),
            full_windows: self.full_windows.clone(),
            leases: self.leases.clone(),
            schema: self.schema.clone(),
            owns_pool: self.owns_pool,
            ids: self.ids.clone(),
            auth_records: self.auth_records.clone(),
        }
    }
}

// Crate-internal methods only: `Dialect` is this crate's own seam.
#[allow(private_bounds)]
impl<DB: Dialect> SqlStore<DB> {
    /// A store over `pool`; `serialise_writes` takes an in-process lock around each write
    /// transaction.
    pub(crate) fn over(pool: Pool<DB>, serialise_writes: bool) -> Self {
        Self {
            pool,
            writer: serialise_writes.then(|| Arc::new(Mutex::new(()))),
            full_windows: Arc::default(),
            leases: Arc::default(),
            schema: None,
            owns_pool: false,
            ids: Arc::default(),
            auth_records: Arc::default(),
        }
    }

    /// A transaction that may write.
    pub(crate) async fn write(&self) -> StoreResult<Tx<DB>> {
        let guard = match &self.writer {
            Some(writer) => Some(writer.clone().lock_owned().await),
            None => None,
        };
        Tx::begin(&self.pool, DB::BEGIN_WRITE, guard).await
    }

    /// A consistent read-only snapshot.
    pub(crate) async fn read(&self) -> StoreResult<Tx<DB>> {
        Tx::begin(&self.pool, DB::BEGIN_READ, None).await
    }
}

/// Whether `sql` (a `SELECT id ... WHERE id = $1`) finds a row for `id`.
pub(crate) async fn exists<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    sql: &'static str,
    id: i64,
) -> StoreResult<bool> {
    let found: Option<i64> = query_scalar::<DB, i64>(sql)
        .bind(id)
        .fetch_optional(&mut *c)
        .await
        .map_err(backend)?;
    Ok(found.is_some())
}

/// Locks an account's row until the transaction ends (`FOR UPDATE`; on SQLite the write
/// transaction already holds the database): the lock that puts one account's requests that
/// count before they insert in a row. Whether the account exists.
pub(crate) async fn lock_account<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    account: commerce_core::model::AccountId,
) -> StoreResult<bool> {
    let found: Option<i64> = query_scalar::<DB, i64>(sqlx::AssertSqlSafe(format!(
        "SELECT id FROM accounts WHERE id = $1{}",
        DB::FOR_UPDATE
    )))
    .bind(account)
    .fetch_optional(&mut *c)
    .await
    .map_err(backend)?;
    Ok(found.is_some())
}
