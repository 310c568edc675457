//! [`SqliteStore`]: the store in an SQLite database.

use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use commerce_core::store::StoreError;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};
use sqlx::{Sqlite, SqliteConnection};
use tokio::sync::Mutex;

use crate::rate_slots::{FullWindows, Leases};
use crate::{SetupError, Tx};

/// The store in an SQLite database (one file, or memory).
///
/// Writes are serialised by an in-process lock and `BEGIN IMMEDIATE`, so each operation is
/// isolated and concurrent callers wait instead of failing with `SQLITE_BUSY`; reads run
/// concurrently in WAL mode. Several processes may share a file: `busy_timeout` (5 s) makes
/// them wait for each other's writes.
#[derive(Debug, Clone)]
pub struct SqliteStore {
    pub(crate) pool: SqlitePool,
    writer: Arc<Mutex<()>>,
    pub(crate) full_windows: Arc<FullWindows>,
    pub(crate) leases: Arc<Leases>,
}

impl SqliteStore {
    /// Opens (creating if missing) the database at `url` (`sqlite://path.db`,
    /// `sqlite::memory:`) with WAL, `busy_timeout` 5 s and foreign keys on.
    pub async fn connect(url: &str) -> Result<Self, SetupError> {
        let options = SqliteConnectOptions::from_str(url)?;
        Self::connect_with(options).await
    }

    /// Opens the database with these options (WAL, `busy_timeout` and foreign keys are added).
    ///
    /// An in-memory database lives in one connection, so its pool holds exactly one.
    pub async fn connect_with(options: SqliteConnectOptions) -> Result<Self, SetupError> {
        let in_memory = options
            .get_filename()
            .to_string_lossy()
            .contains(":memory:")
            || options.get_filename().as_os_str().is_empty();
        let options = options
            .create_if_missing(true)
            .foreign_keys(true)
            .busy_timeout(Duration::from_secs(5))
            .journal_mode(if in_memory {
                SqliteJournalMode::Memory
            } else {
                SqliteJournalMode::Wal
            })
            .synchronous(SqliteSynchronous::Normal);
        let pool = if in_memory {
            SqlitePoolOptions::new()
                .min_connections(1)
                .max_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .connect_with(options)
                .await?
        } else {
            SqlitePoolOptions::new()
                .max_connections(8)
                .connect_with(options)
                .await?
        };
        Ok(Self::from_pool(pool))
    }

    /// Uses an existing pool. Configure it with a `busy_timeout` and foreign keys; WAL is
    /// recommended.
    pub fn from_pool(pool: SqlitePool) -> Self {
        Self {
            pool,
            writer: Arc::new(Mutex::new(())),
            full_windows: Arc::default(),
            leases: Arc::default(),
        }
    }

    /// Applies the embedded migrations (`migrations/sqlite`); safe to run on every start.
    pub async fn migrate(&self) -> Result<(), SetupError> {
        sqlx::migrate!("./migrations/sqlite")
            .run(&self.pool)
            .await?;
        // Orders stored before their earnings were kept (migration 20261123) are booked from
        // the orders themselves, with the one earnings rule of commerce-core.
        self.book_unbooked_orders().await?;
        Ok(())
    }

    /// The pool (for the application's own queries, health checks and tests).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    pub(crate) async fn write(&self) -> Result<Tx<Sqlite>, StoreError> {
        let guard = self.writer.clone().lock_owned().await;
        Tx::begin(&self.pool, "BEGIN IMMEDIATE", Some(guard)).await
    }

    pub(crate) async fn read(&self) -> Result<Tx<Sqlite>, StoreError> {
        Tx::begin(&self.pool, "BEGIN", None).await
    }
}

crate::imp::impl_store!(
    SqliteStore,
    Sqlite,
    SqliteConnection,
    for_update = "",
    instr = "instr",
    single_statement_tx = true,
    rate_slots = 1,
    timeline = "(SELECT json_group_array(json_array(status, at, reason)) FROM (SELECT status, at, reason FROM order_timeline t WHERE t.order_id = orders.id ORDER BY t.id)) AS timeline"
);
