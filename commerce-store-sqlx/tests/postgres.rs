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
);
