//! [`PgStore`]: the store in a PostgreSQL database.

use std::str::FromStr;

use sqlx::Postgres;
use sqlx::postgres::{PgConnectOptions, PgPool, PgPoolOptions};

use crate::SetupError;
use crate::sql_store::SqlStore;

/// The store in a PostgreSQL database.
///
/// Each operation is one `READ COMMITTED` transaction; concurrent operations are decided by
/// conditional updates, unique indexes and row locks (see the crate docs).
pub type PgStore = SqlStore<Postgres>;

impl SqlStore<Postgres> {
    /// Connects to `url` (`postgres://user:password@host:port/database`).
    pub async fn connect(url: &str) -> Result<Self, SetupError> {
        Self::connect_with(PgConnectOptions::from_str(url)?).await
    }

    /// Connects with these options (e.g. with `.options([("search_path", "my_schema")])`).
    pub async fn connect_with(options: PgConnectOptions) -> Result<Self, SetupError> {
        let pool = PgPoolOptions::new()
            .max_connections(10)
            // sqlx pings every connection it hands out (a round trip per store call) unless
            // told not to; it still pings each connection on its way back to the pool, and a
            // connection that died while idle fails its next statement, which sqlx then
            // closes.
            .test_before_acquire(false)
            .connect_with(options)
            .await?;
        Ok(Self::from_pool(pool))
    }

    /// Uses an existing pool.
    pub fn from_pool(pool: PgPool) -> Self {
        Self::over(pool, false)
    }

    /// Applies the embedded migrations (`migrations/postgres`) to the pool's current schema;
    /// safe to run on every start.
    pub async fn migrate(&self) -> Result<(), SetupError> {
        sqlx::migrate!("./migrations/postgres")
            .run(&self.pool)
            .await?;
        // Orders stored before their earnings were kept (migration 20261123) are booked from
        // the orders themselves, with the one earnings rule of commerce-core.
        self.book_unbooked_orders().await?;
        Ok(())
    }

    /// The pool (for the application's own queries, health checks and tests).
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }
}

crate::dialect::sqlx_calls!(Postgres);

impl crate::dialect::Dialect for Postgres {
    const FOR_UPDATE: &'static str = " FOR UPDATE";
    const INSTR: &'static str = "strpos";
    const SINGLE_STATEMENT_TX: bool = false;
    const RATE_SLOTS: u32 = 8;
    const TIMELINE: &'static str = "(SELECT CAST(json_agg(json_build_array(t.status, t.at, t.reason) ORDER BY t.id) AS TEXT) FROM order_timeline t WHERE t.order_id = orders.id) AS timeline";
    const BEGIN_WRITE: &'static str = "BEGIN";
    const BEGIN_READ: &'static str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
}
