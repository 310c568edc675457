//! A complete store backend written from the contract alone, as a new backend's author would
//! write one: plain vectors under one mutex, every operation a scan, the rules decided by
//! `commerce_core::store` (`StatusMove`, `IdempotencyRecord::decide`), and the tables core
//! keeps in memory for such a backend, which the memory store keeps too (`IdempotencyRecords`,
//! `RateWindows`, the meter `MeterCounts`, the suppliers' statements `SupplyLedgers`, the
//! quotes `QuoteBook`, the webhook deliveries `DeliveryQueue` and the catalogue
//! `CatalogTables`, with its change feed). It passes the same three
//! suites as the production stores: the store conformance cases, the HTTP conformance cases
//! and the cancellation cases.
//!
//! What a backend must hold is in `ARCHITECTURE.md` ("A new backend") and the docs of
//! `commerce_core::store`; this file is the smallest answer to both, not a store to run (every
//! read of its own vectors scans every record).

use std::collections::HashSet;
use std::sync::{Arc, Mutex, MutexGuard};

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use commerce_core::domain::earnings::{EarningsTotals, WalletTotals, Withdrawn};
use commerce_core::domain::pieces::stock_moves;
use commerce_core::model::*;
use commerce_core::store::*;
use commerce_core::testing::http::Harness;

/// Everything in vectors; a record's id is its position plus one.
#[derive(Default)]
struct Tables {
    accounts: Vec<Account>,
    keys: Vec<ApiKey>,
    rate_windows: RateWindows,
    /// The catalogue (core's table), with its change feed.
    catalog: CatalogTables,
    orders: Vec<Order>,
    line_count: i64,
    idempotency: IdempotencyRecords,
    meter: MeterCounts,
    withdrawals: Vec<Withdrawal>,
    /// The suppliers' statements and kept totals.
    supply: SupplyLedgers,
    webhook_count: i64,
    webhooks: Vec<Webhook>,
    /// The deliveries (core's table), and how many were ever queued: the last delivery id.
    deliveries: DeliveryQueue,
    delivery_count: i64,
    /// Suppliers' quotes, as stored (a pending one past its end reads `expired`).
    quotes: QuoteBook,
}

/// The store: one mutex held across each operation makes every operation atomic. No
/// operation awaits while holding it, so a dropped future leaves nothing half-done.
#[derive(Default)]
struct SmallStore(Mutex<Tables>);

impl SmallStore {
    /// The tables, for one whole operation.
    fn lock(&self) -> MutexGuard<'_, Tables> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// The next id of a table of `len` records.
fn next_id(len: usize) -> i64 {
    len as i64 + 1
}

/// Whether `w` is the endpoint `id`, of `account` if one is given.
fn is(w: &Webhook, account: Option<AccountId>, id: WebhookId) -> bool {
    w.id == id && account.is_none_or(|a| a == w.account_id)
}

/// One record by id, or `NotFound`.
fn find<T>(items: &mut [T], id: i64) -> Result<&mut T, StoreError> {
    usize::try_from(id - 1)
        .ok()
        .and_then(|i| items.get_mut(i))
        .ok_or(StoreError::NotFound)
}

impl Tables {
    /// Writes `before` as `after` at `at`: every refusal first ([`Order::check_write`], then
    /// the suppliers' bookings, which write only when all of them pass), then the stock it
    /// moves and the order.
    fn write_order(
        &mut self,
        before: &Order,
        after: Order,
        at: DateTime<Utc>,
    ) -> Result<Order, StoreError> {
        let account = before.account_id;
        let orders = self.orders.iter().filter(|o| o.account_id == account);
        let mine = self.withdrawals.iter().filter(|w| w.account_id == account);
        let stock = before.check_write(
            &after,
            || EarningsTotals::of_orders(orders).settled,
            || Withdrawn::of(mine),
            |id| self.catalog.variant(id).map(|v| v.available),
        )?;
        self.supply
            .book(SupplyBooking::of_order_write(Some(before), &after, at))?;
        self.catalog.move_order_stock(after.id, stock, at);
        *find(&mut self.orders, after.id.into())? = after.clone();
        Ok(after)
    }

