//! The store's embedded migrations and the table that records them: [`MIGRATIONS_TABLE`], not
//! sqlx's default `_sqlx_migrations`, so that an application running its own
//! `sqlx::migrate!()` on the same database keeps its own history.
//!
//! A database migrated by an earlier version of this crate recorded the store's migrations in
//! `_sqlx_migrations`; [`adopt_earlier_records`] copies those rows (and only those: same version
//! and checksum as one of the store's migrations) into the store's own table once, so the
//! migrator does not run them again.

use sqlx::Pool;
use sqlx::migrate::{Migrate, Migrator};
use sqlx::pool::PoolConnection;

use crate::SetupError;
use crate::dialect::{Dialect, query, query_scalar};

/// The table in which the store records the migrations it applied (in the store's schema on
/// PostgreSQL, in the database file on SQLite). sqlx's default, `_sqlx_migrations`, is left to
/// the application.
pub const MIGRATIONS_TABLE: &str = "_commerce_migrations";

/// sqlx's default migrations table, where earlier versions of the store recorded theirs.
pub(crate) const SQLX_TABLE: &str = "_sqlx_migrations";

/// Copies the store's own rows from `_sqlx_migrations` to [`MIGRATIONS_TABLE`], when the latter
/// does not exist yet and the former does (in the same place: the store's schema, or the
/// SQLite database). Returns how many rows were copied.
///
/// Only rows whose version and checksum equal one of the store's migrations are copied: an
/// application's own migrations in the same table stay where they are, and are not seen by the
/// store's migrator.
pub(crate) async fn adopt_earlier_records<DB>(
    pool: &Pool<DB>,
    migrator: &Migrator,
) -> Result<u64, SetupError>
where
    DB: Dialect,
    DB::Connection: Migrate,
{
    if table_exists(pool, MIGRATIONS_TABLE).await? || !table_exists(pool, SQLX_TABLE).await? {
        return Ok(0);
    }
    let mut connection = pool.acquire().await?;
    // Under the migrator's own lock (PostgreSQL: a session advisory lock on the database;
    // SQLite: none), so that another instance's migrator never sees the new table half
    // filled. The connection is closed rather than pooled afterwards (also when this future is
    // dropped mid-way), which releases the lock with the session.
    connection.close_on_drop();
    connection.lock().await?;
    copy_records(pool, &mut connection, migrator).await
}

/// Creates [`MIGRATIONS_TABLE`] and copies the store's rows into it, unless another instance
/// did it first.
async fn copy_records<DB>(
    pool: &Pool<DB>,
    connection: &mut PoolConnection<DB>,
    migrator: &Migrator,
) -> Result<u64, SetupError>
where
    DB: Dialect,
    DB::Connection: Migrate,
{
    if table_exists(pool, MIGRATIONS_TABLE).await? {
        return Ok(0);
    }
    connection.ensure_migrations_table(MIGRATIONS_TABLE).await?;
    let mut copied = 0;
    for migration in migrator.iter() {
        if migration.migration_type.is_down_migration() {
            continue;
        }
        copied += query::<DB>(
            "INSERT INTO _commerce_migrations \
             (version, description, installed_on, success, checksum, execution_time) \
             SELECT version, description, installed_on, success, checksum, execution_time \
             FROM _sqlx_migrations WHERE version = $1 AND checksum = $2 \
             ON CONFLICT DO NOTHING",
        )
        .bind(migration.version)
        .bind(&*migration.checksum)
        .execute(&mut *connection)
        .await?
        .rows_affected();
    }
    Ok(copied)
}

/// Whether `table` exists where the store's unqualified table names resolve.
pub(crate) async fn table_exists<DB: Dialect>(
    pool: &Pool<DB>,
    table: &str,
) -> Result<bool, sqlx::Error> {
    let found: i64 = query_scalar::<DB, i64>(DB::TABLE_EXISTS)
        .bind(table)
        .fetch_one(pool)
        .await?;
    Ok(found > 0)
}

/// `migrator` recording its migrations in [`MIGRATIONS_TABLE`].
pub(crate) fn own_table(mut migrator: Migrator) -> Migrator {
    migrator.dangerous_set_table_name(MIGRATIONS_TABLE);
    migrator
}
