//! Writing orders: placing (stock, references, numbers, billing, the idempotency link), status moves, line outcomes, tracking.

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use commerce_core::earnings::{EarningsTotals, OrderEarnings, WalletTotals};
use commerce_core::model::*;
use commerce_core::money::from_piastres;
use commerce_core::store::*;
use rust_decimal::Decimal;
use sqlx::pool::PoolConnection;
use sqlx::{AssertSqlSafe, QueryBuilder};

use crate::dialect::*;
use crate::meter::*;
use crate::order_reads::*;
use crate::rows::*;
use crate::sql_store::*;
use crate::wallet::*;
use crate::{MAX_BIND_CHUNK, in_list};

/// Moves stock of variants (sorted by id, so that concurrent transactions lock in
/// one order) and marks their products changed.
pub(crate) async fn release_stock<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    deltas: &[(i64, i64)],
    now: i64,
) -> StoreResult<()> {
    let mut products = Vec::new();
    for (variant, by) in deltas {
        let product: Option<i64> = query_scalar::<DB, i64>(
            "UPDATE variants SET available = available + $2 WHERE id = $1 \
             RETURNING product_id",
        )
        .bind(*variant)
        .bind(*by)
        .fetch_optional(&mut *c)
        .await
        .map_err(backend)?;
        products.extend(product);
    }
    touch_products(c, products, now).await
}

pub(crate) async fn touch_products<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    mut products: Vec<i64>,
    now: i64,
) -> StoreResult<()> {
    products.sort_unstable();
    products.dedup();
    // Only stamps that move are written (and locked).
    for chunk in products.chunks(MAX_BIND_CHUNK) {
        let mut q = QueryBuilder::<DB>::new("UPDATE products SET updated_at = ");
        q.push_arg(now).push(" WHERE updated_at < ").push_arg(now);
        q.push(" AND id IN (");
        for (i, id) in chunk.iter().enumerate() {
            if i > 0 {
                q.push(", ");
            }
            q.push_arg(*id);
        }
        q.push(")");
        q.build_statement()
            .execute(&mut *c)
            .await
            .map_err(backend)?;
    }
    Ok(())
}