    /// The outbox: a delivery of `event` per endpoint of `account` receiving its type.
    fn queue_outbox(&mut self, account: AccountId, event: &NewEvent) {
        let (webhooks, deliveries, next_id) = self.outbox();
        let receivers = webhooks.iter().filter(|w| w.account_id == account);
        let receivers = receivers.filter(|w| w.receives(event.kind)).map(|w| w.id);
        deliveries.queue(receivers, event, next_id);
    }

    /// The endpoints, the deliveries and the ids of new ones (counted on), apart.
    fn outbox(&mut self) -> (&[Webhook], &mut DeliveryQueue, impl FnMut() -> DeliveryId) {
        let count = &mut self.delivery_count;
        let next_id = move || {
            *count += 1;
            DeliveryId::new(*count)
        };
        (&self.webhooks, &mut self.deliveries, next_id)
    }

    /// Queues the `quote.updated` event of each quote written out of `pending`.
    fn quotes_updated(&mut self, quotes: impl IntoIterator<Item = Quote>) {
        for quote in quotes {
            let read = quote.as_read(self.catalog.product(quote.product_id), quote.updated_at);
            let event = NewEvent::quote(&read, QuoteStatus::Pending);
            self.queue_outbox(quote.account_id, &event);
        }
    }

    /// An account's wallet sums: from its orders, and from its statement.
    fn wallet(&self, account: AccountId, held_after: DateTime<Utc>) -> WalletTotals {
        let orders = self.orders.iter().filter(|o| o.account_id == account);
        let supplier = self.supply.wallet(account, held_after);
        WalletTotals::of_orders(orders, held_after).and(supplier)
    }
}

#[async_trait]
impl AccountStore for SmallStore {
    async fn insert_account(
        &self,
        new: NewAccount,
        now: DateTime<Utc>,
    ) -> Result<Account, StoreError> {
        let mut t = self.lock();
        if t.accounts.iter().any(|a| a.email == new.email) {
            return Err(StoreError::Duplicate(Unique::AccountEmail));
        }
        let account = new.into_account(AccountId::new(next_id(t.accounts.len())), now);
        t.accounts.push(account.clone());
        Ok(account)
    }

    async fn account(&self, id: AccountId) -> Result<Option<Account>, StoreError> {
        Ok(find(&mut self.lock().accounts, id.into()).ok().cloned())
    }

    async fn update_account(
        &self,
        id: AccountId,
        patch: AccountPatch,
        now: DateTime<Utc>,
    ) -> Result<Account, StoreError> {
        let mut t = self.lock();
        let account = find(&mut t.accounts, id.into())?;
        if !patch.applies_to(account) {
            return Err(StoreError::Invalid(ACCOUNT_CHANGED.into()));
        }
        patch.apply(account, now);
        Ok(account.clone())
    }

    async fn find_accounts(
        &self,
        query: &AccountQuery,
        page: PageRequest,
    ) -> Result<Listing<Account>, StoreError> {
        let t = self.lock();
        let found = query.select(&t.accounts);
        Ok(Listing::of_selected(found, page, query.count_limit))
    }

    async fn insert_key(
        &self,
        key: NewKeyRecord,
        now: DateTime<Utc>,
        max_live: usize,
    ) -> Result<ApiKey, InsertKeyError> {
        let mut t = self.lock();
        find(&mut t.accounts, key.account_id.into())?;
        if t.keys.iter().any(|k| k.hash == key.hash) {
            return Err(StoreError::Invalid(KEY_HASH_STORED.into()).into());
        }
        let live = t
            .keys
            .iter()
            .filter(|k| k.account_id == key.account_id && k.is_live(now))
            .count();
        if live >= max_live {
            return Err(InsertKeyError::TooMany { limit: max_live });
        }
        let key = key.into_key(KeyId::new(next_id(t.keys.len())), now);
        t.keys.push(key.clone());
        Ok(key)
    }

