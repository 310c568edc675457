//! Reading orders: an order with its lines, warranties and timeline; filtered pages and their totals; the per-account family counters.

use std::collections::HashMap;

use commerce_core::model::*;
use commerce_core::store::*;
use sqlx::QueryBuilder;
use sqlx::pool::PoolConnection;

use crate::dialect::*;
use crate::meter::{bill, meter_upsert};
use crate::outbox::OutboxEvent;
use crate::rows::*;
use crate::sql_store::*;
use crate::{MAX_BIND_CHUNK, in_list};

pub(crate) async fn load_orders<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    ids: &[i64],
) -> StoreResult<Vec<Order>> {
    let mut out = Vec::with_capacity(ids.len());
    for chunk in ids.chunks(MAX_BIND_CHUNK) {
        let mut q = in_list::<DB, _>(
            concat!("SELECT ", order_cols!(), " FROM orders WHERE id"),
            chunk,
            "",
        );
        let rows: Vec<OrderRow> = q
            .build_as::<OrderRow>()
            .fetch_all(&mut *c)
            .await
            .map_err(backend)?;
        out.extend(with_lines(c, chunk, rows).await?);
    }
    Ok(out)
}

/// The orders of `rows` (ids `chunk`, in that order) with their lines, the lines'
/// warranties and their timelines (three statements).
pub(crate) async fn with_lines<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    chunk: &[i64],
    rows: Vec<OrderRow>,
) -> StoreResult<Vec<Order>> {
    if chunk.is_empty() {
        return Ok(Vec::new());
    }
    // The lines with their warranties in one statement (a line appears once per
    // warranty, once with NULLs when it has none), in line order. The join names the order
    // too, so that each line's warranties are a range of `order_line_warranties_order`
    // (order, line, position) rather than a scan of that index.
    let mut q = in_list::<DB, _>(
        concat!(
            "SELECT ",
            line_and_warranty_cols!(),
            " FROM order_lines l LEFT JOIN order_line_warranties w \
             ON w.order_id = l.order_id AND w.line_id = l.id WHERE l.order_id"
        ),
        chunk,
        " ORDER BY l.order_id, l.position, w.position",
    );
    let rows_with_warranties: Vec<LineAndWarrantyRow> = q
        .build_as::<LineAndWarrantyRow>()
        .fetch_all(&mut *c)
        .await
        .map_err(backend)?;
    let mut lines: Vec<(LineRow, Vec<LineWarranty>)> = Vec::new();
    for mut row in rows_with_warranties {
        let warranty = row.warranty()?;
        match lines.last_mut() {
            Some((line, warranties)) if line.id == row.line.id => {
                warranties.extend(warranty);
            }
            _ => lines.push((row.line, warranty.into_iter().collect())),
        }
    }
    let mut order_lines: HashMap<i64, Vec<OrderLine>> = HashMap::new();
    for (l, w) in lines {
        order_lines
            .entry(l.order_id)
            .or_default()
            .push(l.into_domain(w));
    }
    let mut found: HashMap<i64, Order> = HashMap::new();
    for row in rows {
        let id = row.id;
        let l = order_lines.remove(&id).unwrap_or_default();
        found.insert(id, row.into_domain(l)?);
    }
    Ok(chunk.iter().filter_map(|id| found.remove(id)).collect())
}

/// The page `page` of the account's orders matching `filter`, newest first, read whole, with
/// its total ([`OrderStore::orders`]): one statement for the page and its total, then one for
/// the lines and their warranties.
///
/// No transaction: an order's status and timeline are columns of its row, its lines change
/// only in their outcomes, and a write of those moves the row's `updated_at` in the same
/// transaction, so the lines read after the row are never older than the version read.
pub(crate) async fn orders_page<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    account: AccountId,
    filter: &OrderFilter,
    page: PageRequest,
) -> StoreResult<Page<Order>> {
    let (rows, total) = page_of_orders(c, order_cols!(), account, filter, page).await?;
    let rows = rows
        .iter()
        .map(|row| <OrderRow as FromDbRow<DB>>::from_db_row(row).map_err(backend))
        .collect::<StoreResult<Vec<OrderRow>>>()?;
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    Ok(Page::new(with_lines(c, &ids, rows).await?, total))
}

