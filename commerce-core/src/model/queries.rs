//! The back office's queries across accounts: which orders, accounts, withdrawals and webhook
//! endpoints each matches and in which order. Every store answers them
//! ([`OrderStore::find_orders`](crate::store::OrderStore::find_orders), ...) as `matches` and
//! `select` here say.

use rust_decimal::Decimal;

use super::listing::{
    Count, DEFAULT_COUNT_LIMIT, SortOrder, TimeRange, contains_folded, fold_case,
};
use super::*;

/// Which orders of any account the back office lists ([`Operator::find_orders`](crate::operator::Operator::find_orders)),
/// and the counts per status of its dashboard. Every field left as [`Default`] matches every
/// order; newest first (`created_at`, then `id`).
///
/// ```
/// # use commerce_core as commerce;
/// use commerce::model::{OrderQuery, OrderStatus, SortOrder};
/// // The confirmation queue: pending orders, the one waiting longest first.
/// let queue = OrderQuery::default()
///     .status(OrderStatus::Pending)
///     .sort(SortOrder::OldestFirst);
/// assert_eq!(queue.status, Some(OrderStatus::Pending));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct OrderQuery {
    /// Only this account's orders.
    pub account: Option<AccountId>,
    /// Only orders in this status.
    pub status: Option<OrderStatus>,
    /// Only orders of this family.
    pub family: Option<Family>,
    /// Only orders created in this range.
    pub created: TimeRange,
    /// Only orders last changed in this range.
    pub updated: TimeRange,
    /// Only the order with this number, normalised by [`normalize_order_number`] (the builder
    /// [`number`](Self::number) does it): its `EG-` number or its legacy number.
    pub number: Option<String>,
    /// Only the orders with this `external_reference` (one per account).
    pub external_reference: Option<String>,
    /// By `created_at` (then `id`), newest or oldest first.
    pub sort: SortOrder,
    /// Count matching orders up to this many ([`Count`]); [`DEFAULT_COUNT_LIMIT`] by default.
    pub count_limit: u64,
}

impl Default for OrderQuery {
    fn default() -> Self {
        Self {
            account: None,
            status: None,
            family: None,
            created: TimeRange::default(),
            updated: TimeRange::default(),
            number: None,
            external_reference: None,
            sort: SortOrder::default(),
            count_limit: DEFAULT_COUNT_LIMIT,
        }
    }
}

impl OrderQuery {
    /// An account's listing ([`OrderStore::orders`](crate::store::OrderStore::orders)) as a
    /// query: `account`'s orders that `filter` keeps ([`Order::matches`]), newest first, every
    /// match counted.
    pub fn of_account(account: AccountId, filter: &OrderFilter) -> Self {
        Self {
            account: Some(account),
            status: filter.status,
            family: filter.family,
            updated: filter
                .updated_since
                .map(TimeRange::since)
                .unwrap_or_default(),
            number: filter.number.clone(),
            external_reference: filter.external_reference.clone(),
            sort: SortOrder::NewestFirst,
            count_limit: u64::MAX,
            ..Self::default()
        }
    }

    /// Only `account`'s orders.
    pub fn account(mut self, account: AccountId) -> Self {
        self.account = Some(account);
        self
    }

