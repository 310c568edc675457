//! The catalogue change feed (`CatalogStore::catalog_changes`): the rows the triggers of
//! migration `20261217000000_catalog_changes` write on every change of a product (and, on
//! PostgreSQL, the one-statement checkout for the stock it takes, without writing the
//! product's row: migration `20261219000000_stock_changes_off_products`), read in position
//! order behind the dialect's fence. A product's row here also carries its `updated_at` as
//! read (`at`).
//!
//! The read is one statement, so its fence and its rows come from one snapshot: on
//! PostgreSQL the fence is the snapshot's xmin (only the rows of transactions that have all
//! ended are returned, so none can appear later behind the last one returned; a transaction
//! held open anywhere on the server holds the feed's head back, delaying changes, never losing
//! them); on SQLite, whose writers are serialised and number their rows in commit order,
//! there is none. A last row, with no product, carries the feed's head as the read saw it.

use commerce_core::model::*;

use crate::dialect::*;
use crate::rows::{ChangeRow, backend, corrupt, instant};
use crate::sql_store::*;

/// A new change's position on PostgreSQL, as the feed's trigger on `products` writes it
/// (migrations `20261217000000_catalog_changes` and `20261219000000_stock_changes_off_products`):
/// the writing transaction's id and the next number of `catalog_change_seq` (the columns
/// `txid, seq`).
pub(crate) const FEED_POSITION: &str =
    "CAST(CAST(pg_current_xact_id() AS TEXT) AS BIGINT), nextval('catalog_change_seq')";

/// The position of the newest change behind the fence (one step of the position index).
pub(crate) async fn newest<DB: Dialect>(
    store: &SqlStore<DB>,
) -> StoreResult<Option<ChangePosition>> {
    let sql = format!(
        "WITH fence AS (SELECT CAST({fence} AS BIGINT) AS x) \
         SELECT c.txid, c.seq FROM catalog_changes c, fence WHERE c.txid < fence.x \
         ORDER BY c.txid DESC, c.seq DESC LIMIT 1",
        fence = DB::CHANGES_FENCE,
    );
    let row: Option<(i64, i64)> = query_as::<DB, (i64, i64)>(sqlx::AssertSqlSafe(sql))
        .fetch_optional(&store.pool)
        .await
        .map_err(backend)?;
    Ok(row.map(|(txid, seq)| ChangePosition::new(txid, seq)))
}

/// Reads at most `limit` changes after `after`, in feed order.
pub(crate) async fn read<DB: Dialect>(
    store: &SqlStore<DB>,
    after: Option<ChangePosition>,
    limit: usize,
) -> StoreResult<CatalogChanges> {
    let from = after.unwrap_or_default();
    let sql = format!(
        "WITH fence AS (SELECT CAST({fence} AS BIGINT) AS x) \
         SELECT product_id, kind, at, txid, seq FROM (\
           SELECT c.product_id, c.kind, c.at, c.txid, c.seq FROM catalog_changes c, fence \
           WHERE c.txid < fence.x AND (c.txid, c.seq) > ($1, $2) \
           ORDER BY c.txid, c.seq LIMIT $3) AS page \
         UNION ALL SELECT NULL, NULL, NULL, {head} FROM fence",
        fence = DB::CHANGES_FENCE,
        head = DB::CHANGES_HEAD,
    );
    let take = i64::try_from(limit.saturating_add(1)).unwrap_or(i64::MAX);
    let rows: Vec<ChangeRow> = query_as::<DB, ChangeRow>(sqlx::AssertSqlSafe(sql))
        .bind(from.high())
        .bind(from.low())
        .bind(take)
        .fetch_all(&store.pool)
        .await
        .map_err(backend)?;
    let mut head = ChangePosition::default();
    let mut changes = Vec::with_capacity(rows.len());
    for row in rows {
        let position = ChangePosition::new(row.txid, row.seq);
        match (row.product_id, row.kind, row.at) {
            (Some(id), Some(kind), Some(at)) => {
                let kind = ChangeKind::parse(&kind)
                    .ok_or_else(|| corrupt(format!("unknown change kind {kind}")))?;
                changes.push(CatalogChange::new(
                    position,
                    ProductId::new(id),
                    kind,
                    instant(at),
                ));
            }
            _ => head = position,
        }
    }
    // UNION ALL keeps no order of its own: the page is put in order here.
    changes.sort_by_key(|c| c.position);
    Ok(CatalogChanges::from_read(changes, limit, after, head))
}
