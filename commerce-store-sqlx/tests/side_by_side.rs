//! The store next to an application's own tables and its own sqlx migrations in one database.
//!
//! PostgreSQL (each test in a database of its own, dropped afterwards): the application keeps
//! `public.orders` and `public._sqlx_migrations`; the store keeps its tables and
//! `_commerce_migrations` in the schema `commerce` (or the one it is given). SQLite: the store
//! wants its own file; sharing one with an application works as long as table names differ,
//! and each side keeps its own migration history; an application that wants the store's data
//! next to its own `orders` attaches the store's file.
//!
//! Also: a database migrated by an earlier version of the store (tables next to the
//! application's, migrations in `_sqlx_migrations`) is adopted, or refused with a clear error
//! when the store is pointed at another schema.

mod pg;
mod sqlite_file;

use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::sync::atomic::{AtomicU64, Ordering};

use commerce_core::store::prelude::*;
use commerce_core::testing::store_cases::place_order_round_trips_and_reserves_stock;
use commerce_store_sqlx::sqlx::migrate::Migrator;
use commerce_store_sqlx::sqlx::postgres::{PgConnectOptions, PgPoolOptions};
use commerce_store_sqlx::sqlx::sqlite::{SqliteConnectOptions, SqlitePoolOptions};
use commerce_store_sqlx::sqlx::{self, AssertSqlSafe, Connection, PgConnection, PgPool};
use commerce_store_sqlx::{DEFAULT_SCHEMA, MIGRATIONS_TABLE, PgStore, SetupError, SqliteStore};

/// How many migrations the store has (the same number of files for each database), counted
/// in the crate's `migrations/` (a new migration needs no change here).
fn store_migrations() -> i64 {
    let count = |db: &str| {
        std::fs::read_dir(
            PathBuf::from(env!("CARGO_MANIFEST_DIR"))
                .join("migrations")
                .join(db),
        )
        .expect("migrations directory")
        .filter(|entry| {
            entry
                .as_ref()
                .is_ok_and(|e| e.path().extension().is_some_and(|x| x == "sql"))
        })
        .count() as i64
    };
    let postgres = count("postgres");
    assert_eq!(postgres, count("sqlite"), "one migration per database");
    postgres
}

static NEXT: AtomicU64 = AtomicU64::new(0);

/// A unique name for this process and call (a database, a directory).
fn unique(tag: &str) -> String {
    format!(
        "commerce_{tag}_{}_{}",
        std::process::id(),
        NEXT.fetch_add(1, Ordering::SeqCst)
    )
}

/// A directory of the application's own migrations: one, creating its own `orders` table.
fn app_migrations(table: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(unique("app_migrations"));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("1_app_orders.sql"),
        format!("CREATE TABLE {table} (id BIGINT PRIMARY KEY, note TEXT NOT NULL);"),
    )
    .unwrap();
    dir
}

/// The store's own migrations, as an earlier version of the crate applied them (recorded in
/// sqlx's default `_sqlx_migrations`).
async fn earlier_migrator(backend: &str) -> Migrator {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("migrations")
        .join(backend);
    Migrator::new(dir).await.expect("store migrations read")
}

// ---------------------------------------------------------------------------------------
// PostgreSQL
// ---------------------------------------------------------------------------------------

/// A new, empty database on the test server: its connect options and name.
async fn fresh_database(url: &str) -> (PgConnectOptions, String) {
    let name = unique("side_by_side");
    let mut admin = PgConnection::connect(url)
        .await
        .expect("connect PostgreSQL");
    sqlx::raw_sql(AssertSqlSafe(format!("CREATE DATABASE {name}")))
        .execute(&mut admin)
        .await
        .expect("create database");
    admin.close().await.ok();
    let options = PgConnectOptions::from_str(url)
        .expect("PostgreSQL URL")
        .database(&name);
    (options, name)
}