    /// Only orders in `status`.
    pub fn status(mut self, status: OrderStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// Only orders of `family`.
    pub fn family(mut self, family: Family) -> Self {
        self.family = Some(family);
        self
    }

    /// Only orders created in `range`.
    pub fn created(mut self, range: TimeRange) -> Self {
        self.created = range;
        self
    }

    /// Only orders last changed in `range`.
    pub fn updated(mut self, range: TimeRange) -> Self {
        self.updated = range;
        self
    }

    /// Only the order numbered `number` (as typed: normalised here).
    pub fn number(mut self, number: &str) -> Self {
        self.number = Some(normalize_order_number(number));
        self
    }

    /// Only orders with this `external_reference`.
    pub fn external_reference(mut self, reference: impl Into<String>) -> Self {
        self.external_reference = Some(reference.into());
        self
    }

    /// Newest or oldest first.
    pub fn sort(mut self, sort: SortOrder) -> Self {
        self.sort = sort;
        self
    }

    /// Count up to `limit` matching orders.
    pub fn count_limit(mut self, limit: u64) -> Self {
        self.count_limit = limit;
        self
    }

    /// Whether `order` matches every filter.
    pub fn matches(&self, order: &Order) -> bool {
        self.account.is_none_or(|a| a == order.account_id)
            && self.status.is_none_or(|s| s == order.status)
            && self.family.is_none_or(|f| f == order.status.family())
            && self.created.contains(order.created_at)
            && self.updated.contains(order.updated_at)
            && self.number.as_deref().is_none_or(|n| {
                normalize_order_number(&order.number) == n
                    || order.legacy_number.as_deref() == Some(n)
            })
            && self
                .external_reference
                .as_deref()
                .is_none_or(|r| order.external_reference.as_deref() == Some(r))
    }

    /// The counts per status of the orders of `orders` that match (every status, in
    /// [`OrderStatus::ALL`]'s order, each counted up to `count_limit`): what
    /// [`OrderStore::order_status_counts`](crate::store::OrderStore::order_status_counts)
    /// answers.
    pub fn status_counts<'a>(
        &self,
        orders: impl IntoIterator<Item = &'a Order>,
    ) -> Vec<(OrderStatus, Count)> {
        let mut counted = vec![0u64; OrderStatus::ALL.len()];
        for order in orders.into_iter().filter(|o| self.matches(o)) {
            if let Some(i) = OrderStatus::ALL.iter().position(|s| *s == order.status) {
                counted[i] += 1;
            }
        }
        OrderStatus::ALL
            .iter()
            .zip(counted)
            .map(|(s, n)| (*s, Count::of(n, self.count_limit)))
            .collect()
    }

    /// The statuses whose count [`status_counts`](Self::status_counts) may find above zero:
    /// those the status and family filters let through.
    pub fn counted_statuses(&self) -> impl Iterator<Item = OrderStatus> + '_ {
        OrderStatus::ALL.iter().copied().filter(|s| {
            self.status.is_none_or(|only| only == *s) && self.family.is_none_or(|f| f == s.family())
        })
    }
}

/// How [`AccountQuery`] orders accounts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum AccountSort {
    /// By registration (`created_at`, then `id`), newest first (the default).
    #[default]
    NewestFirst,
    /// By registration, oldest first.
    OldestFirst,
    /// By when the API status last changed ([`Account::api_status_at`], then `id`), oldest
    /// first: with [`ApiStatus::Pending`], the approval queue, the oldest request on top.
    ApiStatusOldestFirst,
}

/// Which accounts the back office lists ([`Operator::find_accounts`](crate::operator::Operator::find_accounts)).
/// Every field left as [`Default`] matches every account.
///
/// `search` is a case-insensitive substring of the owner's name, the e-mail, the phone or the
/// store name: ASCII letters match in either case, every other character (Arabic included)
/// as it is. A search reads every account of the other filters (no index serves a substring):
/// fine for a back office's hundred thousand accounts, not for a public search box.
///
/// ```
/// # use commerce_core as commerce;
/// use commerce::model::{AccountQuery, ApiStatus};
/// let queue = AccountQuery::waiting_for_approval();
/// assert_eq!(queue.api_status, Some(ApiStatus::Pending));
/// let found = AccountQuery::default().search("Ahmed");
/// assert_eq!(found.search.as_deref(), Some("ahmed"));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct AccountQuery {
    /// A substring of the name, e-mail, phone or store name, lowered by [`fold_case`] (the
    /// builder [`search`](Self::search) does it).
    pub search: Option<String>,
    /// Only accounts of this side.
    pub side: Option<Side>,
    /// Only accounts in this life state.
    pub state: Option<AccountState>,
    /// Only accounts with this API status.
    pub api_status: Option<ApiStatus>,
    /// The order.
    pub sort: AccountSort,
    /// Count matching accounts up to this many ([`Count`]); [`DEFAULT_COUNT_LIMIT`] by default.
    pub count_limit: u64,
}

impl Default for AccountQuery {
    fn default() -> Self {
        Self {
            search: None,
            side: None,
            state: None,
            api_status: None,
            sort: AccountSort::default(),
            count_limit: DEFAULT_COUNT_LIMIT,
        }
    }
}

