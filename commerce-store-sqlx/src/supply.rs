//! Suppliers' quotes and the supplier's view of its variants.
//!
//! A quote is stored `pending` until decided; one past its `valid_until` reads as `expired`
//! ([`Quote::as_of`]), and the filters below say the same in SQL (`EXPIRED`, `push_status`,
//! `push_updated_since`). One pending quote per variant is the partial unique index
//! `quotes_one_pending`: of concurrent inserts on one variant, one commits and the others
//! find its quote.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use commerce_core::model::*;
use commerce_core::store::*;
use sqlx::QueryBuilder;
use sqlx::pool::PoolConnection;

use crate::dialect::*;
use crate::idempotency::link_record;
use crate::order_reads::{Totalled, page_rows};
use crate::outbox::OutboxEvent;
use crate::rows::*;
use crate::sql_store::*;

/// A quote's columns with its product's title and its variant's label (`q`, `v`, `p`).
macro_rules! quote_columns {
    () => {
        "SELECT q.id, q.account_id, q.variant_id, v.product_id, p.title, v.label, \
         q.unit_price, q.quantity, q.status, q.valid_until, q.note, q.decision_note, \
         q.decided_at, q.created_at, q.updated_at"
    };
}

/// The tables [`quote_columns!`] reads.
macro_rules! quote_tables {
    () => {
        " FROM quotes q JOIN variants v ON v.id = q.variant_id \
         JOIN products p ON p.id = v.product_id"
    };
}

/// A quote stored pending and expired at the parameter that follows (`now`, in nanoseconds).
const EXPIRED: &str = "q.status = 'pending' AND q.valid_until <= ";
/// The status as of `now` (nanoseconds) for the filters: stored, or `expired` (the same
/// rule as [`Quote::as_of`]).
fn push_status<DB: Dialect>(q: &mut QueryBuilder<DB>, status: QuoteStatus, now: i64) {
    match status {
        QuoteStatus::Pending => {
            q.push("q.status = 'pending' AND (q.valid_until IS NULL OR q.valid_until > ");
            q.push_arg(now);
            q.push(")");
        }
        QuoteStatus::Expired => {
            q.push("(q.status = 'expired' OR (");
            q.push(EXPIRED);
            q.push_arg(now);
            q.push("))");
        }
        other => {
            q.push("q.status = ");
            q.push_arg(other.as_str());
        }
    }
}

/// `updated_at` as of `now`: an expired quote's is its `valid_until` (if later).
fn push_updated_since<DB: Dialect>(q: &mut QueryBuilder<DB>, since: i64, now: i64) {
    q.push("(CASE WHEN ");
    q.push(EXPIRED);
    q.push_arg(now);
    q.push(" AND q.valid_until > q.updated_at THEN q.valid_until ELSE q.updated_at END) >= ");
    q.push_arg(since);
}

impl Totalled for QuotePageRow {
    fn total(&self) -> i64 {
        self.total
    }
}

impl Totalled for SupplyVariantRow {
    fn total(&self) -> i64 {
        self.total
    }
}

/// The order of a page of quotes.
#[derive(Clone, Copy)]
enum QuoteOrder {
    /// Newest first (a supplier's own list).
    NewestFirst,
    /// Pending (as of now) first, then the others; each oldest first (the operator's list).
    PendingFirst,
}

