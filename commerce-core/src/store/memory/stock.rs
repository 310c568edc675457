//! The stock an order's write moves on [`MemoryStore`](super::MemoryStore): checked against the
//! locked state (the catalogue's stock, the account's money), applied through the
//! catalogue's table ([`CatalogTables::move_order_stock`]), so that an operation holding the
//! lock moves its stock in its own atomic operation.

use chrono::{DateTime, Utc};

use super::State;
use crate::domain::earnings::Withdrawn;
use crate::domain::pieces::StockMove;
use crate::model::*;
use crate::store::*;

impl State {
    /// The refusals of a write of `before` into `after` ([`Order::check_write`]) against the
    /// locked state: the stock it moves, to apply once everything is checked
    /// ([`CatalogTables::move_order_stock`]).
    pub(super) fn check_order_write(
        &self,
        before: &Order,
        after: &Order,
    ) -> Result<Vec<StockMove>, StoreError> {
        let account = before.account_id;
        let settled = || {
            self.orders_by_account
                .get(&account)
                .map(|index| index.wallet.totals(DateTime::<Utc>::MAX_UTC).totals.settled)
                .unwrap_or_default()
        };
        let withdrawn = || Withdrawn::of(self.withdrawals_of(account));
        before.check_write(after, settled, withdrawn, |v| {
            self.catalog.variant(v).map(|v| v.available)
        })
    }
}
