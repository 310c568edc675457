//! [`MemoryStore`]: everything in process memory, one lock held across each whole operation.

mod indexes;
mod webhooks;

use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::{Mutex, MutexGuard};

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::*;
use crate::earnings::{WalletTotals, Withdrawn};
use crate::model::*;
use indexes::{AccountOrders, OrderKeys};

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
    accounts: BTreeMap<AccountId, Account>,
    keys: BTreeMap<KeyId, ApiKey>,
    key_by_hash: HashMap<KeyHash, KeyId>,
    rate_windows: RateWindows,
    categories: BTreeMap<CategoryId, Category>,
    products: BTreeMap<ProductId, Product>,
    variant_owner: HashMap<VariantId, ProductId>,
    warranty_owner: HashMap<WarrantyId, ProductId>,
    governorates: BTreeMap<GovernorateId, Governorate>,
    shipping_options: BTreeMap<ShippingOptionId, ShippingOption>,
    orders: BTreeMap<OrderId, Order>,
    orders_by_account: HashMap<AccountId, AccountOrders>,
    external_references: HashMap<(AccountId, String), OrderId>,
    numbers: HashSet<String>,
    idempotency: IdempotencyRecords,
    pulls: HashSet<(AccountId, String, ProductId)>,
    pull_counts: HashMap<(AccountId, String), u64>,
    order_operations: HashMap<(AccountId, String), u64>,
    withdrawals: BTreeMap<WithdrawalId, Withdrawal>,
    webhooks: BTreeMap<WebhookId, Webhook>,
    deliveries: BTreeMap<DeliveryId, webhooks::Queued>,
    /// The deliveries still pending, indexed for the claim.
    pending_deliveries: webhooks::PendingDeliveries,
    /// Every delivery of each endpoint (its list, a URL change, the expiry).
    deliveries_by_webhook: webhooks::ByWebhook,
}

impl State {
    /// Re-files an order in its account's indexes after a write; `before` is its
    /// `(updated_at, family)` before the write.
    fn reindex_order(&mut self, id: OrderId, before: (DateTime<Utc>, Family)) {
        if let Some(order) = self.orders.get(&id)
            && let Some(index) = self.orders_by_account.get_mut(&order.account_id)
        {
            index.reindex(before, order);
        }
    }

    /// The id the next [`next_id`](Self::next_id) of `table` gives (nothing written).
    fn peek_id(&self, table: &'static str, ahead: i64) -> i64 {
        self.last_ids.get(table).copied().unwrap_or_default() + ahead
    }

    /// The next id of a table: 1, 2, 3, ... per table, as SQL sequences number them.
    fn next_id(&mut self, table: &'static str) -> i64 {
        let last = self.last_ids.entry(table).or_default();
        *last += 1;
        *last
    }

    fn product_mut(&mut self, id: ProductId) -> Result<&mut Product, StoreError> {
        self.products.get_mut(&id).ok_or(StoreError::NotFound)
    }

    fn variant_mut(&mut self, id: VariantId) -> Option<&mut Variant> {
        let product = *self.variant_owner.get(&id)?;
        self.products
            .get_mut(&product)?
            .variants
            .iter_mut()
            .find(|v| v.id == id)
    }

    fn bill_order_operation(&mut self, account: AccountId, month: Option<&String>) {
        if let Some(month) = month {
            *self
                .order_operations
                .entry((account, month.clone()))
                .or_default() += 1;
        }
    }

    fn shipping_option_mut(
        &mut self,
        id: ShippingOptionId,
    ) -> Result<&mut ShippingOption, StoreError> {
        self.shipping_options
            .get_mut(&id)
            .ok_or(StoreError::NotFound)
    }

    fn order_mut(&mut self, id: OrderId) -> Result<&mut Order, StoreError> {
        self.orders.get_mut(&id).ok_or(StoreError::NotFound)
    }

    /// The pieces each variant gives to `lines`, once every line can be served
    /// ([`pieces_to_reserve`]); nothing is written.
    fn stock_to_reserve(
        &self,
        lines: &[NewOrderLine],
    ) -> Result<Vec<(VariantId, i64)>, PlaceOrderError> {
        let available = |variant: VariantId| {
            let product = self.variant_owner.get(&variant)?;
            let variants = &self.products.get(product)?.variants;
            variants
                .iter()
                .find(|v| v.id == variant)
                .map(|v| v.available)
        };
        pieces_to_reserve(lines, |variant| available(variant).unwrap_or(0))
    }