/// One page of quotes as of `now`: those `conditions` keep (a `WHERE` clause on `quotes q`), in
/// `order`, and how many match, both read by one statement (one snapshot). The count is a
/// subquery on `quotes` alone, and each part of the order is read in id order by an index and
/// cut at the page's end: a page costs its offset and length, not a sort of every match.
async fn quote_page<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    conditions: impl Fn(&mut QueryBuilder<DB>),
    order: QuoteOrder,
    page: PageRequest,
    now: DateTime<Utc>,
) -> StoreResult<Page<Quote>> {
    let at = bound_nanos(now);
    let total = |q: &mut QueryBuilder<DB>| {
        q.push("(SELECT COUNT(*) FROM quotes q");
        conditions(q);
        q.push(")");
    };
    // The matches of one part (`pending`: live pending ones or the others; `None`: all), with
    // the total and the part's rank, in id order, cut at `cut` rows.
    let part = |q: &mut QueryBuilder<DB>, pending: Option<bool>, cut: Option<u64>| {
        q.push(concat!(quote_columns!(), ", "));
        total(q);
        q.push(format_args!(
            " AS total, {} AS part",
            u8::from(pending == Some(false))
        ));
        q.push(quote_tables!());
        conditions(q);
        if let Some(pending) = pending {
            q.push(if pending { " AND (" } else { " AND NOT (" });
            push_status(q, QuoteStatus::Pending, at);
            q.push(")");
        }
        q.push(match order {
            QuoteOrder::NewestFirst => " ORDER BY q.id DESC",
            QuoteOrder::PendingFirst => " ORDER BY q.id",
        });
        if let Some(cut) = cut {
            q.push(format_args!(" LIMIT {cut}"));
        }
    };
    let mut q = QueryBuilder::<DB>::new("");
    match order {
        QuoteOrder::NewestFirst => part(&mut q, None, None),
        QuoteOrder::PendingFirst => {
            let cut = page.offset().saturating_add(u64::from(page.per_page()));
            q.push("SELECT * FROM (SELECT * FROM (");
            part(&mut q, Some(true), Some(cut));
            q.push(") AS pending_part UNION ALL SELECT * FROM (");
            part(&mut q, Some(false), Some(cut));
            q.push(") AS other_part) AS both_parts ORDER BY part, id");
        }
    }
    let mut count = QueryBuilder::<DB>::new("SELECT ");
    total(&mut count);
    let (rows, total) = page_rows::<DB, QuotePageRow>(c, q, count, page, true).await?;
    let items = rows
        .into_iter()
        .map(|r| Ok(r.quote.into_domain()?.as_of(now)))
        .collect::<StoreResult<Vec<_>>>()?;
    Ok(Page::new(items, total))
}

/// The quote `id` as of `now` (`None` when there is none, or when it is not `account`'s).
async fn read_quote<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    account: Option<AccountId>,
    id: QuoteId,
    now: DateTime<Utc>,
) -> StoreResult<Option<Quote>> {
    let mut q =
        QueryBuilder::<DB>::new(concat!(quote_columns!(), quote_tables!(), " WHERE q.id = "));
    q.push_arg(id.get());
    if let Some(account) = account {
        q.push(" AND q.account_id = ").push_arg(account.get());
    }
    let row: Option<QuoteRow> = q
        .build_as::<QuoteRow>()
        .fetch_optional(&mut *c)
        .await
        .map_err(backend)?;
    row.map(|r| Ok(r.into_domain()?.as_of(now))).transpose()
}

/// Locks the quote stored pending on `variant` (live, or expired by now), if any: its id,
/// `valid_until` (microseconds) and supplier.
async fn lock_pending_quote_of<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    variant: VariantId,
) -> StoreResult<Option<(i64, Option<i64>, i64)>> {
    query_as::<DB, (i64, Option<i64>, i64)>(sqlx::AssertSqlSafe(format!(
        "SELECT id, valid_until, account_id FROM quotes \
         WHERE variant_id = $1 AND status = 'pending'{}",
        DB::FOR_UPDATE
    )))
    .bind(variant)
    .fetch_optional(&mut *c)
    .await
    .map_err(backend)
}

/// Locks the quotes stored pending on the variants of `product`, in id order, and returns
/// their ids (some may have expired by now).
pub(crate) async fn lock_pending_quotes<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    product: ProductId,
) -> StoreResult<Vec<QuoteId>> {
    let ids: Vec<i64> = query_scalar::<DB, i64>(sqlx::AssertSqlSafe(format!(
        "SELECT id FROM quotes WHERE status = 'pending' \
         AND variant_id IN (SELECT id FROM variants WHERE product_id = $1) ORDER BY id{}",
        DB::FOR_UPDATE
    )))
    .bind(product)
    .fetch_all(&mut *c)
    .await
    .map_err(backend)?;
    Ok(ids.into_iter().map(QuoteId::new).collect())
}

/// Ends the quotes `ids` (locked by [`lock_pending_quotes`]) because their product moved to
/// another supplier ([`Quote::end_for_moved_product`]): withdrawn, or written expired when
/// they expired by `now`.
pub(crate) async fn end_pending_quotes<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    ids: &[QuoteId],
    now: DateTime<Utc>,
) -> StoreResult<()> {
    for id in ids {
        let Some(mut quote) = read_quote(c, None, *id, now).await? else {
            continue;
        };
        quote.end_for_moved_product(now);
        query::<DB>(
            "UPDATE quotes SET status = $2, decision_note = $3, decided_at = $4, \
             updated_at = $5 WHERE id = $1",
        )
        .bind(*id)
        .bind(quote.status.as_str())
        .bind(&quote.decision_note)
        .bind(opt_nanos(quote.decided_at)?)
        .bind(nanos(quote.updated_at)?)
        .execute(&mut *c)
        .await
        .map_err(backend)?;
        queue_quote_event(c, &quote).await?;
    }
    Ok(())
}

