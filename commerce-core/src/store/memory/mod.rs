//! [`MemoryStore`]: everything in process memory, one lock held across each whole operation.

mod accounts;
mod catalog;
mod idempotency;
mod indexes;
mod meter;
mod orders;
mod stock;
mod supply;
mod webhooks;
mod withdrawals;

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, Utc};

use super::*;
use crate::model::*;
use indexes::AccountOrders;

/// The in-memory store: the embedded default and the sandbox's store.
///
/// Each operation takes one mutex for its whole duration, so each is atomic and isolated.
/// Nothing survives the process.
#[derive(Debug, Default)]
pub struct MemoryStore {
    state: Mutex<State>,
}

impl MemoryStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave a half-written operation behind: every
        // operation checks everything before it writes anything.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[derive(Debug, Default)]
struct State {
    last_ids: HashMap<&'static str, i64>,
    /// Accounts and keys by reference count: a request's key check shares them.
    accounts: BTreeMap<AccountId, Arc<Account>>,
    keys: BTreeMap<KeyId, Arc<ApiKey>>,
    key_by_hash: HashMap<KeyHash, KeyId>,
    rate_windows: RateWindows,
    /// The catalogue: categories, products, stock, governorates, shipping, the change feed.
    catalog: CatalogTables,
    orders: BTreeMap<OrderId, Order>,
    orders_by_account: HashMap<AccountId, AccountOrders>,
    external_references: HashMap<(AccountId, String), OrderId>,
    numbers: HashSet<String>,
    /// The values that must be unique (account emails; the catalogue keeps its own).
    unique: HashSet<(super::Unique, String)>,
    idempotency: IdempotencyRecords,
    meter: MeterCounts,
    withdrawals: BTreeMap<WithdrawalId, Withdrawal>,
    /// Each account's withdrawals, oldest first: what its wallet and its rules read.
    withdrawals_by_account: HashMap<AccountId, Vec<WithdrawalId>>,
    /// The suppliers' statements and kept totals.
    supply: SupplyLedgers,
    webhooks: BTreeMap<WebhookId, Webhook>,
    /// The webhook deliveries (and what each endpoint was last sent of the change feed).
    deliveries: DeliveryQueue,
    /// Suppliers' quotes.
    quotes: QuoteBook,
}

/// The next id of `table` in `last_ids`: 1, 2, 3, ... per table, as SQL sequences number
/// them ([`State::next_id`], for a caller that holds other fields of the state too).
fn next_in(last_ids: &mut HashMap<&'static str, i64>, table: &'static str) -> i64 {
    let last = last_ids.entry(table).or_default();
    *last += 1;
    *last
}

impl State {
    /// The withdrawals of `account`, oldest first.
    fn withdrawals_of(&self, account: AccountId) -> impl Iterator<Item = &Withdrawal> {
        self.withdrawals_by_account
            .get(&account)
            .into_iter()
            .flatten()
            .filter_map(|id| self.withdrawals.get(id))
    }

    /// Re-files an order in its account's indexes after a write; `before` is its
    /// `(updated_at, family)` before the write.
    fn reindex_order(&mut self, id: OrderId, before: (DateTime<Utc>, Family)) {
        if let Some(order) = self.orders.get(&id)
            && let Some(index) = self.orders_by_account.get_mut(&order.account_id)
        {
            index.reindex(before, order);
        }
    }

    /// An account's wallet sums: from its orders and from its supplier's statement.
    fn wallet_totals(
        &self,
        account: AccountId,
        held_after: DateTime<Utc>,
    ) -> crate::domain::earnings::WalletTotals {
        let orders = self
            .orders_by_account
            .get(&account)
            .map(|index| index.wallet.totals(held_after))
            .unwrap_or_default();
        orders.and(self.supply.wallet(account, held_after))
    }

    /// The id the next [`next_id`](Self::next_id) of `table` gives (nothing written).
    fn peek_id(&self, table: &'static str, ahead: i64) -> i64 {
        self.last_ids.get(table).copied().unwrap_or_default() + ahead
    }

    /// Takes `value` of `kind` for a new record, or refuses it when another record has it
    /// ([`StoreError::Duplicate`]). Called once nothing else can refuse the write.
    fn claim_unique(&mut self, kind: Unique, value: &str) -> Result<(), StoreError> {
        if self.unique.insert((kind, value.to_owned())) {
            Ok(())
        } else {
            Err(StoreError::Duplicate(kind))
        }
    }

    /// The next id of a table: 1, 2, 3, ... per table, as SQL sequences number them.
    fn next_id(&mut self, table: &'static str) -> i64 {
        next_in(&mut self.last_ids, table)
    }