    fn adjust_stock(&mut self, variant: VariantId, by: i64, now: DateTime<Utc>) {
        if let Some(v) = self.variant_mut(variant) {
            v.available += by;
            let product = v.product_id;
            if let Some(p) = self.products.get_mut(&product) {
                p.updated_at = next_updated_at(p.updated_at, now);
            }
        }
    }
}

/// Counts every item and clones only those on the page.
fn paginate<'a, T: Clone + 'a>(items: impl Iterator<Item = &'a T>, page: PageRequest) -> Page<T> {
    let mut total = 0u64;
    let mut out = Vec::new();
    let offset = page.offset();
    for item in items {
        if total >= offset && out.len() < page.per_page as usize {
            out.push(item.clone());
        }
        total += 1;
    }
    Page { items: out, total }
}

#[async_trait]
impl AccountStore for MemoryStore {
    async fn insert_account(
        &self,
        new: NewAccount,
        now: DateTime<Utc>,
    ) -> Result<Account, StoreError> {
        let mut s = self.lock();
        let account = new.into_account(AccountId(s.next_id("accounts")), now);
        s.accounts.insert(account.id, account.clone());
        Ok(account)
    }

    async fn account(&self, id: AccountId) -> Result<Option<Account>, StoreError> {
        Ok(self.lock().accounts.get(&id).cloned())
    }

    async fn update_account(
        &self,
        id: AccountId,
        patch: AccountPatch,
    ) -> Result<Account, StoreError> {
        let mut s = self.lock();
        let account = s.accounts.get_mut(&id).ok_or(StoreError::NotFound)?;
        patch.apply(account);
        Ok(account.clone())
    }

    async fn insert_key(
        &self,
        key: NewKeyRecord,
        now: DateTime<Utc>,
    ) -> Result<ApiKey, StoreError> {
        let mut s = self.lock();
        if !s.accounts.contains_key(&key.account_id) {
            return Err(StoreError::NotFound);
        }
        if s.key_by_hash.contains_key(&key.hash) {
            return Err(StoreError::Invalid("key hash already stored".into()));
        }
        let key = key.into_key(KeyId(s.next_id("keys")), now);
        s.key_by_hash.insert(key.hash, key.id);
        s.keys.insert(key.id, key.clone());
        Ok(key)
    }

    async fn key_by_hash(&self, hash: &KeyHash) -> Result<Option<ApiKey>, StoreError> {
        let s = self.lock();
        Ok(s.key_by_hash
            .get(hash)
            .and_then(|id| s.keys.get(id))
            .cloned())
    }

    async fn key(&self, id: KeyId) -> Result<Option<ApiKey>, StoreError> {
        Ok(self.lock().keys.get(&id).cloned())
    }

    async fn revoke_key(&self, id: KeyId, at: DateTime<Utc>) -> Result<ApiKey, StoreError> {
        let mut s = self.lock();
        let key = s.keys.get_mut(&id).ok_or(StoreError::NotFound)?;
        key.revoked_at.get_or_insert(at);
        Ok(key.clone())
    }

    async fn set_key_terms(
        &self,
        id: KeyId,
        expires_at: Option<DateTime<Utc>>,
        rate_limit: u32,
    ) -> Result<ApiKey, StoreError> {
        let mut s = self.lock();
        let key = s.keys.get_mut(&id).ok_or(StoreError::NotFound)?;
        key.expires_at = expires_at;
        key.rate_limit = rate_limit;
        Ok(key.clone())
    }

    async fn hit_rate_limit(
        &self,
        key: KeyId,
        window: i64,
        limit: u32,
    ) -> Result<RateLimitHit, StoreError> {
        Ok(self.lock().rate_windows.hit(key, window, limit))
    }
}

#[async_trait]
impl CatalogStore for MemoryStore {
    async fn insert_category(&self, new: NewCategory) -> Result<Category, StoreError> {
        let mut s = self.lock();
        if let Some(parent) = new.parent_id
            && !s.categories.contains_key(&parent)
        {
            return Err(StoreError::Invalid(format!("no parent category {parent}")));
        }
        let category = new.into_category(CategoryId(s.next_id("categories")));
        s.categories.insert(category.id, category.clone());
        Ok(category)
    }

    async fn set_category_active(
        &self,
        id: CategoryId,
        active: bool,
    ) -> Result<Category, StoreError> {
        let mut s = self.lock();
        let category = s.categories.get_mut(&id).ok_or(StoreError::NotFound)?;
        category.active = active;
        Ok(category.clone())
    }

