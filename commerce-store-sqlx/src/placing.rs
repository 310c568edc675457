//! Placing an order: the reference and number checks, the stock taken line by line, the
//! lines and warranties written, the counters, meter and idempotency link, in one
//! transaction.
use std::collections::HashMap;

use commerce_core::domain::earnings::OrderEarnings;
use commerce_core::model::*;
use commerce_core::money::from_piastres;
use commerce_core::store::*;
use rust_decimal::Decimal;
use sqlx::QueryBuilder;
use sqlx::pool::PoolConnection;

use crate::changes::FEED_POSITION;
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
    // The insert also says whether the account has an endpoint that receives the event:
    // without one, the outbox costs no statement and no snapshot.
    let mut q = QueryBuilder::<DB>::new("");
    let (created, booked) = push_order_insert(&mut q, &new, None)?;
    q.push(format_args!(
        " ON CONFLICT DO NOTHING RETURNING id, {}",
        subscribed::<DB>("orders.account_id", EventType::OrderCreated)
    ));
    let id: Option<(i64, bool)> = q
        .build_as::<(i64, bool)>()
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
    // An order of one variant (most are) on PostgreSQL writes its product's change to the
    // catalogue change feed in the statement that takes the stock (it rides in its `WITH`,
    // after the stock by data dependency), and not to the product's row: one round trip fewer
    // while the variant's row is locked, and one narrow row written instead of a wide one.
    // What the order was priced from is compared on the rows those statements lock (module
    // docs of `Priced`): a catalogue edit either committed before them (the comparison fails,
    // after waiting for the edit's row lock) or waits for this transaction.
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
        let taken: Option<(i64, bool)> = if stamped_with_stock {
            q.push("WITH ");
            push_stock_taken(&mut q, &priced, (variant, quantity), "", (id, created));
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
            push_take(&mut q, &priced, (variant, quantity), "");
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

/// Pushes `INSERT INTO orders (...) VALUES (...)` of `new`, its values bound: with the id
/// `id` when given, else the identity's next. The order's stored creation instant and its
/// booking, which the counters take.
pub(crate) fn push_order_insert<DB: Dialect>(
    q: &mut QueryBuilder<DB>,
    new: &NewOrder,
    id: Option<i64>,
) -> StoreResult<(i64, Booked)> {
    let t = &new.totals;
    let created = nanos(new.created_at)?;
    let booked = Booked::new(
        new.status.family(),
        OrderEarnings::undelivered(new.status, t),
    )?;
    // The order's row carries its timeline: the first entry is written with it.
    let first_entry = timeline_json(&[TimelineEntry::new(new.status, instant(created), None)])?;
    q.push("INSERT INTO orders (");
    if id.is_some() {
        q.push("id, ");
    }
    q.push(
        "account_id, number, number_normalized, legacy_number, \
         external_reference, status, family, customer_name, customer_phone, \
         customer_second_phone, customer_address, governorate_id, governorate_name, \
         shipping_option_id, shipping_option_name, store_name, store_link, note, \
         products, warranties, delivery_charge, customer_total, profit, income_tax, \
         net_profit, income_tax_percent, created_at, updated_at, earnings_net, \
         earnings_commission, timeline) VALUES (",
    );
    let mut v = q.separated(", ");
    if let Some(id) = id {
        v.push_arg(id);
    }
    v.push_arg(new.account_id)
        .push_arg(new.number.as_str())
        .push_arg(normalize_order_number(&new.number))
        .push_arg(&new.legacy_number)
        .push_arg(&new.external_reference)
        .push_arg(new.status.as_str())
        .push_arg(new.status.family().as_str())
        .push_arg(new.customer.name.as_str())
        .push_arg(new.customer.phone.as_str())
        .push_arg(&new.customer.second_phone)
        .push_arg(new.customer.address.as_str())
        .push_arg(new.customer.governorate_id)
        .push_arg(new.customer.governorate_name.as_str())
        .push_arg(new.shipping_option_id)
        .push_arg(new.shipping_option_name.as_str())
        .push_arg(&new.store_name)
        .push_arg(&new.store_link)
        .push_arg(&new.note);
    for amount in t.amounts() {
        v.push_arg(cents(amount)?);
    }
    v.push_arg(created)
        .push_arg(created)
        .push_arg(booked.net)
        .push_arg(booked.commission)
        .push_arg(first_entry);
    q.push(")");
    Ok((created, booked))
}

/// Pushes the conditional update that takes `quantity` pieces of `variant`'s stock, only when
/// there are enough, (when the order was priced from it) its price is the one priced from, and
/// the conditions `after` hold (` AND ...`, or empty): `RETURNING product_id, available`.
fn push_take<DB: Dialect>(
    q: &mut QueryBuilder<DB>,
    priced: &Priced,
    (variant, quantity): (i64, i64),
    after: &str,
) {
    q.push("UPDATE variants SET available = available - ")
        .push_arg(quantity)
        .push(" WHERE id = ")
        .push_arg(variant)
        .push(" AND available >= ")
        .push_arg(quantity);
    if let Some(&(price, _, _)) = priced.variants.get(&variant) {
        q.push(" AND price = ").push_arg(price);
    }
    q.push(after).push(" RETURNING product_id, available");
}

/// Pushes the `WITH` items that take the stock of a one-variant order `order` (PostgreSQL):
/// `stock AS (...)` ([`push_take`], with the conditions `after`), `reserved AS (...)` (the
/// reservation kept in the variant's history) and `stamped AS (...)` (the product's change in
/// the catalogue change feed, after the stock by data dependency; `RETURNING id`).
///
/// The product's row is not written: its feed row carries its `updated_at` as read
/// ([`product_stamp!`](crate::rows::product_stamp)), moved here as a product stamp moves (one
/// microsecond past the last at least), with the change's position, and its revision, which is
/// compared there when the order was priced: the conflict's update locks the row and reads its
/// latest version, so an edit that committed while the order waited is seen, and one that
/// comes later waits for the order (the edit's trigger writes the same row).
pub(crate) fn push_stock_taken<DB: Dialect>(
    q: &mut QueryBuilder<DB>,
    priced: &Priced,
    (variant, quantity): (i64, i64),
    after: &str,
    (order, created): (i64, i64),
) {
    let priced_from = priced.variants.get(&variant).map(|&(_, p, r)| (p, r));
    q.push("stock AS (");
    push_take(q, priced, (variant, quantity), after);
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
    .push_arg(order)
    .push(", available, ")
    .push_arg(created)
    .push(
        " FROM stock), stamped AS (INSERT INTO catalog_changes (product_id, kind, at, txid, \
         seq, revision) SELECT p.id, CASE WHEN p.active THEN 'updated' ELSE 'removed' END, ",
    )
    .push_arg(created)
    .push(format_args!(
        ", {FEED_POSITION}, p.revision FROM stock JOIN products p ON p.id = stock.product_id"
    ));
    if let Some((product, revision)) = priced_from {
        q.push(" WHERE p.id = ")
            .push_arg(product)
            .push(" AND p.revision = ")
            .push_arg(revision);
    }
    q.push(
        " ON CONFLICT (product_id) DO UPDATE SET kind = CASE WHEN catalog_changes.kind = \
         'removed' THEN 'removed' ELSE 'updated' END, at = CASE WHEN catalog_changes.at + 1000 \
         > excluded.at THEN catalog_changes.at + 1000 ELSE excluded.at END, \
         txid = excluded.txid, seq = excluded.seq",
    );
    if let Some((_, revision)) = priced_from {
        q.push(" WHERE catalog_changes.revision = ")
            .push_arg(revision);
    }
    q.push(" RETURNING product_id AS id)");
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

/// A line's row: its position, the line, and its sell price, profit and supply price in
/// piastres.
pub(crate) type LineValues<'a> = (i32, &'a NewOrderLine, i64, i64, i64);

/// The rows of `lines`, the first at position `first`.
pub(crate) fn line_values(
    lines: &[NewOrderLine],
    first: usize,
) -> StoreResult<Vec<LineValues<'_>>> {
    let mut rows = Vec::with_capacity(lines.len());
    for (i, line) in lines.iter().enumerate() {
        let position =
            i32::try_from(first + i).map_err(|_| StoreError::Invalid("too many lines".into()))?;
        rows.push((
            position,
            line,
            cents(line.sell_price)?,
            cents(line.profit)?,
            cents(line.supply_price)?,
        ));
    }
    Ok(rows)
}