pub(crate) async fn place_order_in<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    new: NewOrder,
) -> Result<Order, PlaceOrderError> {
    let t = &new.totals;
    let created = nanos(new.created_at)?;
    let booked = Booked::new(
        new.status.family(),
        OrderEarnings::undelivered(new.status, t),
    )?;
    let id: Option<i64> = query_scalar::<DB, i64>(
        "INSERT INTO orders (account_id, number, number_normalized, legacy_number, \
         external_reference, status, family, customer_name, customer_phone, \
         customer_second_phone, customer_address, governorate_id, governorate_name, \
         shipping_option_id, shipping_option_name, store_name, store_link, note, \
         products, warranties, delivery_charge, customer_total, profit, income_tax, \
         net_profit, income_tax_percent, created_at, updated_at, earnings_net, \
         earnings_commission) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, \
         $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $27, $28, $29) \
         ON CONFLICT DO NOTHING RETURNING id",
    )
    .bind(new.account_id)
    .bind(&new.number)
    .bind(normalize_order_number(&new.number))
    .bind(&new.legacy_number)
    .bind(&new.external_reference)
    .bind(new.status.as_str())
    .bind(new.status.family().as_str())
    .bind(&new.customer.name)
    .bind(&new.customer.phone)
    .bind(&new.customer.second_phone)
    .bind(&new.customer.address)
    .bind(new.customer.governorate_id)
    .bind(&new.customer.governorate_name)
    .bind(new.shipping_option_id)
    .bind(&new.shipping_option_name)
    .bind(&new.store_name)
    .bind(&new.store_link)
    .bind(&new.note)
    .bind(cents(t.products)?)
    .bind(cents(t.warranties)?)
    .bind(cents(t.delivery_charge)?)
    .bind(cents(t.customer_total)?)
    .bind(cents(t.profit)?)
    .bind(cents(t.income_tax)?)
    .bind(cents(t.net_profit)?)
    .bind(cents(t.income_tax_percent)?)
    .bind(created)
    .bind(booked.net)
    .bind(booked.commission)
    .fetch_optional(&mut *c)
    .await
    .map_err(backend)?;
    let Some(id) = id else {
        // A unique index refused the row (the conflicting transaction, if any, has
        // finished by now): say which.
        if let Some(reference) = &new.external_reference {
            let existing: Option<(i64, String)> = query_as::<DB, (i64, String)>(
                "SELECT id, number FROM orders \
                 WHERE account_id = $1 AND external_reference = $2",
            )
            .bind(new.account_id)
            .bind(reference)
            .fetch_optional(&mut *c)
            .await
            .map_err(backend)?;
            if let Some((existing_id, existing_number)) = existing {
                return Err(PlaceOrderError::DuplicateExternalReference {
                    existing_id,
                    existing_number,
                });
            }
        }
        return Err(PlaceOrderError::NumberTaken);
    };

    // Lines, their warranties, the first timeline entry and the idempotency link
    // first; the rows other orders contend for (variant stock, product stamps,
    // counters, meter) last, so that their locks are held as briefly as possible.
    let line_ids = insert_lines(c, id, &new.lines).await?;
    query::<DB>(
        "INSERT INTO order_timeline (order_id, status, at, reason) \
         VALUES ($1, $2, $3, NULL)",
    )
    .bind(id)
    .bind(new.status.as_str())
    .bind(created)
    .execute(&mut *c)
    .await
    .map_err(backend)?;
    if let Some(scope) = &new.idempotency {
        query::<DB>(
            "UPDATE idempotency_records SET order_id = $3 \
             WHERE account_id = $1 AND idem_key = $2",
        )
        .bind(scope.account_id)
        .bind(&scope.key)
        .bind(id)
        .execute(&mut *c)
        .await
        .map_err(backend)?;
    }

    // Reserve stock variant by variant in id order (concurrent transactions lock
    // variants in one order: no deadlocks), each with one conditional update that
    // locks the row only when there is enough: never read-then-write. All lines
    // fit exactly when each variant's total fits.
    let mut wanted: std::collections::BTreeMap<i64, i64> = std::collections::BTreeMap::new();
    for line in &new.lines {
        *wanted.entry(line.variant_id).or_default() += line.quantity;
    }
    let mut products = Vec::with_capacity(wanted.len());
    let mut reserved: Vec<(i64, i64)> = Vec::with_capacity(wanted.len());
    for (&variant, &quantity) in &wanted {
        let product: Option<i64> = query_scalar::<DB, i64>(
            "UPDATE variants SET available = available - $2 \
             WHERE id = $1 AND available >= $2 RETURNING product_id",
        )
        .bind(variant)
        .bind(quantity)
        .fetch_optional(&mut *c)
        .await
        .map_err(backend)?;
        match product {
            Some(p) => {
                products.push(p);
                reserved.push((variant, quantity));
            }
            None => {
                return Err(short_line(c, &new.lines, &reserved, variant).await?);
            }
        }
    }
    touch_products(c, products, created).await?;
    let counted = FamilyDelta {
        family: booked.family.as_str(),
        count: 1,
        net: booked.net,
        commission: booked.commission,
    };
    count_families(c, new.account_id, &[counted]).await?;
    bill(c, new.account_id, new.bill_month.as_deref()).await?;
    Ok(placed_order(id, new, line_ids, created)?)
}

/// Inserts the order's lines and their warranties (multi-row inserts); the lines'
/// ids in line order.
pub(crate) async fn insert_lines<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    order: i64,
    lines: &[NewOrderLine],
) -> StoreResult<Vec<i64>> {
    const ROWS: usize = 100;
    let mut ids = vec![0i64; lines.len()];
    for (chunk_index, chunk) in lines.chunks(ROWS).enumerate() {
        let first = chunk_index * ROWS;
        let mut rows = Vec::with_capacity(chunk.len());
        for (i, line) in chunk.iter().enumerate() {
            let position = i32::try_from(first + i)
                .map_err(|_| StoreError::Invalid("too many lines".into()))?;
            rows.push((position, line, cents(line.sell_price)?, cents(line.profit)?));
        }
        let mut q = QueryBuilder::<DB>::new(
            "INSERT INTO order_lines (order_id, position, variant_id, product_id, \
             title, variant_label, quantity, sell_price, profit, commission_on, \
             damaged_quantity, lost_quantity, destroyed_quantity) ",
        );
        q.push_values(&rows, |mut row, (position, line, sell, profit)| {
            row.push_arg(order)
                .push_arg(*position)
                .push_arg(line.variant_id)
                .push_arg(line.product_id)
                .push_arg(line.title.as_str())
                .push_arg(line.variant_label.as_str())
                .push_arg(line.quantity)
                .push_arg(*sell)
                .push_arg(*profit)
                .push_arg(line.commission_on)
                .push_unseparated(", 0, 0, 0");
        });
        q.push(" RETURNING id, position");
        let returned: Vec<(i64, i32)> = q
            .build_as::<(i64, i32)>()
            .fetch_all(&mut *c)
            .await
            .map_err(backend)?;
        if returned.len() != chunk.len() {
            return Err(corrupt("inserted lines not all returned"));
        }
        for (line_id, position) in returned {
            let slot = usize::try_from(position)
                .ok()
                .and_then(|p| ids.get_mut(p))
                .ok_or_else(|| corrupt(format!("line position {position}")))?;
            *slot = line_id;
        }
    }
    let mut warranties = Vec::new();
    for (line, line_id) in lines.iter().zip(&ids) {
        for (wpos, w) in line.warranties.iter().enumerate() {
            let wpos = i32::try_from(wpos)
                .map_err(|_| StoreError::Invalid("too many warranties".into()))?;
            warranties.push((*line_id, wpos, w, cents(w.unit_price)?, cents(w.total)?));
        }
    }
    for chunk in warranties.chunks(ROWS) {
        let mut q = QueryBuilder::<DB>::new(
            "INSERT INTO order_line_warranties (order_id, line_id, position, \
             warranty_id, name, unit_price, quantity, total, duration_days, terms) ",
        );
        q.push_values(chunk, |mut row, (line_id, wpos, w, unit, total)| {
            row.push_arg(order)
                .push_arg(*line_id)
                .push_arg(*wpos)
                .push_arg(w.warranty_id)
                .push_arg(w.name.as_str())
                .push_arg(*unit)
                .push_arg(w.quantity)
                .push_arg(*total)
                .push_arg(w.duration_days)
                .push_arg(w.terms.as_str());
        });
        q.build_statement()
            .execute(&mut *c)
            .await
            .map_err(backend)?;
    }
    Ok(ids)
}