    fn order_mut(&mut self, id: OrderId) -> Result<&mut Order, StoreError> {
        self.orders.get_mut(&id).ok_or(StoreError::NotFound)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::earnings::WalletTotals;
    use chrono::{Duration, TimeZone};

    fn new_order(account: AccountId, i: i64, at: DateTime<Utc>) -> NewOrder {
        NewOrder {
            account_id: account,
            number: format!("EG-T{i:07}"),
            legacy_number: None,
            external_reference: (i % 5 == 0).then(|| format!("REF-{i}")),
            status: OrderStatus::Pending,
            customer: Customer {
                name: "n".into(),
                phone: "01000000000".into(),
                second_phone: None,
                address: "a".into(),
                governorate_id: GovernorateId::new(1),
                governorate_name: "g".into(),
            },
            shipping_option_id: ShippingOptionId::new(1),
            shipping_option_name: "s".into(),
            store_name: None,
            store_link: None,
            note: None,
            lines: Vec::new(),
            totals: Totals::default(),
            created_at: at,
            bill_month: None,
            idempotency: None,
            events: Default::default(),
            priced_from: Vec::new(),
        }
    }

    /// What `orders` must answer, computed by brute force over every order.
    fn expected(
        s: &MemoryStore,
        account: AccountId,
        filter: &OrderFilter,
        page: PageRequest,
    ) -> Page<Order> {
        let state = s.lock();
        let mut all: Vec<&Order> = state
            .orders
            .values()
            .filter(|o| o.account_id == account && o.matches(filter))
            .collect();
        all.sort_by_key(|o| std::cmp::Reverse((o.created_at, o.id)));
        let offset = page.offset() as usize;
        Page {
            items: all
                .iter()
                .skip(offset)
                .take(page.per_page() as usize)
                .map(|o| (*o).clone())
                .collect(),
            total: all.len() as u64,
        }
    }

    #[tokio::test]
    async fn indexed_order_queries_equal_a_full_scan_after_every_kind_of_write() {
        let store = MemoryStore::new();
        let t0 = Utc.with_ymd_and_hms(2025, 1, 1, 0, 0, 0).unwrap();
        for i in 0..60 {
            // Two accounts; some orders share a `created_at` so ids break the tie.
            let account = 1 + i % 2;
            store
                .place_order(new_order(
                    AccountId::new(account),
                    i,
                    t0 + Duration::seconds(i / 3),
                ))
                .await
                .unwrap();
        }
        let later = t0 + Duration::hours(1);
        for id in (1..=60).step_by(4) {
            let to = if id % 8 == 1 {
                OrderStatus::Confirmed
            } else {
                OrderStatus::RejectedByMarketer
            };
            store
                .change_order_status(StatusChange {
                    account_id: None,
                    order_id: OrderId::new(id),
                    to,
                    only_from: Vec::new(),
                    reason: None,
                    outcomes: Vec::new(),
                    read_at: None,
                    at: later + Duration::seconds(id),
                    bill_month: None,
                    events: Default::default(),
                })
                .await
                .unwrap();
        }
        for id in (3..=60).step_by(7) {
            store
                .set_tracking_url(
                    OrderId::new(id),
                    Some("https://t.example/1".into()),
                    later + Duration::minutes(id),
                )
                .await
                .unwrap();
        }
        for id in (2..=60).step_by(9) {
            store
                .set_line_outcomes(
                    OrderId::new(id),
                    Vec::new(),
                    None,
                    later + Duration::hours(id),
                )
                .await
                .unwrap();
        }
        let mut filters = vec![OrderFilter::default()];
        for family in [
            Family::Pending,
            Family::Confirmed,
            Family::Cancelled,
            Family::Delivered,
        ] {
            filters.push(OrderFilter {
                family: Some(family),
                ..OrderFilter::default()
            });
        }
        for status in [
            OrderStatus::Pending,
            OrderStatus::Confirmed,
            OrderStatus::RejectedByMarketer,
        ] {
            filters.push(OrderFilter {
                status: Some(status),
                ..OrderFilter::default()
            });
        }
        for since in [
            t0,
            t0 + Duration::seconds(10),
            later,
            later + Duration::minutes(30),
            later + Duration::days(9),
        ] {
            filters.push(OrderFilter {
                updated_since: Some(since),
                ..OrderFilter::default()
            });
            filters.push(OrderFilter {
                updated_since: Some(since),
                family: Some(Family::Pending),
                ..OrderFilter::default()
            });
        }
        filters.push(OrderFilter {
            external_reference: Some("REF-10".into()),
            ..OrderFilter::default()
        });
        filters.push(OrderFilter {
            number: Some("EGT0000012".into()),
            ..OrderFilter::default()
        });
        for account in [1, 2, 3] {
            for filter in &filters {
                for (page, per_page) in [(1, 25), (1, 7), (2, 7), (5, 7), (9, 7), (1, 100)] {
                    let page = PageRequest::new(page, per_page).expect("a valid page");
                    let got = store
                        .orders(AccountId::new(account), filter, page)
                        .await
                        .unwrap();
                    assert_eq!(
                        got,
                        expected(&store, AccountId::new(account), filter, page),
                        "{account} {filter:?} {page:?}"
                    );
                }
            }
        }
        // The kept wallet sums equal the recomputation from every order.
        let all = store
            .orders(
                AccountId::new(1),
                &OrderFilter::default(),
                PageRequest::new(1, 100).expect("a valid page"),
            )
            .await
            .unwrap();
        let held_after = t0 - Duration::days(1);
        assert_eq!(
            store
                .wallet_totals(AccountId::new(1), held_after)
                .await
                .unwrap(),
            WalletTotals::of_orders(&all.items, held_after)
        );
    }
}
