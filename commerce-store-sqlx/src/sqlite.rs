//! [`SqliteStore`]: the store in an SQLite database.

use std::str::FromStr;
use std::time::Duration;

use sqlx::Sqlite;
use sqlx::sqlite::{
    SqliteConnectOptions, SqliteJournalMode, SqlitePool, SqlitePoolOptions, SqliteSynchronous,
};

use crate::migrations::{adopt_earlier_records, own_table};
use crate::sql_store::SqlStore;
use crate::{PoolSettings, SetupError};

/// Each connection's page cache (`PRAGMA cache_size`, negative: in KiB): 16 MiB, not SQLite's
/// 2 MiB, so that the pages a back-office page reads (its rows, their lines and timelines,
/// scattered through a file of several hundred MB) stay cached between calls.
const CACHE_SIZE: &str = "-16384";

/// How much of the database file each connection reads through a memory map
/// (`PRAGMA mmap_size`, bytes): 256 MiB. Mapped pages are the operating system's page cache,
/// shared by every connection, read without a copy into SQLite's own cache.
const MMAP_SIZE: &str = "268435456";

/// The store in an SQLite database (one file, or memory).
///
/// The store wants a database file of its own: its tables have plain names (`orders`,
/// `products`, ...), so an application's table of the same name in the same file would meet
/// them (see the crate docs, "Where the tables live"). Its migrations are recorded in
/// [`MIGRATIONS_TABLE`](crate::MIGRATIONS_TABLE), not in sqlx's `_sqlx_migrations`.
///
/// Writes are serialised by an in-process lock and `BEGIN IMMEDIATE`, so each operation is
/// isolated and concurrent callers wait instead of failing with `SQLITE_BUSY`; reads run
/// concurrently in WAL mode. Several processes may share a file: `busy_timeout` (5 s) makes
/// them wait for each other's writes.
pub type SqliteStore = SqlStore<Sqlite>;

impl SqlStore<Sqlite> {
    /// Opens (creating if missing) the database at `url` (`sqlite://path.db`,
    /// `sqlite::memory:`) with WAL, `busy_timeout` 5 s and foreign keys on, a 16 MiB page
    /// cache (`cache_size`) and the first 256 MiB of the file memory-mapped (`mmap_size`) on
    /// each connection.
    pub async fn connect(url: &str) -> Result<Self, SetupError> {
        let options = SqliteConnectOptions::from_str(url)?;
        Self::connect_with(options).await
    }

    /// Opens the database with these options (WAL, `busy_timeout`, foreign keys, `cache_size`
    /// and `mmap_size` are added, see [`connect`](Self::connect)) and the default
    /// [`PoolSettings::sqlite`]. For other `cache_size` or `mmap_size` values, build the pool
    /// yourself and use [`from_pool`](Self::from_pool).
    ///
    /// An in-memory database lives in one connection, so its pool holds exactly one.
    pub async fn connect_with(options: SqliteConnectOptions) -> Result<Self, SetupError> {
        Self::connect_with_settings(options, PoolSettings::sqlite()).await
    }

    /// As [`connect_with`](Self::connect_with), with these pool settings (size, acquire and
    /// idle timeouts; see [`PoolSettings`]). The statement timeouts are PostgreSQL's and
    /// ignored here: `busy_timeout` (5 s) bounds how long a write waits for another process's.
    /// An in-memory database keeps its one connection whatever the settings say.
    pub async fn connect_with_settings(
        options: SqliteConnectOptions,
        settings: PoolSettings,
    ) -> Result<Self, SetupError> {
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
            .synchronous(SqliteSynchronous::Normal)
            .pragma("cache_size", CACHE_SIZE)
            .pragma("mmap_size", MMAP_SIZE);
        let pool = if in_memory {
            SqlitePoolOptions::new()
                .min_connections(1)
                .max_connections(1)
                .idle_timeout(None)
                .max_lifetime(None)
                .connect_with(options)
                .await?
        } else {
            // No ping before handing out an idle connection: a file does not hang up, and on
            // SQLite each ping is a round trip to the connection's worker thread, as dear as
            // a small statement (sqlx still pings once when a connection goes back).
            settings
                .pool_options::<Sqlite>()
                .test_before_acquire(false)
                .connect_with(options)
                .await?
        };
        let mut store = Self::from_pool(pool);
        store.owns_pool = true;
        Ok(store)
    }

    /// Uses an existing pool. Configure it with a `busy_timeout` and foreign keys; WAL is
    /// recommended.
    pub fn from_pool(pool: SqlitePool) -> Self {
        Self::over(pool, true)
    }

    /// Applies the embedded migrations (`migrations/sqlite`); safe to run on every start.
    ///
    /// The applied migrations are recorded in [`MIGRATIONS_TABLE`](crate::MIGRATIONS_TABLE) (`_commerce_migrations`),
    /// so an application's own `sqlx::migrate!()` on the same file keeps `_sqlx_migrations`
    /// to itself. A file migrated by an earlier version of this crate (which recorded them in
    /// `_sqlx_migrations`) has the store's rows copied over once.
    pub async fn migrate(&self) -> Result<(), SetupError> {
        let migrator = own_table(sqlx::migrate!("./migrations/sqlite"));
        adopt_earlier_records(&self.pool, &migrator).await?;
        migrator.run(&self.pool).await?;
        // Orders stored before their earnings were kept (migration 20261123) are booked from
        // the orders themselves, with the one earnings rule of commerce-core.
        self.book_unbooked_orders().await?;
        Ok(())
    }

    /// The pool (for the application's own queries, health checks and tests).
    pub fn pool(&self) -> &SqlitePool {
        &self.pool
    }

    /// The plans of a back-office query's statements, built exactly as the store runs them
    /// (the benches print them to show which index serves each query).
    #[doc(hidden)]
    pub async fn explain(
        &self,
        what: crate::Explain<'_>,
    ) -> Result<Vec<String>, commerce_core::store::StoreError> {
        crate::back_office::explain(self, what).await
    }
}

crate::dialect::sqlx_calls!(Sqlite);

impl crate::dialect::Dialect for Sqlite {
    const FOR_NO_KEY_UPDATE: &'static str = "";
    const FOR_UPDATE: &'static str = "";
    const INSTR: &'static str = "instr";
    const ONE_OF_SELECT: (&'static str, &'static str) = (" IN (", ")");
    const FOLD_CASE: &'static str = "lower({})";
    const EXPLAIN: (&'static str, usize) = ("EXPLAIN QUERY PLAN ", 3);
    const SINGLE_STATEMENT_TX: bool = true;
    const WRITES_IN_WITH: bool = false;
    const GENERIC_PLANS: bool = false;
    const RATE_SLOTS: u32 = 1;
    const BEGIN_WRITE: &'static str = "BEGIN IMMEDIATE";
    const BEGIN_READ: &'static str = "BEGIN";
    const TABLE_EXISTS: &'static str =
        "SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name = $1";
    const SERIALIZE_CLAIMS: Option<&'static str> = None;
    const CHANGES_FENCE: &'static str = "9223372036854775807";
    const CHANGES_HEAD: &'static str = "CAST(0 AS BIGINT), \
        COALESCE((SELECT seq FROM catalog_changes ORDER BY txid DESC, seq DESC LIMIT 1), 0)";
    const ROW_VERSIONS: bool = false;

    fn push_one_of(q: &mut sqlx::QueryBuilder<Self>, ids: &[i64]) {
        q.push(" IN (");
        crate::push_list(q, ids);
        q.push(")");
    }
}