impl AccountQuery {
    /// The accounts waiting for API approval, the oldest request first.
    pub fn waiting_for_approval() -> Self {
        Self::default()
            .api_status(ApiStatus::Pending)
            .sort(AccountSort::ApiStatusOldestFirst)
    }

    /// Only accounts whose name, e-mail, phone or store name contains `text` (empty: all).
    pub fn search(mut self, text: &str) -> Self {
        self.search = Some(fold_case(text)).filter(|t| !t.is_empty());
        self
    }

    /// Only accounts of `side`.
    pub fn side(mut self, side: Side) -> Self {
        self.side = Some(side);
        self
    }

    /// Only accounts in `state`.
    pub fn state(mut self, state: AccountState) -> Self {
        self.state = Some(state);
        self
    }

    /// Only accounts with `api_status`.
    pub fn api_status(mut self, api_status: ApiStatus) -> Self {
        self.api_status = Some(api_status);
        self
    }

    /// In this order.
    pub fn sort(mut self, sort: AccountSort) -> Self {
        self.sort = sort;
        self
    }

    /// Count up to `limit` matching accounts.
    pub fn count_limit(mut self, limit: u64) -> Self {
        self.count_limit = limit;
        self
    }

    /// Whether `account` matches every filter.
    pub fn matches(&self, account: &Account) -> bool {
        self.side.is_none_or(|s| s == account.side)
            && self.state.is_none_or(|s| s == account.state)
            && self.api_status.is_none_or(|s| s == account.api_status)
            && self.search.as_deref().is_none_or(|needle| {
                contains_folded(&account.name, needle)
                    || contains_folded(&account.email, needle)
                    || contains_folded(&account.phone, needle)
                    || account
                        .store_name
                        .as_deref()
                        .is_some_and(|s| contains_folded(s, needle))
            })
    }
}

/// Which withdrawals of any account the back office lists ([`Operator::find_withdrawals`](crate::operator::Operator::find_withdrawals))
/// and totals ([`Operator::withdrawal_totals`](crate::operator::Operator::withdrawal_totals)). Every
/// field left as [`Default`] matches every withdrawal; newest request first (`created_at`,
/// then `id`).
///
/// ```
/// # use commerce_core as commerce;
/// use commerce::model::{SortOrder, WithdrawalQuery, WithdrawalStatus};
/// let queue = WithdrawalQuery::payout_queue();
/// assert_eq!((queue.status, queue.sort), (Some(WithdrawalStatus::Pending), SortOrder::OldestFirst));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WithdrawalQuery {
    /// Only this account's withdrawals.
    pub account: Option<AccountId>,
    /// Only withdrawals in this state.
    pub status: Option<WithdrawalStatus>,
    /// By request instant (`created_at`, then `id`), newest or oldest first.
    pub sort: SortOrder,
    /// Count matching withdrawals up to this many in a page's total ([`Count`]);
    /// [`DEFAULT_COUNT_LIMIT`] by default. [`WithdrawalTotals`] always count them all.
    pub count_limit: u64,
}

impl Default for WithdrawalQuery {
    fn default() -> Self {
        Self {
            account: None,
            status: None,
            sort: SortOrder::default(),
            count_limit: DEFAULT_COUNT_LIMIT,
        }
    }
}

impl WithdrawalQuery {
    /// The payout queue: pending withdrawals, the oldest request first.
    pub fn payout_queue() -> Self {
        Self::default()
            .status(WithdrawalStatus::Pending)
            .sort(SortOrder::OldestFirst)
    }

    /// Only `account`'s withdrawals.
    pub fn account(mut self, account: AccountId) -> Self {
        self.account = Some(account);
        self
    }

    /// Only withdrawals in `status`.
    pub fn status(mut self, status: WithdrawalStatus) -> Self {
        self.status = Some(status);
        self
    }

    /// Newest or oldest first.
    pub fn sort(mut self, sort: SortOrder) -> Self {
        self.sort = sort;
        self
    }

    /// Count up to `limit` matching withdrawals in a page's total.
    pub fn count_limit(mut self, limit: u64) -> Self {
        self.count_limit = limit;
        self
    }

