//! The store conformance suite and fault-injection tests on PostgreSQL, each test in a fresh
//! schema (dropped afterwards).
//!
//! Runs when `COMMERCE_TEST_POSTGRES_URL` (or `DATABASE_URL`) names a database the tests may
//! create schemas in, e.g.
//! `COMMERCE_TEST_POSTGRES_URL=postgres://postgres@127.0.0.1:5432/test cargo test -p commerce-store-sqlx`.
//! Without it every test is reported as ignored (see `build.rs`).

mod common;
mod pg;

use std::sync::Arc;

use commerce_core::model::{ChangePosition, NewCategory, NewProduct, ProductId, ProductPatch};
use commerce_core::store::prelude::*;
use commerce_core::testing::store_cases::TestStore;
use commerce_store_sqlx::sqlx::{self, PgPool};
use pg::{database_url, drop_schema, open};

async fn fresh_store() -> TestStore {
    let url = database_url();
    let (store, schema) = open(&url).await;
    let pool = store.pool().clone();
    TestStore::with_cleanup(Arc::new(store) as Arc<dyn Store>, async move {
        let mismatches = pg::counter_mismatches(&pool).await;
        drop_schema(&url, &[&pool], &schema).await;
        assert_eq!(mismatches, 0, "order counters out of step with the orders");
    })
}

commerce_core::store_conformance_tests!(
    #[cfg_attr(
        not(commerce_postgres_tests),
        ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
    )]
    fresh_store()
);

struct Db(PgPool);

impl common::Database for Db {
    pool_access!();
    fn fail_meter_sql(&self) -> &'static str {
        "CREATE OR REPLACE FUNCTION injected_failure() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$; \
         CREATE TRIGGER fail_meter BEFORE INSERT OR UPDATE ON meter_order_operations \
         FOR EACH ROW EXECUTE FUNCTION injected_failure();"
    }
    fn fail_event_sql(&self) -> &'static str {
        "CREATE OR REPLACE FUNCTION injected_failure() RETURNS trigger LANGUAGE plpgsql AS \
         $$ BEGIN RAISE EXCEPTION 'injected failure'; END $$; \
         CREATE TRIGGER fail_event BEFORE INSERT ON webhook_deliveries \
         FOR EACH ROW EXECUTE FUNCTION injected_failure();"
    }
    fn disarm_sql(&self) -> &'static str {
        "DROP TRIGGER IF EXISTS fail_meter ON meter_order_operations; \
         DROP TRIGGER IF EXISTS fail_event ON webhook_deliveries;"
    }
}

macro_rules! fault_tests {
    ($($case:ident),+ $(,)?) => {
        $(
            #[cfg_attr(not(commerce_postgres_tests), ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)")]
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $case() {
                let url = database_url();
                let (store, schema) = open(&url).await;
                let db = Db(store.pool().clone());
                common::$case(&store, &db).await;
                drop_schema(&url, &[&db.0], &schema).await;
            }
        )+
    };
}

fault_tests!(
    place_order_failing_at_its_last_write_leaves_nothing,
    cancel_failing_at_its_event_changes_nothing,
    closed_pool_surfaces_as_backend_errors,
    sub_piastre_amounts_are_refused,
    a_one_variant_order_is_written_by_one_statement,
);