async fn drop_database(url: &str, pools: &[&PgPool], name: &str) {
    for pool in pools {
        pool.close().await;
    }
    if let Ok(mut admin) = PgConnection::connect(url).await {
        let _ = sqlx::raw_sql(AssertSqlSafe(format!(
            "DROP DATABASE IF EXISTS {name} WITH (FORCE)"
        )))
        .execute(&mut admin)
        .await;
        let _ = admin.close().await;
    }
}

async fn pg_count(pool: &PgPool, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.expect(sql)
}

#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_store_lives_next_to_an_apps_own_tables_and_migrations() {
    let url = pg::database_url();
    let (options, name) = fresh_database(&url).await;
    // The application: its own pool (default search_path), its own migrations, its own
    // `orders`.
    let app = PgPoolOptions::new()
        .max_connections(2)
        .connect_with(options.clone())
        .await
        .unwrap();
    let app_migrator = Migrator::new(app_migrations("orders")).await.unwrap();
    app_migrator.run(&app).await.expect("the app migrates");
    sqlx::query("INSERT INTO orders (id, note) VALUES (1, 'the app''s order')")
        .execute(&app)
        .await
        .unwrap();

    // The store in the same database, opened the default way.
    let store = PgStore::connect_with(options.clone()).await.unwrap();
    assert_eq!(store.schema(), Some(DEFAULT_SCHEMA));
    store
        .migrate()
        .await
        .expect("the store migrates next to the app");
    place_order_round_trips_and_reserves_stock(&store).await;
    store.migrate().await.expect("migrating again is a no-op");

    // Both sides see their own tables.
    let note: String = sqlx::query_scalar("SELECT note FROM orders WHERE id = 1")
        .fetch_one(&app)
        .await
        .unwrap();
    assert_eq!(note, "the app's order");
    assert_eq!(
        pg_count(&app, "SELECT COUNT(*) FROM public.orders").await,
        1
    );
    let placed = pg_count(store.pool(), "SELECT COUNT(*) FROM orders").await;
    assert!(placed > 0);
    assert_eq!(
        pg_count(&app, "SELECT COUNT(*) FROM commerce.orders").await,
        placed
    );
    // Each side's migrations in its own table: the app's `_sqlx_migrations` lists only its
    // migration; the store's are in `commerce._commerce_migrations`; neither table is in the
    // other's place.
    let app_versions: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM public._sqlx_migrations ORDER BY version")
            .fetch_all(&app)
            .await
            .unwrap();
    assert_eq!(app_versions, vec![1]);
    let store_versions: i64 = pg_count(
        &app,
        "SELECT COUNT(*) FROM commerce._commerce_migrations WHERE success",
    )
    .await;
    assert_eq!(store_versions, store_migrations());
    assert_eq!(
        pg_count(
            &app,
            "SELECT COUNT(*) FROM pg_tables WHERE (schemaname, tablename) IN \
             (('commerce', '_sqlx_migrations'), ('public', '_commerce_migrations'))"
        )
        .await,
        0
    );
    assert_eq!(MIGRATIONS_TABLE, "_commerce_migrations");
    // The app migrates again after the store (nothing new, nothing missing).
    app_migrator
        .run(&app)
        .await
        .expect("the app migrates again");

    drop_database(&url, &[&app, store.pool()], &name).await;
}

#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_stores_in_named_schemas_are_apart_and_created_when_missing() {
    let url = pg::database_url();
    let (options, name) = fresh_database(&url).await;
    // `user` is a keyword: the schema name is quoted wherever it is used.
    let first = PgStore::connect_with_schema(options.clone(), "user")
        .await
        .unwrap();
    first.migrate().await.expect("schema created and migrated");
    let second = PgStore::connect_with_schema(options.clone(), "shop_2")
        .await
        .unwrap();
    second.migrate().await.unwrap();
    place_order_round_trips_and_reserves_stock(&first).await;
    assert!(pg_count(first.pool(), "SELECT COUNT(*) FROM orders").await > 0);
    assert_eq!(
        pg_count(second.pool(), "SELECT COUNT(*) FROM orders").await,
        0
    );
    assert_eq!(
        pg_count(
            first.pool(),
            "SELECT COUNT(*) FROM \"user\"._commerce_migrations"
        )
        .await,
        store_migrations()
    );
    // Nothing in public.
    assert_eq!(
        pg_count(
            first.pool(),
            "SELECT COUNT(*) FROM pg_tables WHERE schemaname = 'public'"
        )
        .await,
        0
    );
    drop_database(&url, &[first.pool(), second.pool()], &name).await;
}

