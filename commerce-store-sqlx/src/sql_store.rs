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
