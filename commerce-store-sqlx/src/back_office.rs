//! The back office's queries across accounts: orders, accounts, withdrawals and webhook
//! endpoints, a page at a time, each with its count stopped at the query's limit.
//!
//! Every query is built from the filters it has (no `($1 IS NULL OR ...)`), so that the planner
//! sees which index leads (`migrations/*_back_office.sql`): a page reads its rows and the
//! count at most `count_limit + 1` index entries, whatever the table's size.

use commerce_core::model::*;
use commerce_core::money::from_piastres;
use sqlx::QueryBuilder;
use sqlx::pool::PoolConnection;

use crate::dialect::*;
use crate::order_reads::{limit, with_lines};
use crate::rows::*;
use crate::sql_store::*;

/// The conditions of a `WHERE` clause, pushed one by one (` WHERE ` before the first, ` AND `
/// before the others).
struct Conditions<'q, DB: Dialect> {
    q: &'q mut QueryBuilder<DB>,
    first: bool,
}

impl<'q, DB: Dialect> Conditions<'q, DB> {
    fn new(q: &'q mut QueryBuilder<DB>) -> Self {
        Self { q, first: true }
    }

    /// The builder, ready for the next condition.
    fn and(&mut self) -> &mut QueryBuilder<DB> {
        self.q.push(if self.first { " WHERE " } else { " AND " });
        self.first = false;
        self.q
    }

    /// `column >= from AND column < until` for the ends `range` has.
    fn range(&mut self, column: &str, range: &TimeRange) {
        if let Some(from) = range.from {
            self.and()
                .push(format!("{column} >= "))
                .push_arg(bound_nanos(from));
        }
        if let Some(until) = range.until {
            self.and()
                .push(format!("{column} < "))
                .push_arg(bound_nanos(until));
        }
    }
}

/// The filters of a query, pushed onto a statement's `WHERE` clause.
type Filter<'a, DB> = Box<dyn Fn(&mut Conditions<'_, DB>) + Send + Sync + 'a>;

/// One back-office query on one table: its filters, its order, its count's limit.
struct Query<'a, DB: Dialect> {
    table: &'static str,
    filter: Filter<'a, DB>,
    order_by: &'static str,
    count_limit: u64,
}

impl<DB: Dialect> Query<'_, DB> {
    /// `<prefix>SELECT <columns> FROM <table> WHERE id IN (SELECT id FROM <table> WHERE ...
    /// ORDER BY ... LIMIT ... OFFSET ...) ORDER BY ...`: the page's ids are chosen first, on the
    /// index alone, and only then are its rows read. The rows an `OFFSET` skips stay index
    /// entries, and a column's subquery (an order's timeline) runs for the page's rows only:
    /// a deep page costs its own rows, not every row before it.
    fn page_sql(
        &self,
        prefix: &str,
        columns: &str,
        page: PageRequest,
    ) -> StoreResult<QueryBuilder<DB>> {
        let table = self.table;
        let mut q = QueryBuilder::<DB>::new(format!(
            "{prefix}SELECT {columns} FROM {table} WHERE id IN (SELECT id FROM {table}"
        ));
        (self.filter)(&mut Conditions::new(&mut q));
        q.push(format!(" ORDER BY {}", self.order_by));
        limit(&mut q, page)?;
        q.push(format!(") ORDER BY {}", self.order_by));
        Ok(q)
    }

    /// The matching rows counted up to `count_limit + 1`: at most that many index entries.
    fn count_sql(&self, prefix: &str) -> QueryBuilder<DB> {
        let mut q = QueryBuilder::<DB>::new(format!(
            "{prefix}SELECT COUNT(*) FROM (SELECT 1 FROM {}",
            self.table
        ));
        (self.filter)(&mut Conditions::new(&mut q));
        q.push(" LIMIT ")
            .push_arg(Count::rows_to_count(self.count_limit))
            .push(") AS counted");
        q
    }

    /// The page's rows (decoded by `R`) and the count.
    async fn run<R: FromDbRow<DB, Output = R>>(
        &self,
        c: &mut PoolConnection<DB>,
        columns: &str,
        page: PageRequest,
    ) -> StoreResult<(Vec<R>, Count)> {
        let rows: Vec<R> = self
            .page_sql("", columns, page)?
            .build_as::<R>()
            .fetch_all(&mut *c)
            .await
            .map_err(backend)?;
        let counted: i64 = self
            .count_sql("")
            .build_scalar()
            .fetch_one(&mut *c)
            .await
            .map_err(backend)?;
        Ok((rows, Count::of(counted.max(0) as u64, self.count_limit)))
    }

    /// The page's statement and the count's.
    fn statements(
        &self,
        prefix: &str,
        columns: &str,
        page: PageRequest,
    ) -> StoreResult<Vec<QueryBuilder<DB>>> {
        Ok(vec![
            self.page_sql(prefix, columns, page)?,
            self.count_sql(prefix),
        ])
    }
}