#[tokio::test]
async fn postgres_schema_names_are_checked_before_connecting() {
    // Nothing listens on port 1: the name is refused before any connection is tried.
    let options = PgConnectOptions::from_str("postgres://nobody@127.0.0.1:1/none").unwrap();
    for bad in ["Commerce", "my-shop", "a;DROP", "pg_shop", ""] {
        let refused = PgStore::connect_with_schema(options.clone(), bad).await;
        assert!(
            matches!(refused, Err(SetupError::InvalidSchema(ref n)) if n == bad),
            "{bad}: {refused:?}"
        );
    }
}

#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_database_migrated_before_the_schema_of_its_own() {
    let url = pg::database_url();
    let (options, name) = fresh_database(&url).await;
    // As an earlier version left it: the store's tables in public, its migrations recorded in
    // public._sqlx_migrations, a governorate stored.
    let plain = PgPoolOptions::new()
        .max_connections(2)
        .connect_with(options.clone())
        .await
        .unwrap();
    earlier_migrator("postgres")
        .await
        .run(&plain)
        .await
        .expect("earlier migrations");
    let governorate = PgStore::from_pool(plain.clone())
        .insert_governorate("Cairo".into())
        .await
        .unwrap();

    // Opened the default way, the store refuses to start empty in `commerce`.
    let moved = PgStore::connect_with(options.clone()).await.unwrap();
    let refused = moved.migrate().await;
    assert!(
        matches!(
            refused,
            Err(SetupError::TablesElsewhere { ref found, ref configured })
                if found == "public" && configured == DEFAULT_SCHEMA
        ),
        "{refused:?}"
    );
    assert_eq!(
        pg_count(
            &plain,
            "SELECT COUNT(*) FROM pg_namespace WHERE nspname = 'commerce'"
        )
        .await,
        0,
        "nothing created"
    );

    // Opened in public, its records are adopted and nothing runs twice.
    let store = PgStore::connect_with_schema(options.clone(), "public")
        .await
        .unwrap();
    store.migrate().await.expect("earlier records adopted");
    store.migrate().await.unwrap();
    assert_eq!(store.governorates().await.unwrap(), vec![governorate]);
    assert_eq!(
        pg_count(&plain, "SELECT COUNT(*) FROM public._commerce_migrations").await,
        store_migrations()
    );
    place_order_round_trips_and_reserves_stock(&store).await;

    drop_database(&url, &[&plain, moved.pool(), store.pool()], &name).await;
}

// ---------------------------------------------------------------------------------------
// SQLite
// ---------------------------------------------------------------------------------------

