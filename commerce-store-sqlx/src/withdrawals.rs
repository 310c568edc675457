//! Withdrawal requests.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use commerce_core::model::*;
use commerce_core::store::*;
use sqlx::AssertSqlSafe;

use crate::dialect::*;
use crate::orders::wallet_totals;
use crate::outbox::OutboxEvent;
use crate::rows::*;
use crate::sql_store::*;
use crate::statement::book_supply;

#[async_trait]
impl<DB: Dialect> WithdrawalStore for SqlStore<DB> {
    async fn request_withdrawal(
        &self,
        new: NewWithdrawal,
        held_after: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, WithdrawalRequestError> {
        let at = nanos(now)?;
        let (amount, supply) = (cents(new.amount)?, cents(new.supply_amount)?);
        retrying(|| async {
            let mut tx = self.write().await?;
            let result = async {
                let c = &mut tx.tx;
                // The account row is the lock that puts requests of one account in a row (on
                // SQLite the write transaction already does): each reads the balance the one
                // before it left.
                let side: Option<String> = query_scalar::<DB, String>(AssertSqlSafe(format!(
                    "SELECT side FROM accounts WHERE id = $1{}",
                    DB::FOR_NO_KEY_UPDATE
                )))
                .bind(new.account_id)
                .fetch_optional(&mut *c)
                .await
                .map_err(backend)?;
                let Some(side) = side else {
                    return Err(StoreError::NotFound.into());
                };
                let side = crate::rows::side(&side)?;
                if side == Side::Supplier {
                    // The supplier's kept totals locked before they are read: a correction that
                    // debits them either committed before (and is read) or waits for this request
                    // (and is refused if it no longer fits), so the request never takes money that
                    // a correction took back.
                    query::<DB>(AssertSqlSafe(format!(
                        "SELECT balance FROM supplier_totals WHERE supplier_id = $1{}",
                        DB::FOR_NO_KEY_UPDATE
                    )))
                    .bind(new.account_id)
                    .execute(&mut *c)
                    .await
                    .map_err(backend)?;
                }
                let wallet = wallet_totals(&mut *c, new.account_id, held_after).await?;
                let withdrawn = crate::wallet::withdrawn(c, new.account_id).await?;
                new.admit(&wallet, withdrawn)?;
                let id = query_scalar::<DB, i64>(
                    "INSERT INTO withdrawals (account_id, amount, supply_amount, status, \
                 wallet_number, wallet_description, notes, created_at) \
                 VALUES ($1, $2, $3, 'pending', $4, $5, $6, $7) RETURNING id",
                )
                .bind(new.account_id)
                .bind(amount)
                .bind(supply)
                .bind(&new.wallet_number)
                .bind(&new.wallet_description)
                .bind(&new.notes)
                .bind(at)
                .fetch_one(&mut *c)
                .await
                .map_err(|e| WithdrawalRequestError::Store(backend(e)))?;
                let withdrawal = new.clone().into_withdrawal(WithdrawalId::new(id), now);
                book_supply(
                    c,
                    SupplyBooking::of_withdrawal(&withdrawal, side)
                        .into_iter()
                        .collect(),
                )
                .await?;
                Ok(withdrawal)
            }
            .await;
            tx.finish(result).await
        })
        .await
    }

    async fn decide_withdrawal(
        &self,
        id: WithdrawalId,
        decision: WithdrawalDecision,
        now: DateTime<Utc>,
    ) -> StoreResult<Withdrawal> {
        let at = nanos(now)?;
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            // Only a pending request can be decided: the condition is in the update.
            let row: Option<WithdrawalRow> = match &decision {
                WithdrawalDecision::Complete {
                    transfer_reference,
                    receipt_url,
                } => query_as::<DB, WithdrawalRow>(concat!(
                    "UPDATE withdrawals SET status = 'completed', \
                     transfer_reference = $2, receipt_url = $3, decided_at = $4 \
                     WHERE id = $1 AND status = 'pending' RETURNING ",
                    withdrawal_cols!()
                ))
                .bind(id)
                .bind(transfer_reference)
                .bind(receipt_url)
                .bind(at),
                WithdrawalDecision::Reject { notes } => query_as::<DB, WithdrawalRow>(concat!(
                    "UPDATE withdrawals SET status = 'rejected', \
                     notes = COALESCE($2, notes), decided_at = $3 \
                     WHERE id = $1 AND status = 'pending' RETURNING ",
                    withdrawal_cols!()
                ))
                .bind(id)
                .bind(notes)
                .bind(at),
            }
            .fetch_optional(&mut *c)
            .await
            .map_err(backend)?;
            match row {
                Some(row) => {
                    let withdrawal = row.into_domain()?;
                    if withdrawal.status == WithdrawalStatus::Rejected {
                        let side: String =
                            query_scalar::<DB, String>("SELECT side FROM accounts WHERE id = $1")
                                .bind(withdrawal.account_id)
                                .fetch_one(&mut *c)
                                .await
                                .map_err(backend)?;
                        let side = crate::rows::side(&side)?;
                        let given_back = SupplyBooking::of_rejection(&withdrawal, side, now);
                        book_supply(c, given_back.into_iter().collect()).await?;
                    }
                    let event = NewEvent::withdrawal(&withdrawal, WithdrawalStatus::Pending);
                    OutboxEvent::new(withdrawal.account_id, event)
                        .queue(c)
                        .await?;
                    Ok(withdrawal)
                }
                None if exists(c, "SELECT id FROM withdrawals WHERE id = $1", id.into())
                    .await? =>
                {
                    Err(StoreError::Invalid(format!(
                        "withdrawal {id} is already decided"
                    )))
                }
                None => Err(StoreError::NotFound),
            }
        }
        .await;
        tx.finish(result).await
    }

    async fn withdrawals(&self, account: AccountId) -> StoreResult<Vec<Withdrawal>> {
        let rows: Vec<WithdrawalRow> = query_as::<DB, WithdrawalRow>(concat!(
            "SELECT ",
            withdrawal_cols!(),
            " FROM withdrawals WHERE account_id = $1 ORDER BY created_at, id"
        ))
        .bind(account)
        .fetch_all(&self.pool)
        .await
        .map_err(backend)?;
        rows.into_iter().map(WithdrawalRow::into_domain).collect()
    }

    async fn find_withdrawals(
        &self,
        query: &WithdrawalQuery,
        page: PageRequest,
    ) -> StoreResult<Listing<Withdrawal>> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        crate::back_office::find_withdrawals(&mut c, query, page).await
    }

    async fn withdrawal_totals(&self, query: &WithdrawalQuery) -> StoreResult<WithdrawalTotals> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        crate::back_office::withdrawal_totals(&mut c, query).await
    }
}