/// The page `page` of the account's orders matching `filter` as versions, with its total
/// ([`OrderStore::order_versions`]): one statement, the orders' ids and stamps only.
pub(crate) async fn order_versions_page<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    account: AccountId,
    filter: &OrderFilter,
    page: PageRequest,
) -> StoreResult<Page<OrderVersion>> {
    let (rows, total) = page_of_orders(c, "id, updated_at", account, filter, page).await?;
    let items = rows
        .iter()
        .map(|row| {
            let id: i64 = col::<DB, i64>(row, "id").map_err(backend)?;
            let updated_at: i64 = col::<DB, i64>(row, "updated_at").map_err(backend)?;
            Ok(OrderVersion::new(OrderId::new(id), instant(updated_at)))
        })
        .collect::<StoreResult<_>>()?;
    Ok(Page::new(items, total))
}

/// The rows (columns `cols`) of the page `page` of the account's orders matching `filter`,
/// newest first, and its total: one statement for both (the total from the account's counters
/// when the filter allows, else a window count), a second for the total only when the page is
/// past the end.
async fn page_of_orders<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    cols: &str,
    account: AccountId,
    filter: &OrderFilter,
    page: PageRequest,
) -> StoreResult<(Vec<DB::Row>, u64)> {
    let mut q = QueryBuilder::<DB>::new(format!("SELECT {cols}, "));
    if counts_answer(filter) {
        q.push(
            "(SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) \
             FROM account_order_counts WHERE account_id = ",
        )
        .push_arg(account);
        if let Some(family) = filter.family {
            q.push(" AND family = ").push_arg(family.as_str());
        }
        q.push(") AS total");
    } else {
        q.push("COUNT(*) OVER () AS total");
    }
    push_order_filter(&mut q, account.into(), filter)?;
    q.push(" ORDER BY created_at DESC, id DESC");
    limit(&mut q, page)?;
    let rows = q
        .build_statement()
        .planned_per_call(filter.updated_since.is_some())
        .fetch_rows(&mut *c)
        .await
        .map_err(backend)?;
    let total: i64 = match rows.first() {
        Some(first) => col::<DB, i64>(first, "total").map_err(backend)?,
        None if page.offset() == 0 && !counts_answer(filter) => 0,
        None => count_orders(c, account.into(), filter).await?,
    };
    Ok((rows, u64::try_from(total).unwrap_or_default()))
}

pub(crate) async fn load_order<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    id: i64,
) -> StoreResult<Order> {
    load_orders(c, &[id])
        .await?
        .pop()
        .ok_or(StoreError::NotFound)
}

pub(crate) fn push_order_filter<DB: Dialect>(
    q: &mut QueryBuilder<DB>,
    account: i64,
    filter: &OrderFilter,
) -> StoreResult<()> {
    q.push(" FROM orders WHERE account_id = ").push_arg(account);
    if let Some(status) = filter.status {
        q.push(" AND status = ").push_arg(status.as_str());
    }
    if let Some(family) = filter.family {
        q.push(" AND family = ").push_arg(family.as_str());
    }
    if let Some(reference) = &filter.external_reference {
        q.push(" AND external_reference = ")
            .push_arg(reference.clone());
    }
    if let Some(number) = &filter.number {
        q.push(" AND (number_normalized = ")
            .push_arg(number.clone())
            .push(" OR legacy_number = ")
            .push_arg(number.clone())
            .push(")");
    }
    if let Some(since) = filter.updated_since {
        q.push(" AND updated_at >= ").push_arg(bound_nanos(since));
    }
    Ok(())
}

/// How many of the account's orders match `filter`: from the per-family counters
/// (`account_order_counts`) when the filter is at most a family, else `COUNT(*)`.
/// Whether the account's counters answer the filter's total (no filter, or
/// `family` only).
pub(crate) fn counts_answer(filter: &OrderFilter) -> bool {
    filter.status.is_none()
        && filter.external_reference.is_none()
        && filter.number.is_none()
        && filter.updated_since.is_none()
}

