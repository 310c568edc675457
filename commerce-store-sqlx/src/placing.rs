//! Placing an order: the reference and number checks, the stock taken line by line, the
//! lines and warranties written, the counters, meter and idempotency link, in one
//! transaction.
use std::collections::HashMap;

use commerce_core::domain::earnings::OrderEarnings;
use commerce_core::model::*;
use commerce_core::money::from_piastres;
use commerce_core::store::*;
use rust_decimal::Decimal;
use sqlx::pool::PoolConnection;
use sqlx::{AssertSqlSafe, QueryBuilder};

use crate::dialect::*;
use crate::idempotency::link_record;
use crate::order_reads::*;
use crate::outbox::{OutboxEvent, subscribed};
use crate::products::touch_products;
use crate::rows::*;
use crate::sql_store::*;
use crate::{MAX_BIND_CHUNK, in_list};

pub(crate) async fn place_order_in<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    mut new: NewOrder,
) -> Result<Order, PlaceOrderError> {
    let priced = Priced::of(&std::mem::take(&mut new.priced_from))?;
    let t = &new.totals;
    let created = nanos(new.created_at)?;
    let booked = Booked::new(
        new.status.family(),
        OrderEarnings::undelivered(new.status, t),
    )?;
    // The order's row carries its timeline: the first entry is written with it.
    let first_entry = timeline_json(&[TimelineEntry::new(new.status, instant(created), None)])?;
    // The insert also says whether the account has an endpoint that receives the event:
    // without one, the outbox costs no statement and no snapshot.
    let id: Option<(i64, bool)> = query_as::<DB, (i64, bool)>(AssertSqlSafe(format!(
        "INSERT INTO orders (account_id, number, number_normalized, legacy_number, \
         external_reference, status, family, customer_name, customer_phone, \
         customer_second_phone, customer_address, governorate_id, governorate_name, \
         shipping_option_id, shipping_option_name, store_name, store_link, note, \
         products, warranties, delivery_charge, customer_total, profit, income_tax, \
         net_profit, income_tax_percent, created_at, updated_at, earnings_net, \
         earnings_commission, timeline) \
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, \
         $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $27, $28, $29, $30) \
         ON CONFLICT DO NOTHING RETURNING id, {}",
        subscribed::<DB>("orders.account_id", EventType::OrderCreated)
    )))
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
    .bind(first_entry)
    .fetch_optional(&mut *c)
    .await
    .map_err(backend)?;
    let Some((id, hooked)) = id else {
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
                    existing_id: OrderId::new(existing_id),
                    existing_number,
                });
            }
        }
        return Err(PlaceOrderError::NumberTaken);
    };

    // Lines, their warranties and the idempotency link first; the rows other orders contend
    // for (variant stock, product stamps, counters with the event when the account has an
    // endpoint that receives it, meter) last, so that their locks are held as briefly as
    // possible.
    let line_ids = insert_lines(c, id, &new.lines).await?;
    let (events, bill_month, idempotency) =
        (new.events, new.bill_month.take(), new.idempotency.take());
    let order = placed_order(id, new, line_ids, created)?;
    let mut event = hooked.then(|| OutboxEvent::of(EventType::OrderCreated, &order, None, events));
    if let Some(claim) = &idempotency {
        // Fenced: only the request that holds the record links it. A request that lost it
        // to a retry (it outlived the stale time) places nothing: the caller rolls back.
        if !link_record(c, claim, Created::Order(OrderId::new(id))).await? {
            return Err(PlaceOrderError::IdempotencyLost);
        }
    }

    // Reserve stock variant by variant in id order (concurrent transactions lock
    // variants in one order: no deadlocks), each with one conditional update that
    // locks the row only when there is enough: never read-then-write. All lines
    // fit exactly when each variant's total fits.
    let mut wanted: std::collections::BTreeMap<i64, i64> = std::collections::BTreeMap::new();
    for line in &order.lines {
        *wanted.entry(line.variant_id.into()).or_default() += line.quantity;
    }
    // An order of one variant (most are) on PostgreSQL stamps the variant's product in the
    // same statement (it rides in its `WITH`, after the stock by data dependency): one round
    // trip fewer while the variant's row is locked. What the order was priced from is
    // compared in the statements that take the stock and stamp the product (module docs of
    // `Priced`): a catalogue edit either committed before them (the comparison fails, after
    // waiting for the edit's row lock) or waits for this transaction.
    // The same statement then writes the account's counters, meter and event
    // (`push_counted_after`): the rows every order of the account contends for are locked in
    // the statement that locks the variant, with no round trip between it and the commit.
    let stamped_with_stock = DB::WRITES_IN_WITH && wanted.len() == 1;
    let counted = FamilyDelta {
        family: booked.family.as_str(),
        count: 1,
        net: booked.net,
        commission: booked.commission,
    };
    let account = order.account_id.into();
    let mut products = Vec::with_capacity(wanted.len());
    let mut reserved: Vec<(i64, i64)> = Vec::with_capacity(wanted.len());
    // Reservations not kept by their own statement: (variant, pieces, available after).
    let mut to_keep: Vec<(i64, i64, i64)> = Vec::new();
    for (&variant, &quantity) in &wanted {
        let mut q = QueryBuilder::<DB>::new("");
        if stamped_with_stock {
            q.push("WITH stock AS (");
        }
        q.push("UPDATE variants SET available = available - ")
            .push_arg(quantity)
            .push(" WHERE id = ")
            .push_arg(variant)
            .push(" AND available >= ")
            .push_arg(quantity);
        if let Some(&(price, _, _)) = priced.variants.get(&variant) {
            q.push(" AND price = ").push_arg(price);
        }
        q.push(" RETURNING product_id, available");
        let taken: Option<(i64, bool)> = if stamped_with_stock {
            // The reservation kept in the variant's history, in the same statement.
            q.push(
                "), reserved AS (INSERT INTO stock_adjustments (variant_id, delta, reason, \
                 order_id, available_after, at) SELECT ",
            )
            .push_arg(variant)
            .push(", ")
            .push_arg(-quantity)
            .push(", ")
            .push_arg(StockReason::Reservation.as_str())
            .push(", ")
            .push_arg(id)
            .push(", available, ")
            .push_arg(created)
            .push(
                " FROM stock), stamped AS (UPDATE products SET updated_at = \
                 CASE WHEN updated_at + 1000 > ",
            )
            .push_arg(created)
            .push(" THEN updated_at + 1000 ELSE ")
            .push_arg(created)
            .push(" END WHERE id IN (SELECT product_id FROM stock)");
            if let Some(&(_, product, revision)) = priced.variants.get(&variant) {
                q.push(" AND id = ")
                    .push_arg(product)
                    .push(" AND revision = ")
                    .push_arg(revision);
            }
            q.push(" RETURNING id)");
            crate::order_reads::push_counted_after(
                &mut q,
                "stamped",
                account,
                &counted,
                event.take(),
                bill_month.as_ref(),
            )?;
            q.push(" SELECT product_id, EXISTS (SELECT 1 FROM stamped) FROM stock");
            q.build_as::<(i64, bool)>()
                .fetch_optional(&mut *c)
                .await
                .map_err(backend)?
        } else {
            let taken = q
                .build_as::<(i64, i64)>()
                .fetch_optional(&mut *c)
                .await
                .map_err(backend)?;
            if let Some((_, after)) = taken {
                to_keep.push((variant, quantity, after));
            }
            taken.map(|(product, _)| (product, true))
        };
        match taken {
            Some((_, false)) => {
                return Err(PlaceOrderError::Stale {
                    variant_id: VariantId::new(variant),
                });
            }
            Some((p, true)) => {
                products.push(p);
                reserved.push((variant, quantity));
            }
            None => {
                if priced.changed(c, variant).await? {
                    return Err(PlaceOrderError::Stale {
                        variant_id: VariantId::new(variant),
                    });
                }
                return Err(short_line(c, &order.lines, &reserved, variant).await?);
            }
        }
    }
    keep_reservations(c, id, &to_keep, created).await?;
    if !stamped_with_stock {
        if let Some(variant_id) = priced.stamp(c, &mut products, created).await? {
            return Err(PlaceOrderError::Stale { variant_id });
        }
        touch_products(c, products, created).await?;
        count_families(c, account, &[counted], event, bill_month.as_ref()).await?;
    }
    crate::statement::book_supply(
        c,
        SupplyBooking::of_order_write(None, &order, order.created_at),
    )
    .await?;
    Ok(order)
}