/// `created_at` then `id` in `sort`'s direction.
fn by_created(sort: SortOrder) -> &'static str {
    match sort {
        SortOrder::NewestFirst => "created_at DESC, id DESC",
        SortOrder::OldestFirst => "created_at, id",
    }
}

/// The filters of `query` but its status (the counts per status add their own).
fn order_filters<DB: Dialect>(query: &OrderQuery, w: &mut Conditions<'_, DB>) {
    if let Some(account) = query.account {
        w.and().push("account_id = ").push_arg(account);
    }
    if let Some(family) = query.family {
        w.and().push("family = ").push_arg(family.as_str());
    }
    w.range("created_at", &query.created);
    w.range("updated_at", &query.updated);
    if let Some(number) = &query.number {
        w.and()
            .push("(number_normalized = ")
            .push_arg(number.clone())
            .push(" OR legacy_number = ")
            .push_arg(number.clone())
            .push(")");
    }
    if let Some(reference) = &query.external_reference {
        w.and()
            .push("external_reference = ")
            .push_arg(reference.clone());
    }
}

fn orders_query<'a, DB: Dialect>(query: &'a OrderQuery) -> Query<'a, DB> {
    Query {
        table: "orders",
        filter: Box::new(move |w: &mut Conditions<'_, DB>| {
            if let Some(status) = query.status {
                w.and().push("status = ").push_arg(status.as_str());
            }
            order_filters(query, w);
        }),
        order_by: by_created(query.sort),
        count_limit: query.count_limit,
    }
}

pub(crate) async fn find_orders<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    query: &OrderQuery,
    page: PageRequest,
) -> StoreResult<Listing<Order>> {
    let q = orders_query::<DB>(query);
    let (rows, total) = q.run::<OrderRow>(c, order_cols!(), page).await?;
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    Ok(Listing::new(with_lines(c, &ids, rows).await?, total))
}

/// Every status's count in one statement: one `UNION ALL` branch per status the query's
/// status and family filters let through, each counting at most `count_limit + 1` entries of
/// the `(status, created_at, id)` index (or the account's).
fn status_counts_sql<DB: Dialect>(prefix: &str, query: &OrderQuery) -> Option<QueryBuilder<DB>> {
    let mut q = QueryBuilder::<DB>::new(prefix);
    let mut any = false;
    for (n, status) in query.counted_statuses().enumerate() {
        if n > 0 {
            q.push(" UNION ALL ");
        }
        any = true;
        // The label is one of the enum's own spellings, never input.
        q.push(format!(
            "SELECT '{}' AS status, COUNT(*) AS counted FROM (SELECT 1 FROM orders",
            status.as_str()
        ));
        let mut w = Conditions::new(&mut q);
        w.and().push("status = ").push_arg(status.as_str());
        order_filters(query, &mut w);
        q.push(" LIMIT ")
            .push_arg(Count::rows_to_count(query.count_limit))
            .push(format!(") AS c{n}"));
    }
    any.then_some(q)
}

pub(crate) async fn order_status_counts<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    query: &OrderQuery,
) -> StoreResult<Vec<(OrderStatus, Count)>> {
    let mut counted = std::collections::HashMap::new();
    if let Some(mut q) = status_counts_sql::<DB>("", query) {
        let rows: Vec<(String, i64)> = q
            .build_as::<(String, i64)>()
            .fetch_all(&mut *c)
            .await
            .map_err(backend)?;
        counted.extend(rows);
    }
    Ok(OrderStatus::ALL
        .iter()
        .map(|s| {
            let n = counted.get(s.as_str()).copied().unwrap_or(0).max(0) as u64;
            (*s, Count::of(n, query.count_limit))
        })
        .collect())
}