    async fn key_by_hash(&self, hash: &KeyHash) -> Result<Option<ApiKey>, StoreError> {
        Ok(self.lock().keys.iter().find(|k| &k.hash == hash).cloned())
    }

    async fn key(&self, id: KeyId) -> Result<Option<ApiKey>, StoreError> {
        Ok(find(&mut self.lock().keys, id.into()).ok().cloned())
    }

    async fn revoke_key(&self, id: KeyId, at: DateTime<Utc>) -> Result<ApiKey, StoreError> {
        let mut t = self.lock();
        let key = find(&mut t.keys, id.into())?;
        key.revoked_at.get_or_insert(at);
        Ok(key.clone())
    }

    async fn set_key_terms(
        &self,
        id: KeyId,
        expires_at: Option<DateTime<Utc>>,
        rate_limit: u32,
    ) -> Result<ApiKey, StoreError> {
        let mut t = self.lock();
        let key = find(&mut t.keys, id.into())?;
        key.expires_at = expires_at;
        key.rate_limit = rate_limit;
        Ok(key.clone())
    }

    async fn keys(&self, account: AccountId) -> Result<Vec<KeyListing>, StoreError> {
        let t = self.lock();
        Ok(t.keys
            .iter()
            .filter(|k| k.account_id == account)
            .map(|k| KeyListing::of(k.clone(), t.rate_windows.latest(k.id)))
            .collect())
    }

    async fn hit_rate_limit(
        &self,
        key: KeyId,
        window: RateWindow,
        limit: u32,
    ) -> Result<RateLimitHit, StoreError> {
        Ok(self.lock().rate_windows.hit(key, window, limit))
    }
}

#[async_trait]
impl CatalogStore for SmallStore {
    async fn insert_category(&self, new: NewCategory) -> Result<Category, StoreError> {
        self.lock().catalog.insert_category(new)
    }

    async fn update_category(
        &self,
        id: CategoryId,
        patch: CategoryPatch,
        now: DateTime<Utc>,
    ) -> Result<Category, StoreError> {
        self.lock().catalog.update_category(id, &patch, now)
    }

    async fn all_categories(&self) -> Result<Vec<Category>, StoreError> {
        Ok(self.lock().catalog.all_categories())
    }

