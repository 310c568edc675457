//! An order of one variant placed on PostgreSQL in one statement outside a transaction block
//! ([`place_at_once`]): the order's row, its lines and their warranties, the idempotency link,
//! the stock taken and its history entry, the product's change in the catalogue change feed
//! (its row there carries its `updated_at` as read; the product's own row is not written), the
//! account's counters and meter, the event's deliveries and the supplier's expected total, in
//! one data-modifying `WITH` that the server commits as it ends. One round trip, and no client
//! round trip while the contended rows are locked.
//!
//! The statement knows the order's and its lines' ids before it runs (`IdBlocks`, drawn
//! ahead from the tables' identities), so the event's snapshot is built beforehand and rides
//! in it. Every refusal aborts the whole statement: a unique index (a repeated external
//! reference, a taken number) by its own error; a shortfall of stock, a changed price or
//! revision, or a lost idempotency claim by the statement's last select, whose cast fails when
//! the rows it depends on were not written. Then nothing was written, and the transaction of
//! `place_order_in` places the order again and says which refusal it is (or places it, when
//! what refused it changed in between).
//!
//! The contended rows are taken in the order every write takes them (the variant, its
//! product's feed row, the account's counters, its meter, the supplier's totals), each after
//! the one before by data dependency (a `WHERE EXISTS` on, or a select from, the item before).

use std::collections::BTreeSet;

use commerce_core::model::*;
use commerce_core::store::*;
use sqlx::QueryBuilder;

use crate::Tx;
use crate::dialect::*;
use crate::idempotency::push_link;
use crate::order_reads::push_counted_after;
use crate::outbox::OutboxEvent;
use crate::placing::*;
use crate::rows::*;
use crate::sql_store::*;
use crate::statement::EXPECTED_UPSERT;

/// How many lines (and, over all its lines, warranties) an order placed in one statement may
/// have; a larger one is placed by the transaction.
const MAX_ROWS: usize = 100;

/// The text the last select fails to cast to an integer when the order was refused.
const REFUSED: &str = "order refused";

