//! The version check of PostgreSQL's one-statement checkout against an edit that commits while
//! the order waits for its variant's row: the order compares the product's revision on the
//! product's row in the change feed, which it locks and reads as last committed, so the edit
//! is seen and the order is refused as `Stale`, writing nothing.

use std::sync::Arc;
use std::time::Duration;

use commerce_core::model::{PricedFrom, ProductPatch};
use commerce_core::store::PlaceOrderError;
use commerce_core::store::prelude::*;
use commerce_store_sqlx::sqlx::{self, AssertSqlSafe, Connection, PgConnection};

use super::Db;
use super::common::{fixture, order, snapshot};
use super::pg::{database_url, drop_schema, open};

/// How many sessions of the store's schema wait for a lock now.
async fn waiting_for_a_lock(pool: &sqlx::PgPool) -> i64 {
    sqlx::query_scalar(
        "SELECT COUNT(*) FROM pg_stat_activity \
         WHERE wait_event_type = 'Lock' AND query LIKE 'WITH placed%'",
    )
    .fetch_one(pool)
    .await
    .expect("pg_stat_activity")
}

#[cfg_attr(
    not(commerce_postgres_tests),
    ignore = "needs COMMERCE_TEST_POSTGRES_URL (see README)"
)]
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_committed_while_the_order_waits_makes_it_stale() {
    let url = database_url();
    let (store, schema) = open(&url).await;
    let store = Arc::new(store);
    let f = fixture(store.as_ref()).await;
    let product = store.product(f.product.id).await.unwrap().unwrap();
    let db = Db(store.pool().clone());
    let before = snapshot(store.as_ref(), &db, &f).await;
    let mut priced = order(&f, "EG-RACE0001", 2);
    priced.priced_from = vec![PricedFrom::of(&product, &product.variants[0])];

    // Another session holds the variant's row, so the order's statement waits for it.
    let mut holder = PgConnection::connect(&url).await.expect("connect");
    sqlx::raw_sql(AssertSqlSafe(format!(
        "BEGIN; SELECT 1 FROM {schema}.variants WHERE id = {} FOR UPDATE",
        f.variant.id
    )))
    .execute(&mut holder)
    .await
    .expect("hold the variant");
    let placing = tokio::spawn({
        let store = store.clone();
        async move { store.place_order(priced).await }
    });
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while waiting_for_a_lock(store.pool()).await == 0 {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the order never waited for the variant"
        );
        tokio::task::yield_now().await;
    }

    // The edit commits while the order waits (it locks the product's rows, not the variant's).
    let edited = store
        .update_product(
            f.product.id,
            ProductPatch::default().set_title("Kettle 2"),
            product.updated_at,
        )
        .await
        .expect("the edit");
    assert!(edited.revision > product.revision);
    sqlx::raw_sql("COMMIT")
        .execute(&mut holder)
        .await
        .expect("release the variant");
    holder.close().await.ok();

    match placing.await.expect("the order's task") {
        Err(PlaceOrderError::Stale { variant_id }) => assert_eq!(variant_id, f.variant.id),
        other => panic!("expected Stale, got {other:?}"),
    }
    assert_eq!(
        snapshot(store.as_ref(), &db, &f).await,
        before,
        "the refused order wrote nothing: stock, orders, lines, meter, counters"
    );
    drop_schema(&url, &[store.pool()], &schema).await;
}