/// The outbox of a quote's move out of `pending`, in the move's transaction: its
/// `quote.updated` event for the supplier's endpoints that receive it.
async fn queue_quote_event<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    quote: &Quote,
) -> StoreResult<()> {
    OutboxEvent::new(
        quote.account_id,
        NewEvent::quote(quote, QuoteStatus::Pending),
    )
    .queue(c)
    .await
}

/// Writes the quote `id` expired if it is still stored pending (and past its end by `now`),
/// with its event; whether it did.
async fn expire_quote<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    id: i64,
    now: DateTime<Utc>,
) -> StoreResult<bool> {
    let written = query::<DB>(
        "UPDATE quotes SET status = 'expired', updated_at = CASE \
         WHEN valid_until > updated_at THEN valid_until ELSE updated_at END \
         WHERE id = $1 AND status = 'pending' AND valid_until <= $2",
    )
    .bind(id)
    .bind(nanos(now)?)
    .execute(&mut *c)
    .await
    .map_err(backend)?
    .rows_affected();
    if written == 0 {
        return Ok(false);
    }
    if let Some(quote) = read_quote(c, None, QuoteId::new(id), now).await? {
        queue_quote_event(c, &quote).await?;
    }
    Ok(true)
}

#[async_trait]
impl<DB: Dialect> SupplyStore for SqlStore<DB> {
    async fn insert_quote(
        &self,
        new: NewQuote,
        claim: Option<&IdempotencyClaim>,
        now: DateTime<Utc>,
    ) -> Result<Quote, InsertQuoteError> {
        let at = nanos(now)?;
        let price = cents(new.unit_price)?;
        let until = opt_nanos(new.valid_until)?;
        retrying(|| {
            let new = new.clone();
            async move {
                let mut tx = self.write().await?;
                let result = async {
                    let c = &mut tx.tx;
                    // The variant's quote stored pending, locked until the end: live, or expired.
                    let stored = lock_pending_quote_of(c, new.variant_id).await?;
                    // The product's supplier as it stands. A supplier change that commits
                    // meanwhile ends the pending quotes it finds; one the former supplier
                    // inserts at that very moment stays pending, and is ended here when the
                    // new supplier quotes (`NewQuote::admit`).
                    let supplier: Option<Option<i64>> = query_scalar::<DB, Option<i64>>(
                        "SELECT p.supplier_id FROM variants v JOIN products p ON p.id = v.product_id \
                         WHERE v.id = $1",
                    )
                    .bind(new.variant_id)
                    .fetch_optional(&mut *c)
                    .await
                    .map_err(backend)?;
                    let live = stored
                        .filter(|&(_, until, _)| until.is_none_or(|until| until > at))
                        .map(|(id, _, owner)| (QuoteId::new(id), AccountId::new(owner)));
                    let former = new.admit(supplier.flatten().map(AccountId::new), live)?;
                    if let Some(former) = former {
                        end_pending_quotes(c, &[former], now).await?;
                    } else if let Some((stale, _, _)) = stored {
                        // Expired (`admit` refused a live one of the supplier's own): written
                        // so, last updated when it expired, with its event.
                        expire_quote(c, stale, now).await?;
                    }
                    // A concurrent insert on the variant that committed first (PostgreSQL)
                    // makes this one conflict: its quote names the conflict, unless it is a
                    // former supplier's (inserted while the product moved), which is ended as
                    // the move would have ended it and the insert tried again.
                    let mut ended = None;
                    let id = loop {
                        let inserted: Option<i64> = query_scalar::<DB, i64>(
                            "INSERT INTO quotes (account_id, variant_id, unit_price, quantity, \
                             status, valid_until, note, created_at, updated_at) \
                             VALUES ($1, $2, $3, $4, 'pending', $5, $6, $7, $7) \
                             ON CONFLICT DO NOTHING RETURNING id",
                        )
                        .bind(new.account_id)
                        .bind(new.variant_id)
                        .bind(price)
                        .bind(new.quantity)
                        .bind(until)
                        .bind(&new.note)
                        .bind(at)
                        .fetch_optional(&mut *c)
                        .await
                        .map_err(backend)?;
                        if let Some(id) = inserted {
                            break id;
                        }
                        let winner = lock_pending_quote_of(c, new.variant_id)
                            .await?
                            .map(|(id, _, owner)| (id, owner));
                        match winner {
                            Some((existing, owner))
                                if owner == new.account_id.get() || ended == Some(existing) =>
                            {
                                return Err(InsertQuoteError::Pending {
                                    existing: QuoteId::new(existing),
                                });
                            }
                            Some((former, _)) => {
                                end_pending_quotes(c, &[QuoteId::new(former)], now).await?;
                                ended = Some(former);
                            }
                            // Decided meanwhile: the variant is free again.
                            None => {}
                        }
                    };
                    if let Some(claim) = claim {
                        // Fenced as an order's placement: a request that lost its record to a retry
                        // registers nothing (the transaction rolls back).
                        if !link_record(c, claim, Created::Quote(QuoteId::new(id))).await? {
                            return Err(InsertQuoteError::IdempotencyLost);
                        }
                    }
                    read_quote(c, None, QuoteId::new(id), now)
                        .await?
                        .ok_or_else(|| StoreError::NotFound.into())
                }
                .await;
                tx.finish(result).await
            }
        })
        .await
    }