pub(crate) async fn count_orders<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    account: i64,
    filter: &OrderFilter,
) -> StoreResult<i64> {
    if !counts_answer(filter) {
        let mut q = QueryBuilder::<DB>::new("SELECT COUNT(*)");
        push_order_filter(&mut q, account, filter)?;
        return q
            .build_scalar()
            .planned_per_call(filter.updated_since.is_some())
            .fetch_one(&mut *c)
            .await
            .map_err(backend);
    }
    query_scalar::<DB, i64>(
        "SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) FROM account_order_counts \
         WHERE account_id = $1 AND ($2 IS NULL OR family = $2)",
    )
    .bind(account)
    .bind(filter.family.map(|f| f.as_str().to_owned()))
    .fetch_one(&mut *c)
    .await
    .map_err(backend)
}

/// How a delta is added to the account's row of its family.
const COUNTS_UPSERT: &str = " ON CONFLICT (account_id, family) DO UPDATE SET \
     count = account_order_counts.count + excluded.count, \
     net = account_order_counts.net + excluded.net, \
     commission = account_order_counts.commission + excluded.commission";

/// Applies `deltas` to the account's row of each family (in the order given: callers
/// pass families sorted, so that concurrent transactions lock rows in one order), queues
/// `event`'s deliveries and counts one order operation in the account's meter for
/// `bill_month`. On PostgreSQL all of it is one statement (every statement of an order's
/// transaction is a round trip, and the counters' and meter's rows are held to the commit by
/// every order of the account): the deliveries' insert rides in its `WITH`, and the meter's
/// upsert reads from the counters' (`RETURNING`), so that the counters are locked before the
/// meter, the order every write takes them in. Elsewhere, or with no delta, one statement each.
pub(crate) async fn count_families<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    account: i64,
    deltas: &[FamilyDelta],
    event: Option<OutboxEvent>,
    bill_month: Option<&BillingMonth>,
) -> StoreResult<()> {
    let together = DB::WRITES_IN_WITH && !deltas.is_empty();
    let (rider, event) = match event {
        Some(event) if together => (Some(event), None),
        event => (None, event),
    };
    if let Some(event) = event {
        event.queue(c).await?;
    }
    if deltas.is_empty() {
        return bill(c, account, bill_month).await;
    }
    let mut q = QueryBuilder::<DB>::new("");
    let billed_here = together && bill_month.is_some();
    if rider.is_some() || billed_here {
        q.push("WITH ");
    }
    if let Some(event) = rider {
        q.push("queued AS (");
        event.push_insert(&mut q)?;
        q.push(")");
        if billed_here {
            q.push(", ");
        }
    }
    if billed_here {
        q.push("counted AS (");
    }
    q.push("INSERT INTO account_order_counts (account_id, family, count, net, commission) ");
    q.push_values(deltas, |mut row, d| {
        row.push_arg(account)
            .push_arg(d.family)
            .push_arg(d.count)
            .push_arg(d.net)
            .push_arg(d.commission);
    });
    q.push(COUNTS_UPSERT);
    match bill_month {
        Some(month) if billed_here => {
            q.push(" RETURNING account_id) ");
            q.push("INSERT INTO meter_order_operations (account_id, month, operations) SELECT ")
                .push_arg(account)
                .push(", ")
                .push_arg(month.as_str())
                .push(", 1 FROM counted LIMIT 1");
            q.push(meter_upsert!());
        }
        _ => {}
    }
    q.build_statement()
        .execute(&mut *c)
        .await
        .map_err(backend)?;
    if !billed_here {
        bill(c, account, bill_month).await?;
    }
    Ok(())
}