/// The first line (in request order) that does not fit, as reserving line by line
/// would find it: availability as before this order (the current value plus what
/// this transaction reserved), taken down line by line.
pub(crate) async fn short_line<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    lines: &[NewOrderLine],
    reserved: &[(i64, i64)],
    short: i64,
) -> Result<PlaceOrderError, StoreError> {
    let mut ids: Vec<i64> = lines.iter().map(|l| l.variant_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut available: HashMap<i64, i64> = HashMap::new();
    for chunk in ids.chunks(MAX_BIND_CHUNK) {
        let mut q = in_list::<DB>(
            "SELECT id, available FROM variants WHERE id IN (",
            chunk,
            ")",
        );
        let rows: Vec<(i64, i64)> = q
            .build_as::<(i64, i64)>()
            .fetch_all(&mut *c)
            .await
            .map_err(backend)?;
        available.extend(rows);
    }
    for (variant, quantity) in reserved {
        if let Some(a) = available.get_mut(variant) {
            *a += quantity;
        }
    }
    for (index, line) in lines.iter().enumerate() {
        match available.get_mut(&line.variant_id) {
            Some(a) if *a >= line.quantity => *a -= line.quantity,
            found => {
                return Ok(PlaceOrderError::InsufficientStock {
                    line_index: index,
                    available: found.map_or(0, |a| (*a).max(0)),
                });
            }
        }
    }
    // Every line fits now: the short variant's stock grew since its update.
    let line_index = lines
        .iter()
        .position(|l| l.variant_id == short)
        .unwrap_or(0);
    Ok(PlaceOrderError::InsufficientStock {
        line_index,
        available: available.get(&short).map_or(0, |a| (*a).max(0)),
    })
}

/// The order just inserted, built from what was written (amounts and instants
/// through their stored forms, exactly as reading it back would give).
pub(crate) fn placed_order(
    id: i64,
    mut new: NewOrder,
    line_ids: Vec<i64>,
    created: i64,
) -> StoreResult<Order> {
    let money = |amount: &mut Decimal| -> StoreResult<()> {
        *amount = from_piastres(cents(*amount)?);
        Ok(())
    };
    let t = &mut new.totals;
    for amount in [
        &mut t.products,
        &mut t.warranties,
        &mut t.delivery_charge,
        &mut t.customer_total,
        &mut t.profit,
        &mut t.income_tax,
        &mut t.net_profit,
        &mut t.income_tax_percent,
    ] {
        money(amount)?;
    }
    for line in &mut new.lines {
        money(&mut line.sell_price)?;
        money(&mut line.profit)?;
        for w in &mut line.warranties {
            money(&mut w.unit_price)?;
            money(&mut w.total)?;
        }
    }
    new.created_at = instant(created);
    Ok(new.into_order(id, line_ids))
}

pub(crate) async fn change_status_in<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    change: StatusChange,
) -> Result<Order, StatusChangeError> {
    let current: Option<(i64, String, Option<i64>, Option<i64>)> =
        query_as::<DB, (i64, String, Option<i64>, Option<i64>)>(AssertSqlSafe(format!(
            "SELECT account_id, status, earnings_net, earnings_commission \
             FROM orders WHERE id = $1{}",
            DB::FOR_UPDATE
        )))
        .bind(change.order_id)
        .fetch_optional(&mut *c)
        .await
        .map_err(backend)?;
    let Some((account, current, net, commission)) = current else {
        return Err(StatusChangeError::NotFound);
    };
    let was = Booked::from_row(&current, net, commission)?;
    // The one rule of commerce-core decides whether the order may move and what changes.
    let step = StatusMove::check(&change, account, status(&current)?)?;
    let at = nanos(step.at)?;
    if step.releases_stock {
        let lines: Vec<(i64, i64)> = query_as::<DB, (i64, i64)>(
            "SELECT variant_id, CAST(SUM(quantity) AS BIGINT) FROM order_lines WHERE order_id = $1 \
             GROUP BY variant_id ORDER BY variant_id",
        )
        .bind(change.order_id)
        .fetch_all(&mut *c)
        .await
        .map_err(backend)?;
        release_stock(c, &lines, at).await?;
    }
    query::<DB>(
        "UPDATE orders SET status = $2, family = $3, updated_at = $4, \
         confirmed_at = COALESCE($5, confirmed_at), \
         delivered_at = COALESCE($6, delivered_at) WHERE id = $1",
    )
    .bind(change.order_id)
    .bind(step.to.as_str())
    .bind(step.to.family().as_str())
    .bind(at)
    .bind(opt_nanos(step.confirmed_at)?)
    .bind(opt_nanos(step.delivered_at)?)
    .execute(&mut *c)
    .await
    .map_err(backend)?;
    let entry = &step.timeline_entry;
    query::<DB>(
        "INSERT INTO order_timeline (order_id, status, at, reason) \
         VALUES ($1, $2, $3, $4)",
    )
    .bind(change.order_id)
    .bind(entry.status.as_str())
    .bind(nanos(entry.at)?)
    .bind(&entry.reason)
    .execute(&mut *c)
    .await
    .map_err(backend)?;
    let order = load_order(c, change.order_id).await?;
    // The contended rows in the one order every operation takes them in (variants,
    // products, then the account's counters, then its meter): no deadlocks.
    rebook(c, &order, was).await?;
    bill(c, account, change.bill_month.as_deref()).await?;
    Ok(order)
}

