//! Stock adjustments: a variant's stock moved by a delta under its row's lock, the adjustment
//! kept, the product stamped; the returned pieces of an order's outcomes given back; a
//! variant's history.
//!
//! [`adjust_stock_in`] and [`restock_returned_in`] take the open transaction's connection, so
//! that any operation applies an adjustment in its own transaction (a quote's acceptance, an
//! order's move).

use chrono::{DateTime, Utc};
use commerce_core::model::*;
use commerce_core::store::*;
use sqlx::pool::PoolConnection;
use sqlx::{AssertSqlSafe, QueryBuilder};

use crate::dialect::*;
use crate::order_reads::{Totalled, page_rows};
use crate::products::touch_product;
use crate::rows::*;
use crate::sql_store::*;

/// Locks a variant's row until the transaction ends: its `available` and its product.
async fn lock_variant<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    variant: VariantId,
) -> StoreResult<Option<(i64, i64)>> {
    query_as::<DB, (i64, i64)>(AssertSqlSafe(format!(
        "SELECT available, product_id FROM variants WHERE id = $1{}",
        DB::FOR_UPDATE
    )))
    .bind(variant)
    .fetch_optional(&mut *c)
    .await
    .map_err(backend)
}

/// Applies one stock adjustment in the caller's open transaction
/// ([`CatalogStore::adjust_stock`]): the variant's row locked and read, the rule of
/// commerce-core ([`NewStockAdjustment::decide`]), then `available`, the product's
/// `updated_at` and the kept adjustment (four statements). A refusal writes nothing (the
/// caller rolls back).
pub(crate) async fn adjust_stock_in<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    new: NewStockAdjustment,
    now: DateTime<Utc>,
) -> Result<StockAdjustment, StockError> {
    let at = nanos(now)?;
    let (available, product) = lock_variant(c, new.variant_id)
        .await?
        .ok_or(StockError::NotFound)?;
    let after = new.decide(available)?;
    query::<DB>("UPDATE variants SET available = $2 WHERE id = $1")
        .bind(new.variant_id)
        .bind(after)
        .execute(&mut *c)
        .await
        .map_err(backend)?;
    touch_product(c, product, at).await?;
    let id: i64 = query_scalar::<DB, i64>(
        "INSERT INTO stock_adjustments (variant_id, delta, reason, note, order_id, quote_id, \
         available_after, at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id",
    )
    .bind(new.variant_id)
    .bind(new.delta)
    .bind(new.reason.as_str())
    .bind(&new.note)
    .bind(new.order_id)
    .bind(new.quote_id)
    .bind(after)
    .bind(at)
    .fetch_one(&mut *c)
    .await
    .map_err(backend)?;
    Ok(new.into_adjustment(StockAdjustmentId::new(id), after, instant(at)))
}

/// Gives back, in the caller's open transaction, the pieces that `outcomes` record as
/// returned on `order` (called before they are written; `moving_to` is the status a move
/// enters): [`restocks`] of the lines and timeline as stored (one statement), one `restock`
/// adjustment per variant naming the order, in variant id order, each within what is
/// available ([`restock_within`]). No statement when there are no outcomes.
pub(crate) async fn restock_returned_in<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    order: OrderId,
    moving_to: Option<OrderStatus>,
    outcomes: &[(LineId, LineOutcome)],
    now: DateTime<Utc>,
) -> StoreResult<()> {
    if outcomes.is_empty() {
        return Ok(());
    }
    type Stored = (i64, i64, Option<i64>, String);
    let stored: Vec<Stored> = query_as::<DB, Stored>(
        "SELECT l.id, l.variant_id, l.returned_quantity, o.timeline \
         FROM order_lines l JOIN orders o ON o.id = l.order_id WHERE l.order_id = $1",
    )
    .bind(order)
    .fetch_all(&mut *c)
    .await
    .map_err(backend)?;
    let Some((_, _, _, timeline)) = stored.first() else {
        return Ok(());
    };
    let timeline = parse_timeline(order.get(), timeline)?;
    let statuses = timeline.iter().map(|t| t.status).chain(moving_to);
    let previous: Vec<(LineId, VariantId, LineOutcome)> = stored
        .into_iter()
        .map(|(line, variant, returned, _)| {
            let outcome = LineOutcome {
                returned_quantity: returned,
                ..LineOutcome::default()
            };
            (LineId::new(line), VariantId::new(variant), outcome)
        })
        .collect();
    let lines = previous.iter().map(|(l, v, o)| (*l, *v, o));
    for (variant, by) in restocks(statuses, lines, outcomes) {
        let Some((available, _)) = lock_variant(c, variant).await? else {
            continue;
        };
        let by = restock_within(by, available);
        if by != 0 {
            let new = NewStockAdjustment::new(variant, by, StockReason::Restock).for_order(order);
            adjust_stock_in(c, new, now).await.map_err(|e| match e {
                StockError::Store(e) => e,
                other => StoreError::Invalid(other.to_string()),
            })?;
        }
    }
    Ok(())
}

/// A variant's adjustments, newest first, one page ([`CatalogStore::stock_adjustments`]): the
/// page with its total in one statement (the `stock_adjustments_variant` index).
pub(crate) async fn stock_adjustments<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    variant: VariantId,
    page: PageRequest,
) -> StoreResult<Page<StockAdjustment>> {
    let mut q = QueryBuilder::<DB>::new(concat!(
        "SELECT ",
        adjustment_cols!(),
        ", COUNT(*) OVER () AS total FROM stock_adjustments WHERE variant_id = "
    ));
    q.push_arg(variant.get());
    q.push(" ORDER BY id DESC");
    let mut count =
        QueryBuilder::<DB>::new("SELECT COUNT(*) FROM stock_adjustments WHERE variant_id = ");
    count.push_arg(variant.get());
    let (rows, total) = page_rows::<DB, PagedAdjustmentRow>(c, q, count, page, false).await?;
    let items = rows
        .into_iter()
        .map(|r| r.row.into_domain())
        .collect::<StoreResult<_>>()?;
    Ok(Page::new(items, total))
}

impl Totalled for PagedAdjustmentRow {
    fn total(&self) -> i64 {
        self.total
    }
}