/// Pushes the insert of `rows`, lines of order `order`, with their ids `ids` when given (one a
/// row), else the identity's next.
pub(crate) fn push_lines_insert<DB: Dialect>(
    q: &mut QueryBuilder<DB>,
    order: i64,
    rows: &[LineValues<'_>],
    ids: Option<&[i64]>,
) {
    q.push("INSERT INTO order_lines (");
    if ids.is_some() {
        q.push("id, ");
    }
    q.push(
        "order_id, position, variant_id, product_id, \
         title, variant_label, quantity, sell_price, profit, commission_on, \
         damaged_quantity, lost_quantity, destroyed_quantity, supplier_id, supply_price) ",
    );
    let with_ids = rows
        .iter()
        .enumerate()
        .map(|(i, values)| (ids.and_then(|ids| ids.get(i).copied()), values));
    q.push_values(
        with_ids,
        |mut row, (id, (position, line, sell, profit, supply))| {
            if let Some(id) = id {
                row.push_arg(id);
            }
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
        },
    );
}

/// A warranty's row: its line's id, its position on the line, the warranty, and its unit
/// price and total in piastres.
pub(crate) type WarrantyValues<'a> = (i64, i32, &'a LineWarranty, i64, i64);

/// The rows of the warranties of `lines`, whose ids are `line_ids`.
pub(crate) fn warranty_values<'a>(
    lines: &'a [NewOrderLine],
    line_ids: &[i64],
) -> StoreResult<Vec<WarrantyValues<'a>>> {
    let mut warranties = Vec::new();
    for (line, line_id) in lines.iter().zip(line_ids) {
        for (wpos, w) in line.warranties.iter().enumerate() {
            let wpos = i32::try_from(wpos)
                .map_err(|_| StoreError::Invalid("too many warranties".into()))?;
            warranties.push((*line_id, wpos, w, cents(w.unit_price)?, cents(w.total)?));
        }
    }
    Ok(warranties)
}