fn accounts_query<'a, DB: Dialect>(query: &'a AccountQuery) -> Query<'a, DB> {
    let filter = move |w: &mut Conditions<'_, DB>| {
        if let Some(side) = query.side {
            w.and().push("side = ").push_arg(side.as_str());
        }
        if let Some(state) = query.state {
            w.and().push("state = ").push_arg(state.as_str());
        }
        if let Some(status) = query.api_status {
            w.and().push("api_status = ").push_arg(status.as_str());
        }
        if let Some(needle) = &query.search {
            let w = w.and();
            for (n, column) in ["name", "email", "phone", "store_name"].iter().enumerate() {
                w.push(if n == 0 { "(" } else { " OR " })
                    .push(format!(
                        "{}({}, ",
                        DB::INSTR,
                        DB::FOLD_CASE.replace("{}", column)
                    ))
                    .push_arg(needle.clone())
                    .push(") > 0");
            }
            w.push(")");
        }
    };
    let order_by = match query.sort {
        AccountSort::OldestFirst => "created_at, id",
        AccountSort::ApiStatusOldestFirst => "api_status_at, id",
        _ => "created_at DESC, id DESC",
    };
    Query {
        table: "accounts",
        filter: Box::new(filter),
        order_by,
        count_limit: query.count_limit,
    }
}

pub(crate) async fn find_accounts<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    query: &AccountQuery,
    page: PageRequest,
) -> StoreResult<Listing<Account>> {
    let q = accounts_query::<DB>(query);
    let (rows, total) = q.run::<AccountRow>(c, account_cols!(), page).await?;
    Ok(Listing::new(
        rows.into_iter()
            .map(AccountRow::into_domain)
            .collect::<StoreResult<_>>()?,
        total,
    ))
}

fn withdrawal_filters<DB: Dialect>(query: &WithdrawalQuery, w: &mut Conditions<'_, DB>) {
    if let Some(account) = query.account {
        w.and().push("account_id = ").push_arg(account);
    }
    if let Some(status) = query.status {
        w.and().push("status = ").push_arg(status.as_str());
    }
}

fn withdrawals_query<'a, DB: Dialect>(query: &'a WithdrawalQuery) -> Query<'a, DB> {
    Query {
        table: "withdrawals",
        filter: Box::new(move |w: &mut Conditions<'_, DB>| withdrawal_filters(query, w)),
        order_by: by_created(query.sort),
        count_limit: query.count_limit,
    }
}

pub(crate) async fn find_withdrawals<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    query: &WithdrawalQuery,
    page: PageRequest,
) -> StoreResult<Listing<Withdrawal>> {
    let q = withdrawals_query::<DB>(query);
    let (rows, total) = q.run::<WithdrawalRow>(c, withdrawal_cols!(), page).await?;
    Ok(Listing::new(
        rows.into_iter()
            .map(WithdrawalRow::into_domain)
            .collect::<StoreResult<_>>()?,
        total,
    ))
}

/// Count and sums in one statement (every matching row: the payout queue is short).
fn withdrawal_totals_sql<DB: Dialect>(prefix: &str, query: &WithdrawalQuery) -> QueryBuilder<DB> {
    let mut q = QueryBuilder::<DB>::new(format!(
        "{prefix}SELECT COUNT(*), CAST(COALESCE(SUM(amount), 0) AS BIGINT), \
         CAST(COALESCE(SUM(supply_amount), 0) AS BIGINT) FROM withdrawals"
    ));
    withdrawal_filters(query, &mut Conditions::new(&mut q));
    q
}

pub(crate) async fn withdrawal_totals<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    query: &WithdrawalQuery,
) -> StoreResult<WithdrawalTotals> {
    let (count, amount, supply): (i64, i64, i64) = withdrawal_totals_sql::<DB>("", query)
        .build_as::<(i64, i64, i64)>()
        .fetch_one(&mut *c)
        .await
        .map_err(backend)?;
    Ok(WithdrawalTotals::new(
        count.max(0) as u64,
        from_piastres(amount),
        from_piastres(supply),
    ))
}

