//! The suppliers' statements: the bookings commerce-core's supply rule decides, written in the
//! caller's transaction; a statement's pages; a supplier's wallet sums.

use chrono::{DateTime, Utc};
use commerce_core::domain::earnings::WalletTotals;
use commerce_core::model::*;
use commerce_core::money::from_piastres;
use commerce_core::store::*;
use sqlx::QueryBuilder;
use sqlx::pool::PoolConnection;

use crate::dialect::*;
use crate::order_reads::{Totalled, page_rows};
use crate::rows::*;
use crate::sql_store::*;

/// How an order's `expected` change is added to its supplier's totals (the end of an
/// `INSERT INTO supplier_totals (supplier_id, expected) ...`).
macro_rules! expected_upsert {
    () => {
        " ON CONFLICT (supplier_id) DO UPDATE \
         SET expected = supplier_totals.expected + excluded.expected"
    };
}

/// The same end of the statement, as a constant.
pub(crate) const EXPECTED_UPSERT: &str = expected_upsert!();

/// Applies each booking ([`SupplierTotals::book`]) to its supplier's kept totals, in the
/// caller's transaction: the totals row locked (created when missing) by one upsert, in
/// supplier id order (the order of the bookings), so concurrent writes never deadlock; then
/// the entries and the new totals. A refusal ([`StoreError::SupplierShortfall`]) returns
/// before anything of its booking is written: the caller's transaction rolls back.
pub(crate) async fn book_supply<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    bookings: Vec<SupplyBooking>,
) -> StoreResult<()> {
    for booking in bookings {
        if booking.entries.is_empty() {
            // An order placed or cancelled before delivery: its `expected` only, one statement.
            query::<DB>(concat!(
                "INSERT INTO supplier_totals (supplier_id, expected) VALUES ($1, $2)",
                expected_upsert!()
            ))
            .bind(booking.supplier)
            .bind(cents(booking.expected)?)
            .execute(&mut *c)
            .await
            .map_err(backend)?;
            continue;
        }
        let (expected, settled, balance, entries): (i64, i64, i64, i64) =
            query_as::<DB, (i64, i64, i64, i64)>(
                "INSERT INTO supplier_totals (supplier_id) VALUES ($1) \
                 ON CONFLICT (supplier_id) DO UPDATE SET supplier_id = excluded.supplier_id \
                 RETURNING expected, settled, balance, entries",
            )
            .bind(booking.supplier)
            .fetch_one(&mut *c)
            .await
            .map_err(backend)?;
        let mut totals = SupplierTotals::new(
            from_piastres(expected),
            from_piastres(settled),
            from_piastres(balance),
            u64::try_from(entries).map_err(|_| corrupt("a negative count of entries"))?,
        );
        for (entry, balance) in totals.book(&booking)? {
            let (order_id, order_number) = entry.order.unzip();
            query::<DB>(
                "INSERT INTO statement_entries (supplier_id, kind, order_id, order_number, \
                 variant_id, quantity, unit_price, amount, direction, balance, delivered_at, \
                 withdrawal_id, at) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
            )
            .bind(booking.supplier)
            .bind(entry.kind.as_str())
            .bind(order_id)
            .bind(order_number)
            .bind(entry.variant_id)
            .bind(entry.quantity)
            .bind(entry.unit_price.map(cents).transpose()?)
            .bind(cents(entry.amount)?)
            .bind(entry.direction.as_str())
            .bind(cents(balance)?)
            .bind(opt_nanos(entry.delivered_at)?)
            .bind(entry.withdrawal_id)
            .bind(nanos(entry.at)?)
            .execute(&mut *c)
            .await
            .map_err(backend)?;
        }
        query::<DB>(
            "UPDATE supplier_totals SET expected = $2, settled = $3, balance = $4, entries = $5 \
             WHERE supplier_id = $1",
        )
        .bind(booking.supplier)
        .bind(cents(totals.expected)?)
        .bind(cents(totals.settled)?)
        .bind(cents(totals.balance)?)
        .bind(i64::try_from(totals.entries).map_err(|_| corrupt("too many entries"))?)
        .execute(&mut *c)
        .await
        .map_err(backend)?;
    }
    Ok(())
}