    /// Whether `withdrawal` matches every filter.
    pub fn matches(&self, withdrawal: &Withdrawal) -> bool {
        self.account.is_none_or(|a| a == withdrawal.account_id)
            && self.status.is_none_or(|s| s == withdrawal.status)
    }
}

/// How many withdrawals match a [`WithdrawalQuery`] and what they add up to (every one
/// counted, whatever the query's `count_limit`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct WithdrawalTotals {
    /// Withdrawals.
    pub count: u64,
    /// Their amounts, added.
    pub amount: Decimal,
    /// Their supply amounts, added.
    pub supply_amount: Decimal,
}

impl WithdrawalTotals {
    /// `count` withdrawals of `amount` (`supply_amount` of it the supply).
    pub fn new(count: u64, amount: Decimal, supply_amount: Decimal) -> Self {
        Self {
            count,
            amount,
            supply_amount,
        }
    }

    /// The totals of `withdrawals` (already filtered).
    pub fn of<'a>(withdrawals: impl IntoIterator<Item = &'a Withdrawal>) -> Self {
        withdrawals.into_iter().fold(Self::default(), |t, w| Self {
            count: t.count + 1,
            amount: t.amount + w.amount,
            supply_amount: t.supply_amount + w.supply_amount,
        })
    }
}

/// Which webhook endpoints of any account the back office lists
/// ([`Operator::find_webhooks`](crate::operator::Operator::find_webhooks)), in registration order (`id`).
/// Every field left as [`Default`] matches every endpoint.
///
/// ```
/// # use commerce_core as commerce;
/// use commerce::model::WebhookQuery;
/// // Enabled endpoints whose last 3 attempts or more all failed.
/// let failing = WebhookQuery::default().enabled(true).failing_at_least(3);
/// assert_eq!(failing.failed_attempts_at_least, Some(3));
/// ```
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WebhookQuery {
    /// Only this account's endpoints.
    pub account: Option<AccountId>,
    /// Only enabled (`true`) or disabled (`false`) endpoints.
    pub enabled: Option<bool>,
    /// Only endpoints disabled for this reason.
    pub disabled_reason: Option<DisabledReason>,
    /// Only endpoints whose last attempts, this many or more in a row, all failed
    /// ([`Webhook::failed_attempts`]).
    pub failed_attempts_at_least: Option<u32>,
    /// Count matching endpoints up to this many ([`Count`]); [`DEFAULT_COUNT_LIMIT`] by default.
    pub count_limit: u64,
}

impl Default for WebhookQuery {
    fn default() -> Self {
        Self {
            account: None,
            enabled: None,
            disabled_reason: None,
            failed_attempts_at_least: None,
            count_limit: DEFAULT_COUNT_LIMIT,
        }
    }
}

impl WebhookQuery {
    /// Only `account`'s endpoints.
    pub fn account(mut self, account: AccountId) -> Self {
        self.account = Some(account);
        self
    }

    /// Only enabled (`true`) or disabled (`false`) endpoints.
    pub fn enabled(mut self, enabled: bool) -> Self {
        self.enabled = Some(enabled);
        self
    }

    /// Only endpoints disabled for `reason`.
    pub fn disabled_for(mut self, reason: DisabledReason) -> Self {
        self.disabled_reason = Some(reason);
        self
    }

    /// Only endpoints whose last `attempts` attempts or more in a row failed.
    pub fn failing_at_least(mut self, attempts: u32) -> Self {
        self.failed_attempts_at_least = Some(attempts);
        self
    }

    /// Count up to `limit` matching endpoints.
    pub fn count_limit(mut self, limit: u64) -> Self {
        self.count_limit = limit;
        self
    }

    /// Whether `webhook` matches every filter.
    pub fn matches(&self, webhook: &Webhook) -> bool {
        self.account.is_none_or(|a| a == webhook.account_id)
            && self.enabled.is_none_or(|e| e == webhook.enabled)
            && self
                .disabled_reason
                .is_none_or(|r| webhook.disabled_reason == Some(r))
            && self
                .failed_attempts_at_least
                .is_none_or(|n| webhook.failed_attempts >= n)
    }
}