/// Reads the change feed after `after` until every one of `wanted` is named (other tests'
/// transactions on the server may hold its head back a moment): the ids named, in order, and
/// where the last read ended.
async fn feed_until(
    store: &dyn Store,
    after: ChangePosition,
    wanted: &[ProductId],
) -> (Vec<ProductId>, ChangePosition) {
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(60);
    let mut named = Vec::new();
    let mut after = after;
    loop {
        let read = store.catalog_changes(Some(after), 100).await.expect("read");
        named.extend(read.changes.iter().map(|c| c.product_id));
        after = read.end;
        if !read.has_more && wanted.iter().all(|w| named.contains(w)) {
            return (named, after);
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{wanted:?} never named: {named:?}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
}

/// A writer that holds its transaction open (a raw session that updates a product, so that
/// the trigger writes its change, and does not commit) while a later writer commits through
/// the store: a read must not pass the held change (the later one, whose number is greater,
/// is not returned while the held one may still commit), and once the held one commits the
/// next read from the same position returns both, the held one first. A plain sequence would
/// have returned the later change and a cursor past the held one, which would never be read.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_held_writer_holds_the_change_feed_back_until_it_commits() {
    use commerce_core::chrono::{TimeZone, Utc};
    use commerce_store_sqlx::sqlx::{AssertSqlSafe, Connection, PgConnection};

    let url = database_url();
    let (store, schema) = open(&url).await;
    let now = Utc.with_ymd_and_hms(2026, 3, 1, 10, 0, 0).unwrap();
    let category = store
        .insert_category(NewCategory::new(
            "قسم".to_owned(),
            "kitchen".to_owned(),
            None,
        ))
        .await
        .expect("category");
    let product = |title: &'static str| {
        NewProduct::builder()
            .category_id(category.id)
            .title(title.to_owned())
            .slug(title.to_lowercase())
            .url("https://shop.example.com/p".to_owned())
            .build()
    };
    let held = store
        .insert_product(product("Held"), now)
        .await
        .expect("held");
    let later = store
        .insert_product(product("Later"), now)
        .await
        .expect("later");
    let (_, start) = feed_until(&store, ChangePosition::default(), &[held.id, later.id]).await;

    let mut writer = PgConnection::connect(&url).await.expect("connect");
    sqlx::raw_sql(AssertSqlSafe(format!(
        "BEGIN; UPDATE {schema}.products SET updated_at = updated_at + 1000 WHERE id = {}",
        held.id
    )))
    .execute(&mut writer)
    .await
    .expect("the held write");
    store
        .update_product(later.id, ProductPatch::default().set_title("Later 2"), now)
        .await
        .expect("the later write");
    for _ in 0..5 {
        let read = store.catalog_changes(Some(start), 100).await.expect("read");
        assert!(
            read.changes.is_empty(),
            "nothing past the held writer: {read:?}"
        );
        assert_eq!(read.end, start, "the position is not passed");
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    sqlx::raw_sql("COMMIT")
        .execute(&mut writer)
        .await
        .expect("commit");
    writer.close().await.ok();
    let (named, _) = feed_until(&store, start, &[held.id, later.id]).await;
    assert_eq!(
        named,
        [held.id, later.id],
        "the held change first, each once"
    );
    drop_schema(&url, &[store.pool()], &schema).await;
}

/// A store whose role has no rights on the identities' sequences places its orders by the
/// transaction (`common::an_order_is_placed_when_ids_cannot_be_drawn`): the role may read and
/// write the tables and the change feed's sequence, nothing more.
#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_order_is_placed_when_ids_cannot_be_drawn() {
    use std::str::FromStr;

    use commerce_store_sqlx::PgStore;
    use commerce_store_sqlx::sqlx::AssertSqlSafe;
    use commerce_store_sqlx::sqlx::postgres::PgConnectOptions;

    let url = database_url();
    let (admin, schema) = open(&url).await;
    let role = format!("{schema}_limited");
    sqlx::raw_sql(AssertSqlSafe(format!(
        "CREATE ROLE {role} LOGIN; GRANT USAGE ON SCHEMA {schema} TO {role}; \
         GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA {schema} TO {role}; \
         GRANT USAGE ON SEQUENCE {schema}.catalog_change_seq TO {role};"
    )))
    .execute(admin.pool())
    .await
    .expect("a role without rights on the identities (the test database's user needs CREATEROLE)");
    let options = PgConnectOptions::from_str(&url)
        .expect("PostgreSQL URL")
        .username(&role);
    let limited = PgStore::connect_with_schema(options, &schema)
        .await
        .expect("connect as the limited role");
    let db = Db(admin.pool().clone());
    common::an_order_is_placed_when_ids_cannot_be_drawn(&admin, &limited, &db).await;
    let admin_pool = admin.pool().clone();
    drop_schema(&url, &[limited.pool()], &schema).await;
    if let Ok(mut c) = admin_pool.acquire().await {
        let _ = sqlx::raw_sql(AssertSqlSafe(format!("DROP ROLE IF EXISTS {role}")))
            .execute(&mut *c)
            .await;
    }
    admin_pool.close().await;
}

#[path = "postgres/kept_keys.rs"]
mod kept_keys;

#[path = "postgres/priced_race.rs"]
mod priced_race;
