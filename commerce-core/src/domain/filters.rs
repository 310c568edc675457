//! Which records a filter selects: the back office's queries ([`OrderQuery::select`],
//! [`AccountQuery::select`], [`WithdrawalQuery::select`], [`WebhookQuery::select`]) and the
//! catalogue's listing ([`ProductFilter::listed`]). The records are in
//! [`model`](crate::model); a backend that holds whole records applies these rules, the SQL
//! stores say the same in their statements.

use crate::model::*;

impl OrderQuery {
    /// The orders of `orders` that match, in the query's order.
    pub fn select<'a>(&self, orders: impl IntoIterator<Item = &'a Order>) -> Vec<&'a Order> {
        let mut found: Vec<&Order> = orders.into_iter().filter(|o| self.matches(o)).collect();
        found.sort_by(|a, b| {
            self.sort
                .compare((a.created_at, a.id), (b.created_at, b.id))
        });
        found
    }
}

impl AccountQuery {
    /// The accounts of `accounts` that match, in the query's order.
    pub fn select<'a>(&self, accounts: impl IntoIterator<Item = &'a Account>) -> Vec<&'a Account> {
        let mut found: Vec<&Account> = accounts.into_iter().filter(|a| self.matches(a)).collect();
        found.sort_by(|a, b| match self.sort {
            AccountSort::NewestFirst => (b.created_at, b.id).cmp(&(a.created_at, a.id)),
            AccountSort::OldestFirst => (a.created_at, a.id).cmp(&(b.created_at, b.id)),
            AccountSort::ApiStatusOldestFirst => {
                (a.api_status_at, a.id).cmp(&(b.api_status_at, b.id))
            }
        });
        found
    }
}

impl WithdrawalQuery {
    /// The withdrawals of `withdrawals` that match, in the query's order.
    pub fn select<'a>(
        &self,
        withdrawals: impl IntoIterator<Item = &'a Withdrawal>,
    ) -> Vec<&'a Withdrawal> {
        let mut found: Vec<&Withdrawal> = withdrawals
            .into_iter()
            .filter(|w| self.matches(w))
            .collect();
        found.sort_by(|a, b| {
            self.sort
                .compare((a.created_at, a.id), (b.created_at, b.id))
        });
        found
    }
}

impl WebhookQuery {
    /// The endpoints of `webhooks` that match, by id.
    pub fn select<'a>(&self, webhooks: impl IntoIterator<Item = &'a Webhook>) -> Vec<&'a Webhook> {
        let mut found: Vec<&Webhook> = webhooks.into_iter().filter(|w| self.matches(w)).collect();
        found.sort_by_key(|w| w.id);
        found
    }
}

impl ProductFilter {
    /// The rule of [`CatalogStore::products`](crate::store::CatalogStore::products): whether a product is listed under this filter
    /// (active, in one of the categories, its title containing the query case-insensitively,
    /// changed at or after `updated_since`).
    pub fn listed(&self) -> impl Fn(&Product) -> bool + '_ {
        let query = self.query.as_deref().map(str::to_lowercase);
        move |p: &Product| {
            p.active
                && self
                    .category_ids
                    .as_ref()
                    .is_none_or(|ids| ids.contains(&p.category_id))
                && query
                    .as_deref()
                    .is_none_or(|q| p.title.to_lowercase().contains(q))
                && self.updated_since.is_none_or(|since| p.updated_at >= since)
        }
    }
}
