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

/// One back-office query on one table: its filters (pushed by `filter`), its order, its page.
struct Query<'a, DB: Dialect> {
    table: &'static str,
    filter: &'a (dyn Fn(&mut Conditions<'_, DB>) + Sync),
    order_by: &'static str,
    count_limit: u64,
}

impl<DB: Dialect> Query<'_, DB> {
    /// `SELECT <columns> FROM <table> WHERE ... ORDER BY ... LIMIT ... OFFSET ...`.
    fn page(&self, columns: &str, page: PageRequest) -> StoreResult<QueryBuilder<DB>> {
        let mut q = QueryBuilder::<DB>::new(format!("SELECT {columns} FROM {}", self.table));
        (self.filter)(&mut Conditions::new(&mut q));
        q.push(format!(" ORDER BY {}", self.order_by));
        limit(&mut q, page)?;
        Ok(q)
    }

    /// The matching rows counted up to `count_limit + 1`: at most that many index entries.
    async fn count(&self, c: &mut PoolConnection<DB>) -> StoreResult<Count> {
        let mut q = QueryBuilder::<DB>::new(format!(
            "SELECT COUNT(*) FROM (SELECT 1 FROM {}",
            self.table
        ));
        (self.filter)(&mut Conditions::new(&mut q));
        q.push(" LIMIT ")
            .push_arg(Count::rows_to_count(self.count_limit))
            .push(") AS counted");
        let counted: i64 = q.build_scalar().fetch_one(&mut *c).await.map_err(backend)?;
        Ok(Count::of(counted.max(0) as u64, self.count_limit))
    }

    /// The page's rows (decoded by `R`) and the count.
    async fn run<R: FromDbRow<DB, Output = R>>(
        &self,
        c: &mut PoolConnection<DB>,
        columns: &str,
        page: PageRequest,
    ) -> StoreResult<(Vec<R>, Count)> {
        let rows: Vec<R> = self
            .page(columns, page)?
            .build_as::<R>()
            .fetch_all(&mut *c)
            .await
            .map_err(backend)?;
        Ok((rows, self.count(c).await?))
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

pub(crate) async fn find_orders<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    query: &OrderQuery,
    page: PageRequest,
) -> StoreResult<Listing<Order>> {
    let filter = |w: &mut Conditions<'_, DB>| {
        if let Some(status) = query.status {
            w.and().push("status = ").push_arg(status.as_str());
        }
        order_filters(query, w);
    };
    let q = Query {
        table: "orders",
        filter: &filter,
        order_by: by_created(query.sort),
        count_limit: query.count_limit,
    };
    let columns = format!(concat!(order_cols!(), ", {}"), DB::TIMELINE);
    let (rows, total) = q.run::<OrderRow>(c, &columns, page).await?;
    let ids: Vec<i64> = rows.iter().map(|r| r.id).collect();
    Ok(Listing {
        items: with_lines(c, &ids, rows).await?,
        total,
    })
}

/// Every status's count in one statement: one `UNION ALL` branch per status the query's
/// status and family filters let through, each counting at most `count_limit + 1` entries of
/// the `(status, created_at, id)` index (or the account's).
pub(crate) async fn order_status_counts<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    query: &OrderQuery,
) -> StoreResult<Vec<(OrderStatus, Count)>> {
    let statuses: Vec<OrderStatus> = query.counted_statuses().collect();
    let mut counted = std::collections::HashMap::new();
    if !statuses.is_empty() {
        let mut q = QueryBuilder::<DB>::new("");
        for (n, status) in statuses.iter().enumerate() {
            if n > 0 {
                q.push(" UNION ALL ");
            }
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

pub(crate) async fn find_accounts<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    query: &AccountQuery,
    page: PageRequest,
) -> StoreResult<Listing<Account>> {
    let filter = |w: &mut Conditions<'_, DB>| {
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
    let q = Query {
        table: "accounts",
        filter: &filter,
        order_by,
        count_limit: query.count_limit,
    };
    let (rows, total) = q.run::<AccountRow>(c, account_cols!(), page).await?;
    Ok(Listing {
        items: rows
            .into_iter()
            .map(AccountRow::into_domain)
            .collect::<StoreResult<_>>()?,
        total,
    })
}

fn withdrawal_filters<DB: Dialect>(query: &WithdrawalQuery, w: &mut Conditions<'_, DB>) {
    if let Some(account) = query.account {
        w.and().push("account_id = ").push_arg(account);
    }
    if let Some(status) = query.status {
        w.and().push("status = ").push_arg(status.as_str());
    }
}

pub(crate) async fn find_withdrawals<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    query: &WithdrawalQuery,
    page: PageRequest,
) -> StoreResult<Listing<Withdrawal>> {
    let filter = |w: &mut Conditions<'_, DB>| withdrawal_filters(query, w);
    let q = Query {
        table: "withdrawals",
        filter: &filter,
        order_by: by_created(query.sort),
        count_limit: query.count_limit,
    };
    let (rows, total) = q.run::<WithdrawalRow>(c, withdrawal_cols!(), page).await?;
    Ok(Listing {
        items: rows
            .into_iter()
            .map(WithdrawalRow::into_domain)
            .collect::<StoreResult<_>>()?,
        total,
    })
}

/// Count and sums in one statement (every matching row: the payout queue is short).
pub(crate) async fn withdrawal_totals<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    query: &WithdrawalQuery,
) -> StoreResult<WithdrawalTotals> {
    let mut q = QueryBuilder::<DB>::new(
        "SELECT COUNT(*), CAST(COALESCE(SUM(amount), 0) AS BIGINT), \
         CAST(COALESCE(SUM(supply_amount), 0) AS BIGINT) FROM withdrawals",
    );
    withdrawal_filters(query, &mut Conditions::new(&mut q));
    let (count, amount, supply): (i64, i64, i64) = q
        .build_as::<(i64, i64, i64)>()
        .fetch_one(&mut *c)
        .await
        .map_err(backend)?;
    Ok(WithdrawalTotals {
        count: count.max(0) as u64,
        amount: from_piastres(amount),
        supply_amount: from_piastres(supply),
    })
}

pub(crate) async fn find_webhooks<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    query: &WebhookQuery,
    page: PageRequest,
) -> StoreResult<Listing<Webhook>> {
    let filter = |w: &mut Conditions<'_, DB>| {
        if let Some(account) = query.account {
            w.and().push("account_id = ").push_arg(account);
        }
        if let Some(enabled) = query.enabled {
            w.and().push("enabled = ").push_arg(enabled);
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
    let q = Query {
        table: "webhook_endpoints",
        filter: &filter,
        order_by: "id",
        count_limit: query.count_limit,
    };
    let (rows, total) = q.run::<WebhookRow>(c, webhook_cols!(), page).await?;
    Ok(Listing {
        items: rows
            .into_iter()
            .map(WebhookRow::into_domain)
            .collect::<StoreResult<_>>()?,
        total,
    })
}