#[async_trait]
impl<DB: Dialect> OrderStore for SqlStore<DB> {
    async fn place_order(&self, order: NewOrder) -> Result<Order, PlaceOrderError> {
        let mut tx = self.write().await?;
        let result = place_order_in(&mut tx.tx, order).await;
        tx.finish(result).await
    }

    async fn change_order_status(&self, change: StatusChange) -> Result<Order, StatusChangeError> {
        let mut tx = self.write().await?;
        let result = change_status_in(&mut tx.tx, change).await;
        tx.finish(result).await
    }

    async fn set_line_outcomes(
        &self,
        order: OrderId,
        outcomes: Vec<(LineId, LineOutcome)>,
        now: DateTime<Utc>,
    ) -> StoreResult<Order> {
        let at = nanos(now)?;
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            let row: Option<(String, Option<i64>, Option<i64>)> =
                query_as::<DB, (String, Option<i64>, Option<i64>)>(
                    "UPDATE orders SET updated_at = $2 WHERE id = $1 \
                 RETURNING status, earnings_net, earnings_commission",
                )
                .bind(order)
                .bind(at)
                .fetch_optional(&mut *c)
                .await
                .map_err(backend)?;
            let Some((status_text, net, commission)) = row else {
                return Err(StoreError::NotFound);
            };
            let was = Booked::from_row(&status_text, net, commission)?;
            for (line, outcome) in &outcomes {
                let done = query::<DB>(
                    "UPDATE order_lines SET delivered_quantity = $3, \
                     returned_quantity = $4, damaged_quantity = $5, \
                     lost_quantity = $6, destroyed_quantity = $7 \
                     WHERE id = $1 AND order_id = $2",
                )
                .bind(*line)
                .bind(order)
                .bind(outcome.delivered_quantity)
                .bind(outcome.returned_quantity)
                .bind(outcome.damaged_quantity)
                .bind(outcome.lost_quantity)
                .bind(outcome.destroyed_quantity)
                .execute(&mut *c)
                .await
                .map_err(backend)?;
                if done.rows_affected() == 0 {
                    return Err(StoreError::NotFound);
                }
            }
            let order = load_order(c, order).await?;
            rebook(c, &order, was).await?;
            Ok(order)
        }
        .await;
        tx.finish(result).await
    }

    async fn set_tracking_url(
        &self,
        order: OrderId,
        url: Option<String>,
        now: DateTime<Utc>,
    ) -> StoreResult<Order> {
        let at = nanos(now)?;
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            let done =
                query::<DB>("UPDATE orders SET tracking_url = $2, updated_at = $3 WHERE id = $1")
                    .bind(order)
                    .bind(&url)
                    .bind(at)
                    .execute(&mut *c)
                    .await
                    .map_err(backend)?;
            if done.rows_affected() == 0 {
                return Err(StoreError::NotFound);
            }
            load_order(c, order).await
        }
        .await;
        tx.finish(result).await
    }

    async fn order(&self, account: Option<AccountId>, id: OrderId) -> StoreResult<Option<Order>> {
        // Two statements, no transaction: the order row carries its status and
        // timeline together; its lines only change in their outcomes.
        let mut c = self.pool.acquire().await.map_err(backend)?;
        let c = &mut c;
        let order = load_orders(c, &[id]).await?.pop();
        Ok(order.filter(|o| account.is_none_or(|a| a == o.account_id)))
    }

    async fn orders(
        &self,
        account: AccountId,
        filter: &OrderFilter,
        page: PageRequest,
    ) -> StoreResult<Page<Order>> {
        // The page with its total and each order's timeline in one statement
        // (the total from the account's counters when the filter allows), then
        // the lines with their warranties; no transaction: an order's status and
        // timeline come from the same statement, and its lines only change in
        // their outcomes.
        let mut conn = self.pool.acquire().await.map_err(backend)?;
        async {
            let c = &mut conn;
            let mut q = QueryBuilder::<DB>::new(format!(
                concat!("SELECT ", order_cols!(), ", {}, "),
                DB::TIMELINE
            ));
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
            push_order_filter(&mut q, account, filter)?;
            q.push(" ORDER BY created_at DESC, id DESC");
            limit(&mut q, page)?;
            let rows: Vec<PagedOrderRow> = q
                .build_as::<PagedOrderRow>()
                .fetch_all(&mut *c)
                .await
                .map_err(backend)?;
            let total = match rows.first() {
                Some(first) => first.total,
                None if page.offset() == 0 && !counts_answer(filter) => 0,
                None => count_orders(c, account, filter).await?,
            };
            let ids: Vec<i64> = rows.iter().map(|r| r.row.id).collect();
            let rows = rows.into_iter().map(|r| r.row).collect();
            Ok(Page {
                items: with_lines(c, &ids, rows).await?,
                total: total as u64,
            })
        }
        .await
    }

    async fn wallet_totals(
        &self,
        account: AccountId,
        held_after: DateTime<Utc>,
    ) -> StoreResult<WalletTotals> {
        // One statement (one snapshot): the family sums plus the orders delivered
        // within the hold period (`orders_delivered` index).
        let (expected, settled, settled_commission, held, earliest): (
            i64,
            i64,
            i64,
            i64,
            Option<i64>,
        ) = query_as::<DB, (i64, i64, i64, i64, Option<i64>)>(
            "SELECT \
             (SELECT CAST(COALESCE(SUM(net), 0) AS BIGINT) FROM account_order_counts \
              WHERE account_id = $1 AND family IN ('pending', 'confirmed', 'shipping')), \
             (SELECT CAST(COALESCE(SUM(net), 0) AS BIGINT) FROM account_order_counts \
              WHERE account_id = $1 AND family IN ('delivered', 'archived')), \
             (SELECT CAST(COALESCE(SUM(commission), 0) AS BIGINT) \
              FROM account_order_counts \
              WHERE account_id = $1 AND family IN ('delivered', 'archived')), \
             CAST(COALESCE(SUM(earnings_net), 0) AS BIGINT), MIN(delivered_at) \
             FROM orders WHERE account_id = $1 AND delivered_at > $2 \
             AND family IN ('delivered', 'archived')",
        )
        .bind(account)
        .bind(bound_nanos(held_after))
        .fetch_one(&self.pool)
        .await
        .map_err(backend)?;
        Ok(WalletTotals {
            totals: EarningsTotals {
                expected: from_piastres(expected),
                settled: from_piastres(settled),
                settled_commission: from_piastres(settled_commission),
            },
            held: from_piastres(held),
            earliest_held_delivery: earliest.map(instant),
        })
    }
}