async fn sqlite_count(pool: &sqlx::SqlitePool, sql: &'static str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.expect(sql)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_store_shares_a_file_with_an_apps_own_migrations() {
    let path = sqlite_file::temp_path("shared");
    sqlite_file::remove_files(&path);
    let file = SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true);
    let app = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(file.clone())
        .await
        .unwrap();
    let app_migrator = Migrator::new(app_migrations("app_orders")).await.unwrap();
    app_migrator.run(&app).await.expect("the app migrates");
    sqlx::query("INSERT INTO app_orders (id, note) VALUES (1, 'mine')")
        .execute(&app)
        .await
        .unwrap();

    let store = SqliteStore::connect_with(file.clone()).await.unwrap();
    store
        .migrate()
        .await
        .expect("the store migrates next to the app");
    place_order_round_trips_and_reserves_stock(&store).await;
    store.migrate().await.unwrap();
    app_migrator
        .run(&app)
        .await
        .expect("the app migrates again");

    let versions: Vec<i64> =
        sqlx::query_scalar("SELECT version FROM _sqlx_migrations ORDER BY version")
            .fetch_all(&app)
            .await
            .unwrap();
    assert_eq!(
        versions,
        vec![1],
        "the app's history holds only the app's migration"
    );
    assert_eq!(
        sqlite_count(
            &app,
            "SELECT COUNT(*) FROM _commerce_migrations WHERE success"
        )
        .await,
        store_migrations()
    );
    assert_eq!(
        sqlite_count(&app, "SELECT COUNT(*) FROM app_orders").await,
        1
    );
    assert!(sqlite_count(&app, "SELECT COUNT(*) FROM orders").await > 0);

    app.close().await;
    store.pool().close().await;
    sqlite_file::remove_files(&path);
}

/// The way to keep an application's own `orders` and the store's in one SQLite connection:
/// the store in its own file, attached to the application's under a schema name.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_app_with_its_own_orders_attaches_the_stores_file() {
    let (store, store_path) = sqlite_file::open("attached").await;
    place_order_round_trips_and_reserves_stock(&store).await;

    let app_path = sqlite_file::temp_path("app");
    sqlite_file::remove_files(&app_path);
    let app = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(
            SqliteConnectOptions::new()
                .filename(&app_path)
                .create_if_missing(true),
        )
        .await
        .unwrap();
    Migrator::new(app_migrations("orders"))
        .await
        .unwrap()
        .run(&app)
        .await
        .unwrap();
    sqlx::query("INSERT INTO orders (id, note) VALUES (1, 'mine'), (2, 'mine too')")
        .execute(&app)
        .await
        .unwrap();
    sqlx::query("ATTACH DATABASE $1 AS commerce")
        .bind(store_path.display().to_string())
        .execute(&app)
        .await
        .unwrap();
    assert_eq!(
        sqlite_count(&app, "SELECT COUNT(*) FROM main.orders").await,
        2
    );
    assert_eq!(
        sqlite_count(&app, "SELECT COUNT(*) FROM commerce.orders").await,
        sqlite_count(store.pool(), "SELECT COUNT(*) FROM orders").await
    );
    assert_eq!(
        sqlite_count(&app, "SELECT COUNT(*) FROM main._sqlx_migrations").await,
        1
    );

    app.close().await;
    store.pool().close().await;
    sqlite_file::remove_files(&app_path);
    sqlite_file::remove_files(&store_path);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_file_migrated_by_an_earlier_version_is_adopted() {
    let path = sqlite_file::temp_path("earlier");
    sqlite_file::remove_files(&path);
    let file = SqliteConnectOptions::new()
        .filename(&path)
        .create_if_missing(true)
        .foreign_keys(true);
    let plain = SqlitePoolOptions::new()
        .max_connections(1)
        .connect_with(file.clone())
        .await
        .unwrap();
    earlier_migrator("sqlite")
        .await
        .run(&plain)
        .await
        .expect("earlier migrations");
    let governorate = SqliteStore::from_pool(plain.clone())
        .insert_governorate("Cairo".into())
        .await
        .unwrap();
    plain.close().await;

    let store = SqliteStore::connect_with(file).await.unwrap();
    store.migrate().await.expect("earlier records adopted");
    store.migrate().await.unwrap();
    assert_eq!(store.governorates().await.unwrap(), vec![governorate]);
    assert_eq!(
        sqlite_count(store.pool(), "SELECT COUNT(*) FROM _commerce_migrations").await,
        store_migrations()
    );
    place_order_round_trips_and_reserves_stock(&store).await;
    store.pool().close().await;
    sqlite_file::remove_files(&path);
}