fn webhooks_query<'a, DB: Dialect>(query: &'a WebhookQuery) -> Query<'a, DB> {
    let filter = move |w: &mut Conditions<'_, DB>| {
        if let Some(account) = query.account {
            w.and().push("account_id = ").push_arg(account);
        }
        if let Some(enabled) = query.enabled {
            // A literal (not input), so that both planners match the partial index of the
            // disabled endpoints (`migrations/*_back_office_pages.sql`).
            w.and().push(if enabled {
                "enabled = TRUE"
            } else {
                "enabled = FALSE"
            });
        }
        if let Some(reason) = query.disabled_reason {
            w.and().push("disabled_reason = ").push_arg(reason.as_str());
        }
        if let Some(at_least) = query.failed_attempts_at_least.filter(|n| *n > 0) {
            // `> 0` as written in the partial index's predicate, so that both planners use it.
            w.and()
                .push("failed_attempts > 0 AND failed_attempts >= ")
                .push_arg(i64::from(at_least));
        }
    };
    Query {
        table: "webhook_endpoints",
        filter: Box::new(filter),
        order_by: "id",
        count_limit: query.count_limit,
    }
}

pub(crate) async fn find_webhooks<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    query: &WebhookQuery,
    page: PageRequest,
) -> StoreResult<Listing<Webhook>> {
    let q = webhooks_query::<DB>(query);
    let (rows, total) = q.run::<WebhookRow>(c, webhook_cols!(), page).await?;
    Ok(Listing::new(
        rows.into_iter()
            .map(WebhookRow::into_domain)
            .collect::<StoreResult<_>>()?,
        total,
    ))
}

/// A back-office query whose statements [`SqlStore::explain`] shows the plans of.
#[doc(hidden)]
#[derive(Debug, Clone, Copy)]
pub enum Explain<'a> {
    /// `find_orders`.
    Orders(&'a OrderQuery, PageRequest),
    /// `order_status_counts`.
    StatusCounts(&'a OrderQuery),
    /// `find_accounts`.
    Accounts(&'a AccountQuery, PageRequest),
    /// `find_withdrawals`.
    Withdrawals(&'a WithdrawalQuery, PageRequest),
    /// `withdrawal_totals`.
    WithdrawalTotals(&'a WithdrawalQuery),
    /// `find_webhooks`.
    Webhooks(&'a WebhookQuery, PageRequest),
}

/// The plan's text of a row of `EXPLAIN` (the dialect's column).
struct PlanLine;

impl<DB: Dialect> FromDbRow<DB> for PlanLine {
    type Output = String;
    fn from_db_row(row: &DB::Row) -> Result<String, sqlx::Error> {
        DB::get_at(row, DB::EXPLAIN.1)
    }
}

/// The plan the database chooses for each statement of a back-office query, the statements
/// built exactly as the store runs them (`EXPLAIN QUERY PLAN` on SQLite, `EXPLAIN` on
/// PostgreSQL), one text per statement: what the benches print to show which index serves
/// each query (`PgStore::explain`, `SqliteStore::explain`).
pub(crate) async fn explain<DB: Dialect>(
    store: &SqlStore<DB>,
    what: Explain<'_>,
) -> StoreResult<Vec<String>> {
    let prefix = DB::EXPLAIN.0;
    let statements = match what {
        Explain::Orders(q, page) => {
            orders_query::<DB>(q).statements(prefix, order_cols!(), page)?
        }
        Explain::StatusCounts(q) => status_counts_sql::<DB>(prefix, q).into_iter().collect(),
        Explain::Accounts(q, page) => {
            accounts_query::<DB>(q).statements(prefix, account_cols!(), page)?
        }
        Explain::Withdrawals(q, page) => {
            withdrawals_query::<DB>(q).statements(prefix, withdrawal_cols!(), page)?
        }
        Explain::WithdrawalTotals(q) => vec![withdrawal_totals_sql::<DB>(prefix, q)],
        Explain::Webhooks(q, page) => {
            webhooks_query::<DB>(q).statements(prefix, webhook_cols!(), page)?
        }
    };
    let mut c = store.pool.acquire().await.map_err(backend)?;
    let mut plans = Vec::with_capacity(statements.len());
    for mut statement in statements {
        let lines: Vec<String> = statement
            .build_as::<PlanLine>()
            .fetch_all(&mut c)
            .await
            .map_err(backend)?;
        plans.push(lines.join("\n"));
    }
    Ok(plans)
}