    async fn all_categories(&self) -> Result<Vec<Category>, StoreError> {
        Ok(self.lock().categories.values().cloned().collect())
    }

    async fn insert_product(
        &self,
        new: NewProduct,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError> {
        let mut s = self.lock();
        if !s.categories.contains_key(&new.category_id) {
            return Err(StoreError::Invalid(format!(
                "no category {}",
                new.category_id
            )));
        }
        let product = new.into_product(ProductId(s.next_id("products")), now);
        s.products.insert(product.id, product.clone());
        Ok(product)
    }

    async fn set_product_active(
        &self,
        id: ProductId,
        active: bool,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError> {
        let mut s = self.lock();
        let product = s.product_mut(id)?;
        product.active = active;
        product.updated_at = next_updated_at(product.updated_at, now);
        Ok(product.clone())
    }

    async fn insert_variant(
        &self,
        product: ProductId,
        new: NewVariant,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError> {
        let mut s = self.lock();
        s.product_mut(product)?;
        let id = s.next_id("variants");
        let owner = s.product_mut(product)?;
        let variant = new.into_variant(VariantId(id), product);
        owner.variants.push(variant.clone());
        owner.updated_at = next_updated_at(owner.updated_at, now);
        s.variant_owner.insert(VariantId(id), product);
        Ok(variant)
    }

    async fn update_variant(
        &self,
        id: VariantId,
        patch: VariantPatch,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError> {
        let mut s = self.lock();
        let variant = s.variant_mut(id).ok_or(StoreError::NotFound)?;
        patch.apply(variant);
        let variant = variant.clone();
        let owner = s.product_mut(variant.product_id)?;
        owner.updated_at = next_updated_at(owner.updated_at, now);
        Ok(variant)
    }

    async fn insert_warranty(
        &self,
        product: ProductId,
        new: NewWarranty,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError> {
        let mut s = self.lock();
        s.product_mut(product)?;
        let id = s.next_id("warranties");
        let owner = s.product_mut(product)?;
        let warranty = new.into_warranty(WarrantyId(id), product);
        owner.warranties.push(warranty.clone());
        owner.updated_at = next_updated_at(owner.updated_at, now);
        s.warranty_owner.insert(WarrantyId(id), product);
        Ok(warranty)
    }

    async fn set_warranty_active(
        &self,
        id: WarrantyId,
        active: bool,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError> {
        let mut s = self.lock();
        let product = *s.warranty_owner.get(&id).ok_or(StoreError::NotFound)?;
        let owner = s.product_mut(product)?;
        owner.updated_at = next_updated_at(owner.updated_at, now);
        let warranty = owner
            .warranties
            .iter_mut()
            .find(|w| w.id == id)
            .ok_or(StoreError::NotFound)?;
        warranty.active = active;
        Ok(warranty.clone())
    }

    async fn products(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
    ) -> Result<Page<Product>, StoreError> {
        let s = self.lock();
        let listed = filter.listed();
        let matching = s.products.values().filter(|p| listed(p));
        Ok(paginate(matching, page))
    }

    async fn product(&self, id: ProductId) -> Result<Option<Product>, StoreError> {
        Ok(self.lock().products.get(&id).cloned())
    }

    async fn products_of_variants(
        &self,
        variants: &[VariantId],
    ) -> Result<Vec<Product>, StoreError> {
        let s = self.lock();
        let ids: BTreeSet<ProductId> = variants
            .iter()
            .filter_map(|v| s.variant_owner.get(v).copied())
            .collect();
        Ok(ids
            .iter()
            .filter_map(|id| s.products.get(id).cloned())
            .collect())
    }

    async fn insert_governorate(&self, name: String) -> Result<Governorate, StoreError> {
        let mut s = self.lock();
        let governorate = Governorate {
            id: GovernorateId(s.next_id("governorates")),
            name,
        };
        s.governorates.insert(governorate.id, governorate.clone());
        Ok(governorate)
    }

    async fn governorates(&self) -> Result<Vec<Governorate>, StoreError> {
        Ok(self.lock().governorates.values().cloned().collect())
    }

    async fn insert_shipping_option(&self, name: String) -> Result<ShippingOption, StoreError> {
        let mut s = self.lock();
        let option = ShippingOption {
            id: ShippingOptionId(s.next_id("shipping_options")),
            name,
            active: true,
            rates: Vec::new(),
        };
        s.shipping_options.insert(option.id, option.clone());
        Ok(option)
    }

    async fn set_shipping_option_active(
        &self,
        id: ShippingOptionId,
        active: bool,
    ) -> Result<ShippingOption, StoreError> {
        let mut s = self.lock();
        let option = s.shipping_option_mut(id)?;
        option.active = active;
        Ok(option.clone())
    }

    async fn set_shipping_rate(
        &self,
        option: ShippingOptionId,
        mut rate: ShippingRate,
    ) -> Result<ShippingOption, StoreError> {
        let mut s = self.lock();
        rate.governorate_name = s
            .governorates
            .get(&rate.governorate_id)
            .ok_or_else(|| StoreError::Invalid(format!("no governorate {}", rate.governorate_id)))?
            .name
            .clone();
        let option = s.shipping_option_mut(option)?;
        option
            .rates
            .retain(|r| r.governorate_id != rate.governorate_id);
        option.rates.push(rate);
        option.rates.sort_by_key(|r| r.governorate_id);
        Ok(option.clone())
    }

    async fn shipping_options(&self) -> Result<Vec<ShippingOption>, StoreError> {
        Ok(self.lock().shipping_options.values().cloned().collect())
    }
}

#[async_trait]
impl OrderStore for MemoryStore {
    async fn place_order(&self, new: NewOrder) -> Result<Order, PlaceOrderError> {
        let mut s = self.lock();
        if let Some(reference) = &new.external_reference
            && let Some(existing) = s
                .external_references
                .get(&(new.account_id, reference.clone()))
        {
            let existing = &s.orders[existing];
            return Err(PlaceOrderError::DuplicateExternalReference {
                existing_id: existing.id,
                existing_number: existing.number.clone(),
            });
        }
        if s.numbers.contains(&new.number) {
            return Err(PlaceOrderError::NumberTaken);
        }
        if let Some(claim) = &new.idempotency
            && !s.idempotency.holds(claim)
        {
            return Err(PlaceOrderError::IdempotencyLost);
        }
        let taken = s.stock_to_reserve(&new.lines)?;
        // Everything is checked and the event rendered before the first write, as `lock`
        // promises: the ids are the ones the counters give next.
        let id = s.peek_id("orders", 1);
        let line_ids: Vec<LineId> = (1..=new.lines.len() as i64)
            .map(|ahead| LineId(s.peek_id("order_lines", ahead)))
            .collect();
        let idempotency = new.idempotency.clone();
        let bill_month = new.bill_month.clone();
        let (created_at, events) = (new.created_at, new.events);
        let order = new.into_order(OrderId(id), line_ids);
        let event = s.render_order_event(EventType::OrderCreated, &order, None, events);

        for (variant, quantity) in taken {
            s.adjust_stock(variant, -quantity, created_at);
        }
        s.next_id("orders");
        for _ in &order.lines {
            s.next_id("order_lines");
        }
        s.queue_order_event(event);
        if let Some(reference) = &order.external_reference {
            s.external_references
                .insert((order.account_id, reference.clone()), OrderId(id));
        }
        if let Some(claim) = &idempotency {
            s.idempotency.link_order(claim, OrderId(id));
        }
        s.bill_order_operation(order.account_id, bill_month.as_ref());
        s.numbers.insert(order.number.clone());
        s.orders_by_account
            .entry(order.account_id)
            .or_default()
            .insert(&order);
        s.orders.insert(OrderId(id), order.clone());
        Ok(order)
    }

    async fn change_order_status(&self, change: StatusChange) -> Result<Order, StatusChangeError> {
        let mut s = self.lock();
        let order = s
            .orders
            .get(&change.order_id)
            .ok_or(StatusChangeError::NotFound)?;
        let account = order.account_id;
        let step = StatusMove::check(&change, account, order.status)?;
        // The moved order and its event, before the first write (see `lock`).
        let before = (order.updated_at, order.status.family());
        let previous = order.status;
        let releases_stock = step.releases_stock;
        let mut moved = order.clone();
        step.apply(&mut moved);
        let event = s.render_order_event(
            EventType::OrderStatusChanged,
            &moved,
            Some(previous),
            change.events,
        );

        if releases_stock {
            for line in &moved.lines {
                s.adjust_stock(line.variant_id, line.quantity, change.at);
            }
        }
        s.bill_order_operation(account, change.bill_month.as_ref());
        s.orders.insert(moved.id, moved.clone());
        s.reindex_order(moved.id, before);
        s.queue_order_event(event);
        Ok(moved)
    }

    async fn set_line_outcomes(
        &self,
        order: OrderId,
        outcomes: Vec<(LineId, LineOutcome)>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError> {
        let mut s = self.lock();
        let order = s.order_mut(order)?;
        for (line_id, _) in &outcomes {
            if !order.lines.iter().any(|l| l.id == *line_id) {
                return Err(StoreError::NotFound);
            }
        }
        for (line_id, outcome) in outcomes {
            if let Some(line) = order.lines.iter_mut().find(|l| l.id == line_id) {
                line.outcome = outcome;
            }
        }
        let before = (order.updated_at, order.status.family());
        order.updated_at = next_updated_at(order.updated_at, now);
        let order = order.clone();
        s.reindex_order(order.id, before);
        Ok(order)
    }

    async fn set_tracking_url(
        &self,
        order: OrderId,
        url: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError> {
        let mut s = self.lock();
        let order = s.order_mut(order)?;
        let before = (order.updated_at, order.status.family());
        order.tracking_url = url;
        order.updated_at = next_updated_at(order.updated_at, now);
        let order = order.clone();
        s.reindex_order(order.id, before);
        Ok(order)
    }

    async fn order(
        &self,
        account: Option<AccountId>,
        id: OrderId,
    ) -> Result<Option<Order>, StoreError> {
        let s = self.lock();
        Ok(s.orders
            .get(&id)
            .filter(|o| account.is_none_or(|a| a == o.account_id))
            .cloned())
    }

    async fn orders(
        &self,
        account: AccountId,
        filter: &OrderFilter,
        page: PageRequest,
    ) -> Result<Page<Order>, StoreError> {
        let s = self.lock();
        let Some(index) = s.orders_by_account.get(&account) else {
            return Ok(Page {
                items: Vec::new(),
                total: 0,
            });
        };
        // Fast path for the common exact lookups.
        if let Some(reference) = &filter.external_reference {
            let found = s
                .external_references
                .get(&(account, reference.clone()))
                .map(|id| &s.orders[id])
                .filter(|o| o.matches(filter));
            return Ok(paginate(found.into_iter(), page));
        }
        // The smallest index that holds every match: the family's when the filter names one.
        let empty = OrderKeys::new();
        let family = filter.family.or(filter.status.map(OrderStatus::family));
        let base = match family {
            Some(family) => index.by_family.get(&family).unwrap_or(&empty),
            None => &index.by_created,
        };
        if filter.updated_since.is_none() && filter.number.is_none() {
            if filter.status.is_none() {
                // Every key of `base` matches: count it, clone the page only.
                let items = base
                    .iter()
                    .rev()
                    .skip(usize::try_from(page.offset()).unwrap_or(usize::MAX))
                    .take(page.per_page as usize)
                    .map(|(_, id)| s.orders[id].clone())
                    .collect();
                return Ok(Page {
                    items,
                    total: base.len() as u64,
                });
            }
        } else if let Some(since) = filter.updated_since {
            // Sync: the orders changed since `since` are usually few; gather them from the
            // `updated_at` index and sort them into list order, unless they are most of `base`.
            let changed = index.by_updated.range((since, OrderId(i64::MIN))..);
            if changed.clone().count() < base.len() / 4 {
                let mut keys: Vec<(DateTime<Utc>, OrderId)> = changed
                    .map(|(_, id)| &s.orders[id])
                    .filter(|o| o.matches(filter))
                    .map(|o| (o.created_at, o.id))
                    .collect();
                keys.sort_unstable_by(|a, b| b.cmp(a));
                return Ok(paginate(keys.iter().map(|(_, id)| &s.orders[id]), page));
            }
        }
        let matching = base
            .iter()
            .rev()
            .map(|(_, id)| &s.orders[id])
            .filter(|o| o.matches(filter));
        Ok(paginate(matching, page))
    }

    async fn wallet_totals(
        &self,
        account: AccountId,
        held_after: DateTime<Utc>,
    ) -> Result<WalletTotals, StoreError> {
        let s = self.lock();
        Ok(s.orders_by_account
            .get(&account)
            .map(|index| index.wallet.totals(held_after))
            .unwrap_or_default())
    }
}

#[async_trait]
impl IdempotencyStore for MemoryStore {
    async fn begin_idempotent(
        &self,
        claim: &IdempotencyClaim,
        fingerprint: &str,
        now: DateTime<Utc>,
        expires_before: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> Result<IdempotencyBegin, StoreError> {
        let mut s = self.lock();
        Ok(s.idempotency
            .begin(claim, fingerprint, now, expires_before, stale_before))
    }

    async fn finish_idempotent(
        &self,
        claim: &IdempotencyClaim,
        response: StoredResponse,
    ) -> Result<(), StoreError> {
        self.lock().idempotency.finish(claim, response)
    }

    async fn abandon_idempotent(&self, claim: &IdempotencyClaim) -> Result<(), StoreError> {
        self.lock().idempotency.abandon(claim);
        Ok(())
    }

    async fn purge_idempotency(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        Ok(self.lock().idempotency.purge(before))
    }
}

#[async_trait]
impl MeterStore for MemoryStore {
    async fn record_pulls(
        &self,
        account: AccountId,
        month: &str,
        products: &[ProductId],
    ) -> Result<(), StoreError> {
        let mut s = self.lock();
        for product in products {
            if s.pulls.insert((account, month.to_owned(), *product)) {
                *s.pull_counts
                    .entry((account, month.to_owned()))
                    .or_default() += 1;
            }
        }
        Ok(())
    }

    async fn meter(&self, account: AccountId, month: &str) -> Result<MeterReading, StoreError> {
        let s = self.lock();
        let key = (account, month.to_owned());
        Ok(MeterReading {
            pulled_products: s.pull_counts.get(&key).copied().unwrap_or(0),
            order_operations: s.order_operations.get(&key).copied().unwrap_or(0),
        })
    }
}

#[async_trait]
impl WithdrawalStore for MemoryStore {
    async fn request_withdrawal(
        &self,
        new: NewWithdrawal,
        held_after: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, WithdrawalRequestError> {
        // One lock over the balance read and the insert: requests are decided one at a time.
        let mut s = self.lock();
        let wallet = s
            .orders_by_account
            .get(&new.account_id)
            .map(|index| index.wallet.totals(held_after))
            .unwrap_or_default();
        let withdrawn = Withdrawn::of(
            s.withdrawals
                .values()
                .filter(|w| w.account_id == new.account_id),
        );
        new.admit(&wallet, withdrawn)?;
        let withdrawal = new.into_withdrawal(WithdrawalId(s.next_id("withdrawals")), now);
        s.withdrawals.insert(withdrawal.id, withdrawal.clone());
        Ok(withdrawal)
    }

    async fn decide_withdrawal(
        &self,
        id: WithdrawalId,
        decision: WithdrawalDecision,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, StoreError> {
        let mut s = self.lock();
        let withdrawal = s.withdrawals.get_mut(&id).ok_or(StoreError::NotFound)?;
        withdrawal.decide(decision, now)?;
        Ok(withdrawal.clone())
    }

    async fn withdrawals(&self, account: AccountId) -> Result<Vec<Withdrawal>, StoreError> {
        Ok(self
            .lock()
            .withdrawals
            .values()
            .filter(|w| w.account_id == account)
            .cloned()
            .collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
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
                governorate_id: GovernorateId(1),
                governorate_name: "g".into(),
            },
            shipping_option_id: ShippingOptionId(1),
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
                .take(page.per_page as usize)
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
                    AccountId(account),
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
                    order_id: OrderId(id),
                    to,
                    only_from: Vec::new(),
                    reason: None,
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
                    OrderId(id),
                    Some("https://t.example/1".into()),
                    later + Duration::minutes(id),
                )
                .await
                .unwrap();
        }
        for id in (2..=60).step_by(9) {
            store
                .set_line_outcomes(OrderId(id), Vec::new(), later + Duration::hours(id))
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
                    let page = PageRequest { page, per_page };
                    let got = store
                        .orders(AccountId(account), filter, page)
                        .await
                        .unwrap();
                    assert_eq!(
                        got,
                        expected(&store, AccountId(account), filter, page),
                        "{account} {filter:?} {page:?}"
                    );
                }
            }
        }
        // The kept wallet sums equal the recomputation from every order.
        let all = store
            .orders(
                AccountId(1),
                &OrderFilter::default(),
                PageRequest {
                    page: 1,
                    per_page: 100,
                },
            )
            .await
            .unwrap();
        let held_after = t0 - Duration::days(1);
        assert_eq!(
            store.wallet_totals(AccountId(1), held_after).await.unwrap(),
            WalletTotals::of_orders(&all.items, held_after)
        );
    }
}