    async fn insert_product(
        &self,
        new: NewProduct,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError> {
        self.lock().catalog.insert_product(new, now)
    }

    async fn insert_variant(
        &self,
        product: ProductId,
        new: NewVariant,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError> {
        self.lock().catalog.insert_variant(product, new, now)
    }

    async fn update_variant(
        &self,
        id: VariantId,
        patch: VariantPatch,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError> {
        self.lock().catalog.update_variant(id, &patch, now)
    }

    async fn adjust_stock(
        &self,
        new: NewStockAdjustment,
        now: DateTime<Utc>,
    ) -> Result<StockAdjustment, StockError> {
        self.lock().catalog.adjust_stock(new, now)
    }

    async fn stock_adjustments(
        &self,
        variant: VariantId,
        page: PageRequest,
    ) -> Result<Page<StockAdjustment>, StoreError> {
        Ok(self.lock().catalog.stock_adjustments(variant, page))
    }

    async fn insert_warranty(
        &self,
        product: ProductId,
        new: NewWarranty,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError> {
        self.lock().catalog.insert_warranty(product, new, now)
    }

    async fn update_product(
        &self,
        id: ProductId,
        patch: ProductPatch,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError> {
        let mut t = self.lock();
        let (product, moved) = t.catalog.update_product(id, &patch, now)?;
        // The old supplier's pending quotes end with the move.
        for variant in moved {
            let ended = t.quotes.end_pending(variant, now);
            t.quotes_updated(ended);
        }
        Ok(product)
    }

    async fn update_warranty(
        &self,
        id: WarrantyId,
        patch: WarrantyPatch,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError> {
        self.lock().catalog.update_warranty(id, &patch, now)
    }

    async fn products(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
    ) -> Result<Page<Product>, StoreError> {
        Ok(self.lock().catalog.products(filter, page, Product::clone))
    }

    async fn removed_products(
        &self,
        since: DateTime<Utc>,
        page: PageRequest,
    ) -> Result<Page<RemovedProduct>, StoreError> {
        Ok(self.lock().catalog.removed_products(since, page))
    }

    async fn product(&self, id: ProductId) -> Result<Option<Product>, StoreError> {
        Ok(self.lock().catalog.product(id).cloned())
    }

    async fn newest_catalog_change(&self) -> Result<Option<ChangePosition>, StoreError> {
        Ok(self.lock().catalog.newest_catalog_change())
    }

    async fn catalog_changes(
        &self,
        after: Option<ChangePosition>,
        limit: usize,
    ) -> Result<CatalogChanges, StoreError> {
        Ok(self.lock().catalog.catalog_changes(after, limit))
    }

    async fn products_of_variants(
        &self,
        variants: &[VariantId],
    ) -> Result<Vec<Product>, StoreError> {
        Ok(self.lock().catalog.products_of_variants(variants))
    }

    async fn insert_governorate(&self, name: String) -> Result<Governorate, StoreError> {
        self.lock().catalog.insert_governorate(name)
    }

    async fn governorates(&self) -> Result<Vec<Governorate>, StoreError> {
        Ok(self.lock().catalog.governorates())
    }

    async fn insert_shipping_option(&self, name: String) -> Result<ShippingOption, StoreError> {
        Ok(self.lock().catalog.insert_shipping_option(name))
    }

    async fn set_shipping_option_active(
        &self,
        id: ShippingOptionId,
        active: bool,
    ) -> Result<ShippingOption, StoreError> {
        self.lock().catalog.set_shipping_option_active(id, active)
    }

    async fn set_shipping_rate(
        &self,
        option: ShippingOptionId,
        rate: ShippingRate,
    ) -> Result<ShippingOption, StoreError> {
        self.lock().catalog.set_shipping_rate(option, rate)
    }

    async fn shipping_options(&self) -> Result<Vec<ShippingOption>, StoreError> {
        Ok(self.lock().catalog.shipping_options())
    }
}

#[async_trait]
impl OrderStore for SmallStore {
    async fn place_order(&self, new: NewOrder) -> Result<Order, PlaceOrderError> {
        let mut t = self.lock();
        let taken = |o: &&Order| {
            o.account_id == new.account_id
                && o.external_reference.is_some()
                && o.external_reference == new.external_reference
        };
        new.check_placement(
            t.orders.iter().find(taken),
            t.orders.iter().any(|o| o.number == new.number),
            |claim| t.idempotency.holds(claim),
            |id| t.catalog.product(id),
            |v| t.catalog.variant(v).map_or(0, |x| x.available),
        )?;
        let id = OrderId::new(next_id(t.orders.len()));
        let lines = new.lines.len() as i64;
        let line_ids = (1..=lines).map(|i| LineId::new(t.line_count + i));
        let (claim, month, events) = (new.idempotency.clone(), new.bill_month.clone(), new.events);
        let order = new.into_order(id, line_ids.collect::<Vec<_>>());
        // The last refusal (the suppliers' bookings, which write only when all pass), then
        // the writes: nothing is written when a placement is refused.
        let booking = SupplyBooking::of_order_write(None, &order, order.created_at);
        t.supply.book(booking)?;
        t.line_count += lines;
        if let Some(claim) = &claim {
            t.idempotency.link(claim, id);
        }
        t.meter
            .bill_order_operation(order.account_id, month.as_ref());
        // The pieces fit (checked above).
        t.catalog
            .move_order_stock(order.id, stock_moves(None, &order), order.created_at);
        let event = NewEvent::order(EventType::OrderCreated, &order, None, events);
        t.queue_outbox(order.account_id, &event);
        t.orders.push(order.clone());
        Ok(order)
    }

    async fn change_order_status(&self, change: StatusChange) -> Result<Order, StatusChangeError> {
        let mut t = self.lock();
        let order = find(&mut t.orders, change.order_id.into())
            .map_err(|_| StatusChangeError::NotFound)?
            .clone();
        let (account, previous) = (order.account_id, order.status);
        let moved = change.applied_to(&order)?;
        let order = t.write_order(&order, moved, change.at)?;
        t.meter
            .bill_order_operation(account, change.bill_month.as_ref());
        let kind = EventType::OrderStatusChanged;
        let event = NewEvent::order(kind, &order, Some(previous), change.events);
        t.queue_outbox(account, &event);
        Ok(order)
    }

    async fn set_line_outcomes(
        &self,
        order: OrderId,
        outcomes: Vec<(LineId, LineOutcome)>,
        read_at: Option<DateTime<Utc>>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError> {
        let mut t = self.lock();
        let order = find(&mut t.orders, order.into())?.clone();
        let changed = order.with_outcomes(&outcomes, read_at, now)?;
        t.write_order(&order, changed, now)
    }

    async fn set_tracking_url(
        &self,
        order: OrderId,
        url: Option<String>,
        now: DateTime<Utc>,
    ) -> Result<Order, StoreError> {
        let mut t = self.lock();
        let order = find(&mut t.orders, order.into())?;
        order.tracking_url = url;
        order.updated_at = next_updated_at(order.updated_at, now);
        Ok(order.clone())
    }

    async fn order(
        &self,
        account: Option<AccountId>,
        id: OrderId,
    ) -> Result<Option<Order>, StoreError> {
        let mut t = self.lock();
        let order = find(&mut t.orders, id.into()).ok();
        Ok(order
            .filter(|o| account.is_none_or(|a| a == o.account_id))
            .cloned())
    }

    async fn find_orders(
        &self,
        query: &OrderQuery,
        page: PageRequest,
    ) -> Result<Listing<Order>, StoreError> {
        let t = self.lock();
        let found = query.select(&t.orders);
        Ok(Listing::of_selected(found, page, query.count_limit))
    }

    async fn order_status_counts(
        &self,
        query: &OrderQuery,
    ) -> Result<Vec<(OrderStatus, Count)>, StoreError> {
        Ok(query.status_counts(&self.lock().orders))
    }

    async fn wallet_totals(
        &self,
        account: AccountId,
        held_after: DateTime<Utc>,
    ) -> Result<WalletTotals, StoreError> {
        Ok(self.lock().wallet(account, held_after))
    }

    async fn statement(
        &self,
        supplier: AccountId,
        filter: &StatementFilter,
        page: PageRequest,
    ) -> Result<Page<StatementEntry>, StoreError> {
        Ok(self.lock().supply.page(supplier, filter, page))
    }
}

#[async_trait]
impl IdempotencyStore for SmallStore {
    async fn begin_idempotent(
        &self,
        claim: &IdempotencyClaim,
        fingerprint: &str,
        now: DateTime<Utc>,
        expires_before: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> Result<IdempotencyBegin, StoreError> {
        let mut t = self.lock();
        Ok(t.idempotency
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
impl MeterStore for SmallStore {
    async fn record_pulls(
        &self,
        account: AccountId,
        month: &BillingMonth,
        products: &[ProductId],
    ) -> Result<(), StoreError> {
        self.lock().meter.record_pulls(account, month, products);
        Ok(())
    }

    async fn meter(
        &self,
        account: AccountId,
        month: &BillingMonth,
    ) -> Result<MeterReading, StoreError> {
        Ok(self.lock().meter.reading(account, month))
    }
}

#[async_trait]
impl WithdrawalStore for SmallStore {
    async fn request_withdrawal(
        &self,
        new: NewWithdrawal,
        held_after: DateTime<Utc>,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, WithdrawalRequestError> {
        let mut t = self.lock();
        let side = find(&mut t.accounts, new.account_id.into())?.side;
        let wallet = t.wallet(new.account_id, held_after);
        let mine = t
            .withdrawals
            .iter()
            .filter(|w| w.account_id == new.account_id);
        new.admit(&wallet, Withdrawn::of(mine))?;
        let withdrawal = new.into_withdrawal(WithdrawalId::new(next_id(t.withdrawals.len())), now);
        t.supply.book(
            SupplyBooking::of_withdrawal(&withdrawal, side)
                .into_iter()
                .collect(),
        )?;
        t.withdrawals.push(withdrawal.clone());
        Ok(withdrawal)
    }

    async fn decide_withdrawal(
        &self,
        id: WithdrawalId,
        decision: WithdrawalDecision,
        now: DateTime<Utc>,
    ) -> Result<Withdrawal, StoreError> {
        let mut t = self.lock();
        let mut withdrawal = find(&mut t.withdrawals, id.into())?.clone();
        withdrawal.decide(decision, now)?;
        let side = find(&mut t.accounts, withdrawal.account_id.into())?.side;
        if withdrawal.status == WithdrawalStatus::Rejected {
            t.supply.book(
                SupplyBooking::of_rejection(&withdrawal, side, now)
                    .into_iter()
                    .collect(),
            )?;
        }
        *find(&mut t.withdrawals, id.into())? = withdrawal.clone();
        let event = NewEvent::withdrawal(&withdrawal, WithdrawalStatus::Pending);
        t.queue_outbox(withdrawal.account_id, &event);
        Ok(withdrawal)
    }

    async fn withdrawals(&self, account: AccountId) -> Result<Vec<Withdrawal>, StoreError> {
        Ok(self
            .lock()
            .withdrawals
            .iter()
            .filter(|w| w.account_id == account)
            .cloned()
            .collect())
    }

    async fn find_withdrawals(
        &self,
        query: &WithdrawalQuery,
        page: PageRequest,
    ) -> Result<Listing<Withdrawal>, StoreError> {
        let t = self.lock();
        let found = query.select(&t.withdrawals);
        Ok(Listing::of_selected(found, page, query.count_limit))
    }

    async fn withdrawal_totals(
        &self,
        query: &WithdrawalQuery,
    ) -> Result<WithdrawalTotals, StoreError> {
        Ok(WithdrawalTotals::of(query.select(&self.lock().withdrawals)))
    }
}

#[async_trait]
impl WebhookStore for SmallStore {
    async fn insert_webhook(
        &self,
        new: NewWebhook,
        limit: usize,
    ) -> Result<Webhook, InsertWebhookError> {
        let mut t = self.lock();
        find(&mut t.accounts, new.account_id.into())?;
        let mine = t.webhooks.iter().filter(|w| w.account_id == new.account_id);
        if mine.count() >= limit {
            return Err(InsertWebhookError::TooMany { limit });
        }
        t.webhook_count += 1;
        let webhook = Webhook::registered(WebhookId::new(t.webhook_count), new);
        t.webhooks.push(webhook.clone());
        Ok(webhook)
    }

    async fn webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
    ) -> Result<Option<Webhook>, StoreError> {
        let t = self.lock();
        Ok(t.webhooks.iter().find(|w| is(w, account, id)).cloned())
    }

    async fn find_webhooks(
        &self,
        query: &WebhookQuery,
        page: PageRequest,
    ) -> Result<Listing<Webhook>, StoreError> {
        let t = self.lock();
        let found = query.select(&t.webhooks);
        Ok(Listing::of_selected(found, page, query.count_limit))
    }

    async fn update_webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
        patch: WebhookPatch,
        now: DateTime<Utc>,
    ) -> Result<Option<Webhook>, StoreError> {
        let t = &mut *self.lock();
        let w = t.webhooks.iter_mut().find(|w| is(w, account, id));
        Ok(t.deliveries.update_endpoint(w, patch, now))
    }

    async fn delete_webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
    ) -> Result<bool, StoreError> {
        let mut t = self.lock();
        if !t.webhooks.iter().any(|w| is(w, account, id)) {
            return Ok(false);
        }
        t.webhooks.retain(|w| w.id != id);
        t.deliveries.remove_endpoint(id);
        Ok(true)
    }

    async fn rotate_webhook_secret(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
        secret: WebhookSecret,
        now: DateTime<Utc>,
    ) -> Result<Option<Webhook>, StoreError> {
        let mut t = self.lock();
        Ok(t.webhooks.iter_mut().find(|w| is(w, account, id)).map(|w| {
            w.rotate(secret, now, SECRET_OVERLAP);
            w.clone()
        }))
    }

    async fn queue_event(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        event: NewEvent,
        limit: usize,
    ) -> Result<Delivery, QueueDeliveryError> {
        let mut t = self.lock();
        let (webhooks, deliveries, next_id) = t.outbox();
        let w = webhooks.iter().find(|w| is(w, account, webhook));
        deliveries.queue_event(w, event, limit, next_id)
    }

    async fn redeliver(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        delivery: DeliveryId,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Delivery, QueueDeliveryError> {
        let mut t = self.lock();
        let (webhooks, deliveries, next_id) = t.outbox();
        let w = webhooks.iter().find(|w| is(w, account, webhook));
        deliveries.redeliver(w, delivery, now, limit, next_id)
    }

    async fn deliveries(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        status: Option<DeliveryStatus>,
        page: PageRequest,
    ) -> Result<Option<Page<Delivery>>, StoreError> {
        let t = self.lock();
        let w = t.webhooks.iter().find(|w| is(w, account, webhook));
        Ok(t.deliveries.deliveries(w, status, page))
    }

    async fn claim_deliveries(
        &self,
        now: DateTime<Utc>,
        lease_for: chrono::TimeDelta,
        lease: &LeaseToken,
        limit: usize,
        per_endpoint: usize,
        per_account: usize,
    ) -> Result<Vec<ClaimedDelivery>, StoreError> {
        let t = &mut *self.lock();
        let w = |id| t.webhooks.iter().find(|w| w.id == id);
        let queue = &mut t.deliveries;
        let chosen = queue.claimable(w, now, limit, per_endpoint, per_account);
        Ok(queue.lease(chosen, w, lease, now + lease_for))
    }

    async fn finish_delivery(
        &self,
        delivery: DeliveryId,
        lease: &LeaseToken,
        outcome: AttemptOutcome,
    ) -> Result<bool, StoreError> {
        let t = &mut *self.lock();
        Ok(t.deliveries.finish(delivery, lease, outcome, |id| {
            t.webhooks.iter_mut().find(|w| w.id == id)
        }))
    }

    async fn queue_catalog_changed(
        &self,
        head: ChangePosition,
        event: NewEvent,
        sent_before: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let mut t = self.lock();
        let readers = t.accounts.iter().filter(|a| a.follows_the_catalog());
        let readers: HashSet<AccountId> = readers.map(|a| a.id).collect();
        let (webhooks, deliveries, next_id) = t.outbox();
        let endpoints = webhooks.iter().filter(|w| readers.contains(&w.account_id));
        Ok(deliveries.queue_catalog_changed(endpoints, head, &event, sent_before, next_id))
    }

    async fn webhook_backlog(&self, now: DateTime<Utc>) -> Result<WebhookBacklog, StoreError> {
        let t = self.lock();
        let w = |id| t.webhooks.iter().find(|w| w.id == id);
        Ok(t.deliveries.backlog(w, &t.webhooks, now))
    }

    async fn purge_deliveries(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let t = &mut *self.lock();
        Ok(t.deliveries.purge(&t.webhooks, before))
    }
}

#[async_trait]
impl SupplyStore for SmallStore {
    async fn insert_quote(
        &self,
        new: NewQuote,
        claim: Option<&IdempotencyClaim>,
        now: DateTime<Utc>,
    ) -> Result<Quote, InsertQuoteError> {
        let mut t = self.lock();
        let product = t.catalog.owner(new.variant_id).cloned();
        let supplier = product.as_ref().and_then(|p| p.supplier_id);
        let ended = t.quotes.admit(&new, supplier, now)?; // a former supplier's (never here)
        t.quotes_updated(ended);
        let product = product.ok_or(InsertQuoteError::NotSuppliers)?;
        if claim.is_some_and(|claim| !t.idempotency.holds(claim)) {
            return Err(InsertQuoteError::IdempotencyLost);
        }
        let expired = t.quotes.end_pending(new.variant_id, now); // expired meanwhile
        t.quotes_updated(expired);
        let quote = t.quotes.insert(new, &product, now);
        if let Some(claim) = claim {
            t.idempotency.link(claim, quote.id);
        }
        Ok(quote)
    }

    async fn quote(
        &self,
        account: Option<AccountId>,
        id: QuoteId,
        now: DateTime<Utc>,
    ) -> Result<Option<Quote>, StoreError> {
        let t = self.lock();
        Ok(t.quotes.quote(account, id, now, |p| t.catalog.product(p)))
    }

    async fn quotes(
        &self,
        account: AccountId,
        filter: &QuoteFilter,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<Quote>, StoreError> {
        let t = self.lock();
        Ok(t.quotes
            .quotes(account, filter, page, now, |p| t.catalog.product(p)))
    }

    async fn find_quotes(
        &self,
        query: &QuoteQuery,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<Quote>, StoreError> {
        let t = self.lock();
        Ok(t.quotes
            .find_quotes(query, page, now, |p| t.catalog.product(p)))
    }

    async fn decide_quote(
        &self,
        account: Option<AccountId>,
        id: QuoteId,
        decision: QuoteDecision,
        now: DateTime<Utc>,
    ) -> Result<Quote, QuoteDecisionError> {
        let mut t = self.lock();
        let supplier_of = |v| t.catalog.owner(v)?.supplier_id;
        let (quote, taken) = t.quotes.decided(account, id, &decision, supplier_of, now)?;
        if taken && let QuoteDecision::Accept { .. } = decision {
            // The received pieces, then the supply price, under the same lock.
            t.catalog.receive(&quote, now)?;
        }
        if t.quotes.put(quote.clone()) {
            t.quotes_updated([quote.clone()]);
        }
        Ok(quote.as_read(t.catalog.product(quote.product_id), now))
    }

    async fn expire_quotes(&self, now: DateTime<Utc>, limit: usize) -> Result<u64, StoreError> {
        let mut t = self.lock();
        let expired = t.quotes.expire(now, limit);
        let count = expired.len() as u64;
        t.quotes_updated(expired);
        Ok(count)
    }

    async fn supply_variants(
        &self,
        account: AccountId,
        updated_since: Option<DateTime<Utc>>,
        page: PageRequest,
        now: DateTime<Utc>,
    ) -> Result<Page<SupplyVariant>, StoreError> {
        let t = self.lock();
        let mine = t.catalog.supplier_products(account);
        Ok(t.quotes.supply_variants(mine, updated_since, page, now))
    }
}

async fn fresh_store() -> Arc<dyn Store> {
    Arc::new(SmallStore::default())
}

mod store_cases {
    use super::*;
    commerce_core::store_conformance_tests!(fresh_store());
}

mod http_cases {
    use super::*;
    commerce_core::http_conformance_tests!(Harness::bare(Arc::new(SmallStore::default())));
}

mod cancellation_cases {
    use super::*;
    commerce_core::cancellation_tests!(Harness::bare(Arc::new(SmallStore::default())));
}