/// Pushes the insert of `rows`, warranties of order `order`'s lines.
pub(crate) fn push_warranties_insert<DB: Dialect>(
    q: &mut QueryBuilder<DB>,
    order: i64,
    rows: &[WarrantyValues<'_>],
) {
    q.push(
        "INSERT INTO order_line_warranties (order_id, line_id, position, \
         warranty_id, name, unit_price, quantity, total, duration_days, terms) ",
    );
    q.push_values(rows, |mut row, (line_id, wpos, w, unit, total)| {
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
        let rows = line_values(chunk, chunk_index * ROWS)?;
        let mut q = QueryBuilder::<DB>::new("");
        push_lines_insert(&mut q, order, &rows, None);
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
    let warranties = warranty_values(lines, &ids)?;
    for chunk in warranties.chunks(ROWS) {
        let mut q = QueryBuilder::<DB>::new("");
        push_warranties_insert(&mut q, order, chunk);
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
    for amount in new.totals.amounts_mut() {
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
/// $r`; on PostgreSQL's one-statement path, the product's row in the change feed, which keeps
/// the revision: [`push_stock_taken`]): each in the statement that locks the row, so that on
/// PostgreSQL a catalogue edit that committed while the order waited for the row is seen (the
/// condition is evaluated again on the row as it is after the wait), and one that comes later
/// waits for the order.
pub(crate) struct Priced {
    variants: std::collections::BTreeMap<i64, (i64, i64, i64)>,
}

impl Priced {
    pub(crate) fn of(entries: &[PricedFrom]) -> StoreResult<Self> {
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