/// A supplier's wallet sums ([`SupplierTotals::wallet`]) in one statement: the kept totals
/// and the entries delivered after `held_after` (`statement_entries_held`); zeros for an
/// account with no statement.
pub(crate) async fn supplier_wallet<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    supplier: AccountId,
    held_after: DateTime<Utc>,
) -> StoreResult<WalletTotals> {
    type Row = (i64, i64, i64, i64, i64, Option<i64>);
    let row: Option<Row> = query_as::<DB, Row>(
        "SELECT t.expected, t.settled, t.balance, t.entries, \
         (SELECT CAST(COALESCE(SUM(CASE WHEN e.direction = 'credit' THEN e.amount \
          ELSE -e.amount END), 0) AS BIGINT) FROM statement_entries e \
          WHERE e.supplier_id = $1 AND e.delivered_at > $2), \
         (SELECT MIN(e.delivered_at) FROM statement_entries e \
          WHERE e.supplier_id = $1 AND e.delivered_at > $2) \
         FROM supplier_totals t WHERE t.supplier_id = $1",
    )
    .bind(supplier)
    .bind(bound_nanos(held_after))
    .fetch_optional(&mut *c)
    .await
    .map_err(backend)?;
    let Some((expected, settled, balance, entries, held, earliest)) = row else {
        return Ok(WalletTotals::default());
    };
    let totals = SupplierTotals::new(
        from_piastres(expected),
        from_piastres(settled),
        from_piastres(balance),
        u64::try_from(entries).unwrap_or_default(),
    );
    Ok(totals.wallet(from_piastres(held), earliest.map(instant)))
}

/// One page of a supplier's statement, newest first: the page's rows from the end of
/// `statement_entries_supplier` (`statement_entries_at` when the filter names a period), and
/// the total from the kept count (counted in the period's index range when filtered), both
/// read by one statement (one snapshot), so that they agree whatever is booked meanwhile. Past
/// the last page (no rows), the total is read on its own.
pub(crate) async fn statement_page<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    supplier: AccountId,
    filter: &StatementFilter,
    page: PageRequest,
) -> StoreResult<Page<StatementEntry>> {
    let (from, to) = (
        filter.from.map(bound_nanos).unwrap_or(i64::MIN),
        filter.to.map(bound_nanos).unwrap_or(i64::MAX),
    );
    let in_period = |q: &mut QueryBuilder<DB>| {
        if !filter.is_empty() {
            q.push(" AND at >= ").push_arg(from);
            q.push(" AND at < ").push_arg(to);
        }
    };
    let total = |q: &mut QueryBuilder<DB>| {
        if filter.is_empty() {
            q.push("(SELECT COALESCE(MAX(entries), 0) FROM supplier_totals WHERE supplier_id = ");
            q.push_arg(supplier).push(")");
        } else {
            q.push("(SELECT COUNT(*) FROM statement_entries WHERE supplier_id = ");
            q.push_arg(supplier);
            in_period(q);
            q.push(")");
        }
    };
    let mut q = QueryBuilder::<DB>::new(concat!("SELECT ", statement_entry_cols!(), ", "));
    total(&mut q);
    q.push(" AS total FROM statement_entries WHERE supplier_id = ");
    q.push_arg(supplier);
    in_period(&mut q);
    q.push(" ORDER BY id DESC");
    let mut count = QueryBuilder::<DB>::new("SELECT ");
    total(&mut count);
    let (rows, total) =
        page_rows::<DB, StatementEntryPageRow>(c, q, count, page, !filter.is_empty()).await?;
    let items = rows
        .into_iter()
        .map(|row| row.entry.into_domain())
        .collect::<StoreResult<Vec<_>>>()?;
    Ok(Page::new(items, total))
}

impl Totalled for StatementEntryPageRow {
    fn total(&self) -> i64 {
        self.total
    }
}