/// Places `new` in one statement when it can ([module docs](self)): `None` when it cannot
/// (not PostgreSQL, more than one variant, too many rows, more than one supplier or a
/// delivered order) or when the statement refused it, having written nothing; the caller then
/// places it by the transaction.
pub(crate) async fn place_at_once<DB: Dialect>(
    store: &SqlStore<DB>,
    new: &NewOrder,
) -> Result<Option<Order>, PlaceOrderError> {
    if !DB::WRITES_IN_WITH {
        return Ok(None);
    }
    let variants: BTreeSet<VariantId> = new.lines.iter().map(|l| l.variant_id).collect();
    let suppliers: BTreeSet<AccountId> = new.lines.iter().filter_map(|l| l.supplier_id).collect();
    let warranties: usize = new.lines.iter().map(|l| l.warranties.len()).sum();
    let (Some(&variant), 1, 0..=1) = (variants.first(), variants.len(), suppliers.len()) else {
        return Ok(None);
    };
    if new.lines.len() > MAX_ROWS || warranties > MAX_ROWS {
        return Ok(None);
    }
    let quantity: i64 = new.lines.iter().map(|l| l.quantity).sum();
    let mut tx = Tx::autocommit(&store.pool).await?;
    // Drawing ids needs rights on the identities' sequences that an insert does not: a role
    // without them (or any failure to draw) places the order by the transaction, as before.
    // The draw's error has been read whole, so the connection goes back to the pool.
    let Ok((id, line_ids)) = store.ids.take(&mut tx.tx, new.lines.len()).await else {
        tx.settle();
        return Ok(None);
    };
    let mut new = new.clone();
    let priced = Priced::of(&std::mem::take(&mut new.priced_from))?;
    let idempotency = new.idempotency.take();
    let bill_month = new.bill_month.take();

    // The rows no other order contends for first: the stock's update waits for them (its
    // conditions read them), so the variant's lock, and those taken after it, are held only
    // from there to the statement's end.
    let mut q = QueryBuilder::<DB>::new("WITH placed AS (");
    let (created, booked) = push_order_insert(&mut q, &new, Some(id))?;
    q.push(" RETURNING id), lined AS (");
    push_lines_insert(&mut q, id, &line_values(&new.lines, 0)?, Some(&line_ids));
    q.push(" RETURNING id)");
    let mut after = format!(
        " AND EXISTS (SELECT 1 FROM placed) AND (SELECT COUNT(*) FROM lined) = {}",
        new.lines.len()
    );
    let warranted = warranty_values(&new.lines, &line_ids)?;
    if !warranted.is_empty() {
        q.push(", warranted AS (");
        push_warranties_insert(&mut q, id, &warranted);
        q.push(" RETURNING id)");
        after.push_str(&format!(
            " AND (SELECT COUNT(*) FROM warranted) = {}",
            warranted.len()
        ));
    }
    drop(warranted);
    if let Some(claim) = &idempotency {
        q.push(", linked AS (");
        push_link(&mut q, claim, Created::Order(OrderId::new(id)));
        q.push(" RETURNING 1)");
        after.push_str(" AND EXISTS (SELECT 1 FROM linked)");
    }
    q.push(", ");
    push_stock_taken(
        &mut q,
        &priced,
        (variant.get(), quantity),
        &after,
        (id, created),
    );

    let events = new.events;
    let order = placed_order(id, new, line_ids, created)?;
    let counted = FamilyDelta {
        family: booked.family.as_str(),
        count: 1,
        net: booked.net,
        commission: booked.commission,
    };
    let event = OutboxEvent::of(EventType::OrderCreated, &order, None, events);
    let account = order.account_id.into();
    let last = push_counted_after(
        &mut q,
        "stamped",
        account,
        &counted,
        Some(event),
        bill_month.as_ref(),
    )?;
    match SupplyBooking::of_order_write(None, &order, order.created_at).as_slice() {
        [] => {}
        [booking] if booking.entries.is_empty() => {
            q.push(", supplied AS (INSERT INTO supplier_totals (supplier_id, expected) SELECT ")
                .push_arg(booking.supplier)
                .push(", ")
                .push_arg(cents(booking.expected)?)
                .push(format_args!(" WHERE EXISTS (SELECT 1 FROM {last})"))
                .push(EXPECTED_UPSERT)
                .push(")");
        }
        _ => {
            tx.settle();
            return Ok(None);
        }
    }
    q.push(format_args!(
        " SELECT CAST(CASE WHEN EXISTS (SELECT 1 FROM {last}){} THEN '0' ELSE '{REFUSED}' END \
         AS INTEGER)",
        if idempotency.is_some() {
            " AND EXISTS (SELECT 1 FROM linked)"
        } else {
            ""
        }
    ));
    let answer = q.build_scalar::<i32>().fetch_one(&mut tx.tx).await;
    match answer {
        Ok(_) => {
            tx.settle();
            Ok(Some(order))
        }
        Err(error) if error.as_database_error().is_some() => {
            // The server answered, and ended the statement: nothing of it was written.
            tx.settle();
            if refused(&error) {
                Ok(None)
            } else {
                Err(backend(error).into())
            }
        }
        // The session may be broken: the connection is closed, not pooled.
        Err(error) => Err(backend(error).into()),
    }
}

/// Whether the statement's error is a refusal that the transaction then says (a unique
/// index's, or the last select's), or a deadlock or serialization failure it retries.
fn refused(error: &sqlx::Error) -> bool {
    let Some(database) = error.as_database_error() else {
        return false;
    };
    match database.code().as_deref() {
        Some("23505" | "40001" | "40P01") => true,
        Some("22P02") => database.message().contains(REFUSED),
        _ => false,
    }
}
