//! The billing meter: products pulled and order operations per account and month.

use async_trait::async_trait;
use commerce_core::model::*;
use commerce_core::store::*;
use sqlx::QueryBuilder;
use sqlx::pool::PoolConnection;

use crate::MAX_BIND_CHUNK;
use crate::dialect::*;
use crate::rows::*;
use crate::sql_store::*;

/// The conflict clause of the one-operation upsert into `meter_order_operations` (a macro, so
/// that `concat!` builds `&'static str` statements with it).
macro_rules! meter_upsert {
    () => {
        " ON CONFLICT (account_id, month) \
         DO UPDATE SET operations = meter_order_operations.operations + 1"
    };
}
pub(crate) use meter_upsert;

/// Counts one order operation of `account` in `month`'s meter (nothing for `None`).
pub(crate) async fn bill<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    account: i64,
    month: Option<&BillingMonth>,
) -> StoreResult<()> {
    if let Some(month) = month {
        query::<DB>(concat!(
            "INSERT INTO meter_order_operations (account_id, month, operations) \
             VALUES ($1, $2, 1)",
            meter_upsert!()
        ))
        .bind(account)
        .bind(month.as_str())
        .execute(&mut *c)
        .await
        .map_err(backend)?;
    }
    Ok(())
}

#[async_trait]
impl<DB: Dialect> MeterStore for SqlStore<DB> {
    async fn record_pulls(
        &self,
        account: AccountId,
        month: &BillingMonth,
        products: &[ProductId],
    ) -> StoreResult<()> {
        if products.is_empty() {
            return Ok(());
        }
        let mut ids = products.to_vec();
        ids.sort_unstable();
        ids.dedup();
        let insert = |chunk: &[ProductId]| {
            let mut q =
                QueryBuilder::<DB>::new("INSERT INTO meter_pulls (account_id, month, product_id) ");
            q.push_values(chunk, |mut row, product| {
                row.push_arg(account)
                    .push_arg(month.as_str())
                    .push_arg(*product);
            });
            q.push(" ON CONFLICT DO NOTHING");
            q
        };
        if !DB::SINGLE_STATEMENT_TX && ids.len() <= MAX_BIND_CHUNK {
            // One statement, atomic by itself: no transaction to open or commit.
            insert(&ids)
                .build_statement()
                .execute(&self.pool)
                .await
                .map_err(backend)?;
            return Ok(());
        }
        let mut tx = self.write().await?;
        let result = async {
            for chunk in ids.chunks(MAX_BIND_CHUNK) {
                insert(chunk)
                    .build_statement()
                    .execute(&mut tx.tx)
                    .await
                    .map_err(backend)?;
            }
            Ok(())
        }
        .await;
        tx.finish(result).await
    }

    async fn meter(&self, account: AccountId, month: &BillingMonth) -> StoreResult<MeterReading> {
        let mut tx = self.read().await?;
        let result = async {
            let c = &mut tx.tx;
            let pulled: i64 = query_scalar::<DB, i64>(
                "SELECT COUNT(*) FROM meter_pulls WHERE account_id = $1 AND month = $2",
            )
            .bind(account)
            .bind(month.as_str())
            .fetch_one(&mut *c)
            .await
            .map_err(backend)?;
            let operations: Option<i64> = query_scalar::<DB, i64>(
                "SELECT operations FROM meter_order_operations \
                 WHERE account_id = $1 AND month = $2",
            )
            .bind(account)
            .bind(month.as_str())
            .fetch_optional(&mut *c)
            .await
            .map_err(backend)?;
            Ok(MeterReading::new(
                pulled as u64,
                operations.unwrap_or(0) as u64,
            ))
        }
        .await;
        tx.finish(result).await
    }
}
