//! The back office's queries: finding orders, accounts, withdrawals and webhook endpoints
//! across accounts, a page at a time.

use super::{Operator, OperatorResult};
use crate::model::*;

impl Operator {
    /// The orders of any account that `query` matches, one page (at most 100 a page, as
    /// the API's lists), with how many match
    /// counted up to the query's `count_limit`: the confirmation queue
    /// (`OrderQuery::default().status(OrderStatus::Pending).sort(SortOrder::OldestFirst)`),
    /// an account's orders, one order by number or external reference.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use commerce_core::{Engine, model::*, store::MemoryStore};
    /// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
    /// # let engine = Engine::builder(Arc::new(MemoryStore::new())).build().unwrap();
    /// let op = engine.operator();
    /// let queue = OrderQuery::default()
    ///     .status(OrderStatus::Pending)
    ///     .sort(SortOrder::OldestFirst);
    /// let page = op.find_orders(&queue, PageRequest::default()).await?;
    /// assert_eq!(page.total, Count::new(0, true));
    /// # Ok::<(), commerce_core::operator::OperatorError>(())
    /// # }).unwrap();
    /// ```
    pub async fn find_orders(
        &self,
        query: &OrderQuery,
        page: PageRequest,
    ) -> OperatorResult<Listing<Order>> {
        Ok(self.store().find_orders(query, page).await?)
    }

    /// How many orders `query` matches in each status (every status, in
    /// [`OrderStatus::ALL`]'s order, each counted up to the query's `count_limit`), in one
    /// store operation: a dashboard's figures. The query's status and family filters apply
    /// (the other statuses count 0).
    pub async fn order_status_counts(
        &self,
        query: &OrderQuery,
    ) -> OperatorResult<Vec<(OrderStatus, Count)>> {
        Ok(self.store().order_status_counts(query).await?)
    }

    /// The accounts `query` matches, one page, with how many match counted up to the query's
    /// `count_limit`: a search by name, e-mail, phone or store name (case-insensitive
    /// substring, see [`AccountQuery`]), by side, state and API status, and the approval
    /// queue ([`AccountQuery::waiting_for_approval`]).
    pub async fn find_accounts(
        &self,
        query: &AccountQuery,
        page: PageRequest,
    ) -> OperatorResult<Listing<Account>> {
        Ok(self.store().find_accounts(query, page).await?)
    }

    /// The withdrawals of any account that `query` matches, one page, with how many match
    /// counted up to the query's `count_limit`: the payout queue is
    /// [`WithdrawalQuery::payout_queue`].
    pub async fn find_withdrawals(
        &self,
        query: &WithdrawalQuery,
        page: PageRequest,
    ) -> OperatorResult<Listing<Withdrawal>> {
        Ok(self.store().find_withdrawals(query, page).await?)
    }

    /// How many withdrawals `query` matches and their amounts added, every one counted: what
    /// the payout queue asks for in all.
    pub async fn withdrawal_totals(
        &self,
        query: &WithdrawalQuery,
    ) -> OperatorResult<WithdrawalTotals> {
        Ok(self.store().withdrawal_totals(query).await?)
    }

    /// The webhook endpoints of any account that `query` matches, by id, one page, with how
    /// many match counted up to the query's `count_limit`: the disabled ones and why, those
    /// failing for several attempts in a row ([`WebhookQuery::failing_at_least`]).
    pub async fn find_webhooks(
        &self,
        query: &WebhookQuery,
        page: PageRequest,
    ) -> OperatorResult<Listing<Webhook>> {
        Ok(self.store().find_webhooks(query, page).await?)
    }
}