/// [`count_families`] for one new order, as more `WITH` items of a statement whose `WITH`
/// already holds `after` (PostgreSQL only: the stock's statement of a one-variant order):
/// `, queued AS (...)` for the event's deliveries, `, counted AS (...)` for `delta`, written
/// only when `after` returned a row (which orders it after `after` by data dependency: the
/// counters' row is locked after the stock's, the order every write takes them in), and
/// `, metered AS (...)` for the meter, after the counters. So the rows every order of the
/// account contends for are taken in the statement that takes the stock, and held from there
/// to the commit with no round trip between. The name of the last item (`metered`, else
/// `counted`; each `RETURNING account_id`), which a later write orders itself after.
pub(crate) fn push_counted_after<DB: Dialect>(
    q: &mut QueryBuilder<DB>,
    after: &str,
    account: i64,
    delta: &FamilyDelta,
    event: Option<OutboxEvent>,
    bill_month: Option<&BillingMonth>,
) -> StoreResult<&'static str> {
    if let Some(event) = event {
        q.push(", queued AS (");
        event.push_insert(q)?;
        q.push(")");
    }
    q.push(
        ", counted AS (INSERT INTO account_order_counts (account_id, family, count, net, \
         commission) SELECT ",
    )
    .push_arg(account)
    .push(", ")
    .push_arg(delta.family)
    .push(", ")
    .push_arg(delta.count)
    .push(", ")
    .push_arg(delta.net)
    .push(", ")
    .push_arg(delta.commission)
    .push(format_args!(" WHERE EXISTS (SELECT 1 FROM {after})"))
    .push(COUNTS_UPSERT)
    .push(" RETURNING account_id)");
    if let Some(month) = bill_month {
        q.push(", metered AS (INSERT INTO meter_order_operations (account_id, month, operations) SELECT ")
            .push_arg(account)
            .push(", ")
            .push_arg(month.as_str())
            .push(", 1 FROM counted LIMIT 1")
            .push(meter_upsert!())
            .push(" RETURNING account_id)");
        return Ok("metered");
    }
    Ok("counted")
}

/// Pushes the page's ` LIMIT n OFFSET m`, as literals: PostgreSQL plans a prepared statement
/// whose limit is a parameter afresh at every execution (a generic plan, costed for an unknown
/// limit, never looks as cheap as one made for the value), and planning a page of orders took
/// longer than reading it. The numbers are integers the store computed, so nothing of the
/// request's text reaches the SQL.
pub(crate) fn limit<DB: Dialect>(q: &mut QueryBuilder<DB>, page: PageRequest) -> StoreResult<()> {
    let offset = i64::try_from(page.offset())
        .map_err(|_| StoreError::Invalid("page out of range".into()))?;
    q.push(format_args!(" LIMIT {} OFFSET {offset}", page.per_page()));
    Ok(())
}

/// One page of the rows `q` selects (ending in its `ORDER BY`), with `COUNT(*) OVER ()` as
/// `total` riding in it, and how many match (counted on its own past the last page by `count`).
/// `per_call` when the conditions hold a range over a parameter ([`Q::planned_per_call`]).
///
/// [`Q::planned_per_call`]: crate::dialect::Q::planned_per_call
pub(crate) async fn page_rows<DB: Dialect, R>(
    c: &mut PoolConnection<DB>,
    mut q: QueryBuilder<DB>,
    mut count: QueryBuilder<DB>,
    page: PageRequest,
    per_call: bool,
) -> StoreResult<(Vec<R>, u64)>
where
    R: FromDbRow<DB, Output = R> + Totalled + Send + Unpin + 'static,
{
    limit(&mut q, page)?;
    let rows: Vec<R> = q
        .build_as::<R>()
        .planned_per_call(per_call)
        .fetch_all(&mut *c)
        .await
        .map_err(backend)?;
    let total = match rows.first() {
        Some(first) => first.total(),
        None if page.offset() == 0 => 0,
        None => count
            .build_scalar::<i64>()
            .planned_per_call(per_call)
            .fetch_one(&mut *c)
            .await
            .map_err(backend)?,
    };
    Ok((rows, u64::try_from(total).unwrap_or_default()))
}

/// A row that carries its query's `COUNT(*) OVER ()`.
pub(crate) trait Totalled {
    /// The `COUNT(*) OVER ()` of its query.
    fn total(&self) -> i64;
}