    async fn quote(
        &self,
        account: Option<AccountId>,
        id: QuoteId,
        now: DateTime<Utc>,
    ) -> StoreResult<Option<Quote>> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        read_quote(&mut c, account, id, now).await
    }

    async fn quotes(
        &self,
        account: AccountId,
        filter: &QuoteFilter,
        page_request: PageRequest,
        now: DateTime<Utc>,
    ) -> StoreResult<Page<Quote>> {
        let at = bound_nanos(now);
        let conditions = |q: &mut QueryBuilder<DB>| {
            q.push(" WHERE q.account_id = ").push_arg(account.get());
            if let Some(variant) = filter.variant_id {
                q.push(" AND q.variant_id = ").push_arg(variant.get());
            }
            if let Some(status) = filter.status {
                q.push(" AND ");
                push_status(q, status, at);
            }
            if let Some(since) = filter.updated_since {
                q.push(" AND ");
                push_updated_since(q, bound_nanos(since), at);
            }
        };
        let mut c = self.pool.acquire().await.map_err(backend)?;
        quote_page(
            &mut c,
            conditions,
            QuoteOrder::NewestFirst,
            page_request,
            now,
        )
        .await
    }

    async fn find_quotes(
        &self,
        query: &QuoteQuery,
        page_request: PageRequest,
        now: DateTime<Utc>,
    ) -> StoreResult<Page<Quote>> {
        let at = bound_nanos(now);
        let conditions = |q: &mut QueryBuilder<DB>| {
            q.push(" WHERE 1 = 1");
            if let Some(account) = query.account_id {
                q.push(" AND q.account_id = ").push_arg(account.get());
            }
            if let Some(variant) = query.variant_id {
                q.push(" AND q.variant_id = ").push_arg(variant.get());
            }
            if let Some(status) = query.status {
                q.push(" AND ");
                push_status(q, status, at);
            }
        };
        let mut c = self.pool.acquire().await.map_err(backend)?;
        quote_page(
            &mut c,
            conditions,
            QuoteOrder::PendingFirst,
            page_request,
            now,
        )
        .await
    }

    async fn decide_quote(
        &self,
        account: Option<AccountId>,
        id: QuoteId,
        decision: QuoteDecision,
        now: DateTime<Utc>,
    ) -> Result<Quote, QuoteDecisionError> {
        let at = nanos(now)?;
        retrying(|| {
            let decision = decision.clone();
            async move {
                let mut tx = self.write().await?;
                let result = async {
                    let c = &mut tx.tx;
                    // The quote's row, locked until the end: a quote is decided once.
                    let mut lock = QueryBuilder::<DB>::new("SELECT id FROM quotes WHERE id = ");
                    lock.push_arg(id.get());
                    if let Some(account) = account {
                        lock.push(" AND account_id = ").push_arg(account.get());
                    }
                    lock.push(DB::FOR_UPDATE);
                    let locked: Option<i64> = lock
                        .build_scalar::<i64>()
                        .fetch_optional(&mut *c)
                        .await
                        .map_err(backend)?;
                    if locked.is_none() {
                        return Err(QuoteDecisionError::NotFound);
                    }
                    let mut quote = read_quote(c, None, id, now)
                        .await?
                        .ok_or(QuoteDecisionError::NotFound)?;
                    // The product's supplier now: a quote made while its product moved to
                    // another supplier is ended, never accepted.
                    let supplier: Option<i64> = query_scalar::<DB, Option<i64>>(
                        "SELECT p.supplier_id FROM variants v \
                         JOIN products p ON p.id = v.product_id WHERE v.id = $1",
                    )
                    .bind(quote.variant_id.get())
                    .fetch_optional(&mut *c)
                    .await
                    .map_err(backend)?
                    .flatten();
                    let decided =
                        quote.decide_as_supplied(&decision, supplier.map(AccountId::new), now)?;
                    query::<DB>(
                        "UPDATE quotes SET status = $2, decision_note = $3, decided_at = $4, \
                 updated_at = $5 WHERE id = $1",
                    )
                    .bind(id)
                    .bind(quote.status.as_str())
                    .bind(&quote.decision_note)
                    .bind(at)
                    .bind(nanos(quote.updated_at)?)
                    .execute(&mut *c)
                    .await
                    .map_err(backend)?;
                    if decided && let QuoteDecision::Accept { .. } = decision {
                        receive(c, &quote, now).await?;
                    }
                    queue_quote_event(c, &quote).await?;
                    Ok(quote)
                }
                .await;
                tx.finish(result).await
            }
        })
        .await
    }

    async fn expire_quotes(&self, now: DateTime<Utc>, limit: usize) -> StoreResult<u64> {
        let ids: Vec<i64> = query_scalar::<DB, i64>(
            "SELECT id FROM quotes WHERE status = 'pending' AND valid_until <= $1 \
             ORDER BY id LIMIT $2",
        )
        .bind(nanos(now)?)
        .bind(i64::try_from(limit).unwrap_or(i64::MAX))
        .fetch_all(&self.pool)
        .await
        .map_err(backend)?;
        let mut expired = 0;
        // One transaction per quote: a quote another write ended meanwhile is skipped.
        for id in ids {
            let written = retrying(|| async move {
                let mut tx = self.write().await?;
                let result = expire_quote(&mut tx.tx, id, now).await;
                tx.finish(result).await
            })
            .await?;
            expired += u64::from(written);
        }
        Ok(expired)
    }

    async fn supply_variants(
        &self,
        account: AccountId,
        updated_since: Option<DateTime<Utc>>,
        page_request: PageRequest,
        now: DateTime<Utc>,
    ) -> StoreResult<Page<SupplyVariant>> {
        let at = bound_nanos(now);
        let conditions = |q: &mut QueryBuilder<DB>| {
            q.push(" WHERE p.supplier_id = ").push_arg(account.get());
            if let Some(since) = updated_since {
                crate::products::push_changed_since(q, "p.id", since);
            }
        };
        let mut q = QueryBuilder::<DB>::new(
            "SELECT v.id, v.product_id, p.title AS product_title, v.label, v.supply_price, \
             v.available, (SELECT q.id FROM quotes q WHERE q.variant_id = v.id AND ",
        );
        push_status(&mut q, QuoteStatus::Pending, at);
        q.push(
            ") AS pending_quote_id, COUNT(*) OVER () AS total \
             FROM variants v JOIN products p ON p.id = v.product_id",
        );
        conditions(&mut q);
        q.push(" ORDER BY v.id");
        let mut count = QueryBuilder::<DB>::new(
            "SELECT COUNT(*) FROM variants v JOIN products p ON p.id = v.product_id",
        );
        conditions(&mut count);
        let mut c = self.pool.acquire().await.map_err(backend)?;
        let (rows, total) =
            page_rows::<DB, SupplyVariantRow>(&mut c, q, count, page_request, true).await?;
        let items = rows
            .into_iter()
            .map(|r| {
                SupplyVariant::builder()
                    .id(VariantId::new(r.id))
                    .product_id(ProductId::new(r.product_id))
                    .product_title(r.product_title)
                    .label(r.label)
                    .supply_price(commerce_core::money::from_piastres(r.supply_price))
                    .available(r.available)
                    .maybe_pending_quote_id(r.pending_quote_id.map(QuoteId::new))
                    .build()
            })
            .collect();
        Ok(Page::new(items, total))
    }
}

/// Accepting `quote`, in the decision's transaction: the variant's supply price and the
/// pieces received (a stock adjustment of reason `received` naming the quote).
async fn receive<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    quote: &Quote,
    now: DateTime<Utc>,
) -> Result<(), QuoteDecisionError> {
    query::<DB>("UPDATE variants SET supply_price = $2 WHERE id = $1")
        .bind(quote.variant_id)
        .bind(cents(quote.unit_price)?)
        .execute(&mut *c)
        .await
        .map_err(backend)?;
    // The supply price is part of what an order takes: the product's revision moves on.
    query::<DB>(
        "UPDATE products SET revision = revision + 1 \
         WHERE id = (SELECT product_id FROM variants WHERE id = $1)",
    )
    .bind(quote.variant_id)
    .execute(&mut *c)
    .await
    .map_err(backend)?;
    let adjustment = quote.received_pieces();
    crate::stock::adjust_stock_in(c, adjustment, now).await?;
    Ok(())
}
