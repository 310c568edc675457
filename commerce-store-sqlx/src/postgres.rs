//! [`PgStore`]: the store in a PostgreSQL database, in a schema of its own.

use std::str::FromStr;

use sqlx::Postgres;
use sqlx::postgres::{PgConnectOptions, PgPool};

use crate::dialect::query_scalar;
use crate::migrations::{MIGRATIONS_TABLE, adopt_earlier_records, own_table, table_exists};
use crate::sql_store::SqlStore;
use crate::{PoolSettings, SetupError};

/// The schema the store's tables live in on PostgreSQL unless another is named
/// ([`PgStore::connect_with_schema`]).
pub const DEFAULT_SCHEMA: &str = "commerce";

/// The store in a PostgreSQL database.
///
/// Each operation is one `READ COMMITTED` transaction; concurrent operations are decided by
/// conditional updates, unique indexes and row locks (see the crate docs).
///
/// Its tables live in a schema of their own, [`DEFAULT_SCHEMA`] (`commerce`) unless another is
/// named: every connection of the store's pool is opened with `search_path` set to that schema
/// alone (a startup parameter, no extra round trip), and [`migrate`](Self::migrate) creates it
/// if missing. The application's own tables, and its own `_sqlx_migrations`, stay in its
/// schemas (`public`) untouched.
pub type PgStore = SqlStore<Postgres>;

impl SqlStore<Postgres> {
    /// Connects to `url` (`postgres://user:password@host:port/database`); the store's tables
    /// live in the schema [`DEFAULT_SCHEMA`] (`commerce`).
    pub async fn connect(url: &str) -> Result<Self, SetupError> {
        Self::connect_with(PgConnectOptions::from_str(url)?).await
    }

    /// Connects with these options; the store's tables live in the schema [`DEFAULT_SCHEMA`]
    /// (`commerce`). A `search_path` among the options' `options` is overridden: name the
    /// schema with [`connect_with_schema`](Self::connect_with_schema) instead.
    pub async fn connect_with(options: PgConnectOptions) -> Result<Self, SetupError> {
        Self::connect_with_schema(options, DEFAULT_SCHEMA).await
    }

    /// Connects with these options; the store's tables live in `schema` (created by
    /// [`migrate`](Self::migrate) if missing), with the default [`PoolSettings::postgres`].
    ///
    /// `schema` is a plain lower-case identifier: `[a-z_][a-z0-9_]*`, at most 63 bytes, not
    /// starting with `pg_`; anything else is refused with [`SetupError::InvalidSchema`]. Every
    /// connection of the store's pool has `search_path` set to that schema alone (appended to
    /// the options' `options`, so it overrides a `search_path` given there).
    pub async fn connect_with_schema(
        options: PgConnectOptions,
        schema: &str,
    ) -> Result<Self, SetupError> {
        Self::connect_with_settings(options, schema, PoolSettings::postgres()).await
    }

    /// As [`connect_with_schema`](Self::connect_with_schema), with these pool and session
    /// settings (pool size, acquire and idle timeouts, statement timeout: see
    /// [`PoolSettings`], also for sizing against the server's `max_connections`). The store
    /// keeps its own schema and [`migrate`](Self::migrate)'s checks, which
    /// [`from_pool`](Self::from_pool) skips.
    ///
    /// ```no_run
    /// # mod commerce { pub use commerce_core::*; pub mod sqlx { pub use commerce_store_sqlx::*; } }
    /// # async fn run() -> Result<(), commerce_store_sqlx::SetupError> {
    /// use std::time::Duration;
    /// use commerce::sqlx::{PgStore, PoolSettings};
    ///
    /// let options = "postgres://app@localhost/app".parse()?;
    /// let settings = PoolSettings::postgres()
    ///     .with_max_connections(20)
    ///     .with_statement_timeout(Some(Duration::from_secs(5)));
    /// let store = PgStore::connect_with_settings(options, "commerce", settings).await?;
    /// store.migrate().await?;
    /// # Ok(()) }
    /// ```
    pub async fn connect_with_settings(
        options: PgConnectOptions,
        schema: &str,
        settings: PoolSettings,
    ) -> Result<Self, SetupError> {
        check_schema(schema)?;
        // Quoted, so that a name that is also a keyword (`user`, `order`) means the schema.
        let options = options
            .options([("search_path", format!("\"{schema}\""))])
            .options(settings.session_parameters());
        let pool = settings
            .pool_options::<Postgres>()
            // sqlx pings every connection it hands out (a round trip per store call) unless
            // told not to; it still pings each connection on its way back to the pool, and a
            // connection that died while idle fails its next statement, which sqlx then
            // closes.
            .test_before_acquire(false)
            .connect_with(options)
            .await?;
        let mut store = Self::from_pool(pool);
        store.schema = Some(schema.into());
        store.owns_pool = true;
        Ok(store)
    }

