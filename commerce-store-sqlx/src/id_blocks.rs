//! Ids drawn ahead from the identities of `orders` and `order_lines` (PostgreSQL), for the
//! orders `checkout` places in one statement.

use std::sync::{Mutex, PoisonError};

use commerce_core::store::StoreError;
use sqlx::pool::PoolConnection;

use crate::dialect::*;
use crate::rows::{backend, corrupt};

/// How many ids a store draws from an identity at a time.
const BLOCK: usize = 64;

/// Ids drawn ahead from the identities of `orders` and `order_lines` (PostgreSQL), each taken
/// once: an order placed in one statement writes its ids itself. Ids drawn and not used are
/// gaps, as a rolled-back insert leaves.
#[derive(Debug, Default)]
pub(crate) struct IdBlocks {
    orders: Mutex<Vec<i64>>,
    lines: Mutex<Vec<i64>>,
}

impl IdBlocks {
    /// An order's id and `lines` ids for its lines, in increasing order; drawing a block from
    /// the database on `c` when too few are left.
    pub(crate) async fn take<DB: Dialect>(
        &self,
        c: &mut PoolConnection<DB>,
        lines: usize,
    ) -> Result<(i64, Vec<i64>), StoreError> {
        let order = take_from(&self.orders, c, "orders", 1).await?;
        let order = order
            .first()
            .copied()
            .ok_or_else(|| corrupt("no order id"))?;
        Ok((
            order,
            take_from(&self.lines, c, "order_lines", lines).await?,
        ))
    }
}

/// `n` ids from `cache`, refilled from `table`'s identity when it holds fewer.
async fn take_from<DB: Dialect>(
    cache: &Mutex<Vec<i64>>,
    c: &mut PoolConnection<DB>,
    table: &'static str,
    n: usize,
) -> Result<Vec<i64>, StoreError> {
    {
        let mut ids = cache.lock().unwrap_or_else(PoisonError::into_inner);
        if ids.len() >= n {
            return Ok(ids.drain(..n).collect());
        }
    }
    let want = i64::try_from(BLOCK.max(n)).map_err(|_| corrupt("id block"))?;
    let drawn: Vec<i64> = query_scalar::<DB, i64>(
        "SELECT nextval(pg_get_serial_sequence($1, 'id')) FROM generate_series(1, $2)",
    )
    .bind(table)
    .bind(want)
    .fetch_all(&mut *c)
    .await
    .map_err(backend)?;
    let mut ids = cache.lock().unwrap_or_else(PoisonError::into_inner);
    ids.extend(drawn);
    ids.sort_unstable();
    if ids.len() < n {
        return Err(corrupt("too few ids drawn"));
    }
    Ok(ids.drain(..n).collect())
}