/// Keeps the reservations of order `order` in their variants' histories (one multi-row
/// insert): each `(variant, pieces, available after)`.
async fn keep_reservations<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    order: i64,
    reservations: &[(i64, i64, i64)],
    at: i64,
) -> StoreResult<()> {
    for chunk in reservations.chunks(MAX_BIND_CHUNK / 6) {
        let mut q = QueryBuilder::<DB>::new(
            "INSERT INTO stock_adjustments (variant_id, delta, reason, order_id, \
             available_after, at) ",
        );
        q.push_values(chunk, |mut row, (variant, pieces, after)| {
            row.push_arg(*variant)
                .push_arg(-*pieces)
                .push_arg(StockReason::Reservation.as_str())
                .push_arg(order)
                .push_arg(*after)
                .push_arg(at);
        });
        q.build_statement()
            .execute(&mut *c)
            .await
            .map_err(backend)?;
    }
    Ok(())
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
            let supply = cents(line.supply_price)?;
            rows.push((
                position,
                line,
                cents(line.sell_price)?,
                cents(line.profit)?,
                supply,
            ));
        }
        let mut q = QueryBuilder::<DB>::new(
            "INSERT INTO order_lines (order_id, position, variant_id, product_id, \
             title, variant_label, quantity, sell_price, profit, commission_on, \
             damaged_quantity, lost_quantity, destroyed_quantity, supplier_id, supply_price) ",
        );
        q.push_values(&rows, |mut row, (position, line, sell, profit, supply)| {
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
                .push_unseparated(", 0, 0, 0")
                .push_arg(line.supplier_id)
                .push_arg(*supply);
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
    lines: &[OrderLine],
    reserved: &[(i64, i64)],
    short: i64,
) -> Result<PlaceOrderError, StoreError> {
    let mut ids: Vec<VariantId> = lines.iter().map(|l| l.variant_id).collect();
    ids.sort_unstable();
    ids.dedup();
    let mut available: HashMap<i64, i64> = HashMap::new();
    for chunk in ids.chunks(MAX_BIND_CHUNK) {
        let mut q = in_list::<DB, _>("SELECT id, available FROM variants WHERE id", chunk, "");
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
        match available.get_mut(&line.variant_id.get()) {
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
        money(&mut line.supply_price)?;
        for w in &mut line.warranties {
            money(&mut w.unit_price)?;
            money(&mut w.total)?;
        }
    }
    new.created_at = instant(created);
    let line_ids: Vec<LineId> = line_ids.into_iter().map(LineId::new).collect();
    Ok(new.into_order(OrderId::new(id), line_ids))
}

/// What an order was priced from ([`NewOrder::priced_from`]), as stored: by variant, its
/// price (piastres), its product and the product's revision. The stock's conditional update
/// compares the price (`AND price = $p`), the product's stamp the revision (`AND revision =
/// $r`): each in the statement that locks the row, so that on PostgreSQL a catalogue edit
/// that committed while the order waited for the row is seen (the condition is evaluated
/// again on the row as it is after the wait), and one that comes later waits for the order.
struct Priced {
    variants: std::collections::BTreeMap<i64, (i64, i64, i64)>,
}

impl Priced {
    fn of(entries: &[PricedFrom]) -> StoreResult<Self> {
        let mut variants = std::collections::BTreeMap::new();
        for entry in entries {
            variants.insert(
                entry.variant_id.get(),
                (cents(entry.price)?, entry.product_id.get(), entry.revision),
            );
        }
        Ok(Self { variants })
    }

    /// Whether `variant`, whose stock update found no row, differs from what it was priced
    /// from (its price, its product's revision) or is gone: then the order is stale, whatever
    /// its stock.
    async fn changed<DB: Dialect>(
        &self,
        c: &mut PoolConnection<DB>,
        variant: i64,
    ) -> StoreResult<bool> {
        let Some(&expected) = self.variants.get(&variant) else {
            return Ok(false);
        };
        let now: Option<(i64, i64, i64)> = query_as::<DB, (i64, i64, i64)>(
            "SELECT v.price, v.product_id, p.revision FROM variants v \
             JOIN products p ON p.id = v.product_id WHERE v.id = $1",
        )
        .bind(variant)
        .fetch_optional(&mut *c)
        .await
        .map_err(backend)?;
        Ok(now != Some(expected))
    }

    /// Stamps each product of `products` that a variant was priced from, only while its
    /// revision is the one priced from (one conditional update each, in id order), and takes
    /// it out of `products` (the rest are stamped as before). The first variant whose product
    /// changed, if any: nothing of it is kept (the caller rolls back).
    async fn stamp<DB: Dialect>(
        &self,
        c: &mut PoolConnection<DB>,
        products: &mut Vec<i64>,
        created: i64,
    ) -> StoreResult<Option<VariantId>> {
        let mut expected: std::collections::BTreeMap<i64, (i64, i64)> = Default::default();
        for (&variant, &(_, product, revision)) in &self.variants {
            if products.contains(&product) {
                expected.entry(product).or_insert((variant, revision));
            }
        }
        products.retain(|p| !expected.contains_key(p));
        for (product, (variant, revision)) in expected {
            let done = query::<DB>(concat!(
                "UPDATE products SET ",
                updated_at_after!("$3"),
                " WHERE id = $1 AND revision = $2"
            ))
            .bind(product)
            .bind(revision)
            .bind(created)
            .execute(&mut *c)
            .await
            .map_err(backend)?;
            if done.rows_affected() != 1 {
                return Ok(Some(VariantId::new(variant)));
            }
        }
        Ok(None)
    }
}