    /// Uses an existing pool, as it is configured: the store's tables live where its
    /// connections' `search_path` puts new tables (its first schema, which must exist; e.g. a
    /// pool opened with `.options([("search_path", "commerce")])` after
    /// `CREATE SCHEMA commerce`). A pool shared with the application's own tables should not be
    /// used here: the store's table names (`orders`, `products`, ...) would meet the
    /// application's.
    pub fn from_pool(pool: PgPool) -> Self {
        Self::over(pool, false)
    }

    /// The schema the store was connected in ([`DEFAULT_SCHEMA`] unless named); `None` for a
    /// store over a pool given to [`from_pool`](Self::from_pool).
    pub fn schema(&self) -> Option<&str> {
        self.schema.as_deref()
    }

    /// Applies the embedded migrations (`migrations/postgres`) in the store's schema, creating
    /// the schema if missing; safe to run on every start, also by several instances at once
    /// (sqlx's migrator holds an advisory lock on the database).
    ///
    /// The applied migrations are recorded in [`MIGRATIONS_TABLE`] (`_commerce_migrations`) in
    /// that schema. A database migrated by an earlier version of this crate (tables in
    /// `public`, migrations recorded in `_sqlx_migrations`): opened in the schema that holds
    /// its tables (`connect_with_schema(options, "public")`), the store's rows of
    /// `_sqlx_migrations` are copied to `_commerce_migrations` once; opened in another schema
    /// that is still empty, `migrate` refuses with [`SetupError::TablesElsewhere`] rather than
    /// start an empty store next to the old one.
    pub async fn migrate(&self) -> Result<(), SetupError> {
        let mut migrator = own_table(sqlx::migrate!("./migrations/postgres"));
        if let Some(schema) = self.schema() {
            if schema != "public" && !table_exists(&self.pool, MIGRATIONS_TABLE).await? {
                self.refuse_tables_in_public(&migrator, schema).await?;
            }
            migrator.create_schema(format!("\"{schema}\""));
        }
        adopt_earlier_records(&self.pool, &migrator).await?;
        // Without the pool's statement timeout (a migration may rewrite a big table), on a
        // connection closed afterwards rather than pooled with that setting.
        let mut connection = self.pool.acquire().await?;
        connection.close_on_drop();
        sqlx::raw_sql("SET statement_timeout = 0")
            .execute(&mut *connection)
            .await?;
        migrator.run(&mut *connection).await?;
        drop(connection);
        // Orders stored before their earnings were kept (migration 20261123) are booked from
        // the orders themselves, with the one earnings rule of commerce-core.
        self.book_unbooked_orders().await?;
        Ok(())
    }

    /// Fails when `public._sqlx_migrations` records the store's first migration: the store's
    /// tables from before it had a schema of its own are there, not in `schema`.
    async fn refuse_tables_in_public(
        &self,
        migrator: &sqlx::migrate::Migrator,
        schema: &str,
    ) -> Result<(), SetupError> {
        let Some(first) = migrator.iter().next() else {
            return Ok(());
        };
        let legacy: Option<String> = query_scalar::<Postgres, Option<String>>(
            "SELECT CAST(to_regclass('public._sqlx_migrations') AS TEXT)",
        )
        .fetch_one(&self.pool)
        .await?;
        if legacy.is_none() {
            return Ok(());
        }
        let found: i64 = query_scalar::<Postgres, i64>(
            "SELECT COUNT(*) FROM public._sqlx_migrations WHERE version = $1 AND checksum = $2",
        )
        .bind(first.version)
        .bind(&*first.checksum)
        .fetch_one(&self.pool)
        .await?;
        if found > 0 {
            return Err(SetupError::TablesElsewhere {
                found: "public".into(),
                configured: schema.into(),
            });
        }
        Ok(())
    }

    /// The pool (for the application's own queries, health checks and tests). Its connections
    /// see the store's schema only.
    pub fn pool(&self) -> &PgPool {
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

/// Refuses a schema name that is not a plain lower-case identifier PostgreSQL accepts.
fn check_schema(schema: &str) -> Result<(), SetupError> {
    let mut chars = schema.chars();
    let plain = matches!(chars.next(), Some('a'..='z' | '_'))
        && chars.all(|c| matches!(c, 'a'..='z' | '0'..='9' | '_'))
        && schema.len() <= 63
        && !schema.starts_with("pg_");
    if plain {
        Ok(())
    } else {
        Err(SetupError::InvalidSchema(schema.into()))
    }
}

crate::dialect::sqlx_calls!(Postgres);

impl crate::dialect::Dialect for Postgres {
    const FOR_NO_KEY_UPDATE: &'static str = " FOR NO KEY UPDATE";
    const FOR_UPDATE: &'static str = " FOR UPDATE";
    const INSTR: &'static str = "strpos";
    const ONE_OF_SELECT: (&'static str, &'static str) = (" = ANY(ARRAY(", "))");
    const EXPLAIN: (&'static str, usize) = ("EXPLAIN ", 0);
    const FOLD_CASE: &'static str =
        "translate({}, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')";
    const SINGLE_STATEMENT_TX: bool = false;
    const WRITES_IN_WITH: bool = true;
    const GENERIC_PLANS: bool = true;
    const RATE_SLOTS: u32 = 8;
    const BEGIN_WRITE: &'static str = "BEGIN";
    const BEGIN_READ: &'static str = "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY";
    const TABLE_EXISTS: &'static str =
        "SELECT CAST(COUNT(*) AS BIGINT) FROM pg_catalog.pg_class WHERE oid = to_regclass($1)";
    const SERIALIZE_CLAIMS: Option<&'static str> =
        Some("SELECT pg_advisory_xact_lock(hashtext(current_schema() || '.webhook_claims'))");
    const CHANGES_FENCE: &'static str =
        "CAST(CAST(pg_snapshot_xmin(pg_current_snapshot()) AS TEXT) AS BIGINT)";
    const CHANGES_HEAD: &'static str = "fence.x, CAST(0 AS BIGINT)";
    const ROW_VERSIONS: bool = true;

    fn push_one_of(q: &mut sqlx::QueryBuilder<Self>, ids: &[i64]) {
        q.push(" = ANY(").push_bind(ids.to_vec()).push(")");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn schema_names_are_plain_identifiers() {
        for good in ["commerce", "_shop", "shop_2", "user", &"a".repeat(63)] {
            assert!(check_schema(good).is_ok(), "{good}");
        }
        let long = "a".repeat(64);
        for bad in [
            "", "2shop", "Shop", "shop-1", "shop.x", "shop x", "\"shop\"", "pg_shop", "ümlaut",
            &long,
        ] {
            assert!(
                matches!(check_schema(bad), Err(SetupError::InvalidSchema(_))),
                "{bad}"
            );
        }
    }
}
