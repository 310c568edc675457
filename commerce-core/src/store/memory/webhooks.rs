//! [`WebhookStore`] for [`MemoryStore`]: endpoints and deliveries under the store's one lock,
//! so an order change and its deliveries are one operation.

use std::collections::{BTreeMap, HashMap};

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};

use super::{MemoryStore, State, next_in};
use crate::model::*;
use crate::store::{
    InsertWebhookError, QueueDeliveryError, SECRET_OVERLAP, StoreError, WebhookStore,
};

/// An event for the endpoints that receive it (`None`: no endpoint does).
pub(super) type OutboxEvent = Option<(Vec<WebhookId>, NewEvent)>;

impl State {
    /// The outbox, first half: the event `kind` (made by `event`, its snapshot taken only when
    /// an endpoint receives it) for every enabled endpoint of `account` that receives the
    /// type. Reads only, so an operation takes its event before it writes anything.
    pub(super) fn outbox_event(
        &self,
        account: AccountId,
        kind: EventType,
        event: impl FnOnce() -> NewEvent,
    ) -> OutboxEvent {
        let receivers: Vec<WebhookId> = self
            .webhooks
            .values()
            .filter(|w| w.account_id == account && w.receives(kind))
            .map(|w| w.id)
            .collect();
        if receivers.is_empty() {
            return None;
        }
        Some((receivers, event()))
    }

    /// [`outbox_event`](Self::outbox_event) of an order change.
    pub(super) fn order_event(
        &self,
        kind: EventType,
        order: &Order,
        previous: Option<OrderStatus>,
        context: EventContext,
    ) -> OutboxEvent {
        self.outbox_event(order.account_id, kind, || {
            NewEvent::order(kind, order, previous, context)
        })
    }

    /// The outbox, second half: one pending delivery of the event per receiver.
    pub(super) fn queue_outbox_event(&mut self, event: OutboxEvent) {
        if let Some((receivers, event)) = event {
            let next_id = delivery_ids(&mut self.last_ids);
            self.deliveries.queue(receivers, &event, next_id);
        }
    }
}

/// The endpoint `id` when `account` (if any) owns it.
fn owned(
    webhooks: &BTreeMap<WebhookId, Webhook>,
    account: Option<AccountId>,
    id: WebhookId,
) -> Option<&Webhook> {
    webhooks
        .get(&id)
        .filter(|w| account.is_none_or(|a| a == w.account_id))
}

/// The endpoint `id` to write, when `account` (if any) owns it.
fn owned_mut(
    webhooks: &mut BTreeMap<WebhookId, Webhook>,
    account: Option<AccountId>,
    id: WebhookId,
) -> Option<&mut Webhook> {
    webhooks
        .get_mut(&id)
        .filter(|w| account.is_none_or(|a| a == w.account_id))
}

/// The ids of new deliveries, from the store's counter of the `webhook_deliveries` table.
fn delivery_ids(last_ids: &mut HashMap<&'static str, i64>) -> impl FnMut() -> DeliveryId {
    move || DeliveryId::new(next_in(last_ids, "webhook_deliveries"))
}

#[async_trait]
impl WebhookStore for MemoryStore {
    async fn insert_webhook(
        &self,
        new: NewWebhook,
        limit: usize,
    ) -> Result<Webhook, InsertWebhookError> {
        let mut s = self.lock();
        if !s.accounts.contains_key(&new.account_id) {
            return Err(StoreError::NotFound.into());
        }
        let count = s
            .webhooks
            .values()
            .filter(|w| w.account_id == new.account_id)
            .count();
        if count >= limit {
            return Err(InsertWebhookError::TooMany { limit });
        }
        let id = WebhookId::new(s.next_id("webhook_endpoints"));
        let webhook = Webhook::registered(id, new);
        s.webhooks.insert(id, webhook.clone());
        Ok(webhook)
    }

    async fn webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
    ) -> Result<Option<Webhook>, StoreError> {
        Ok(owned(&self.lock().webhooks, account, id).cloned())
    }

    async fn find_webhooks(
        &self,
        query: &WebhookQuery,
        page: PageRequest,
    ) -> Result<Listing<Webhook>, StoreError> {
        let s = self.lock();
        let found = query.select(s.webhooks.values());
        Ok(Listing::of_selected(found, page, query.count_limit))
    }

    async fn update_webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
        patch: WebhookPatch,
        now: DateTime<Utc>,
    ) -> Result<Option<Webhook>, StoreError> {
        let s = &mut *self.lock();
        let webhook = owned_mut(&mut s.webhooks, account, id);
        Ok(s.deliveries.update_endpoint(webhook, patch, now))
    }

    async fn delete_webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
    ) -> Result<bool, StoreError> {
        let mut s = self.lock();
        if owned(&s.webhooks, account, id).is_none() {
            return Ok(false);
        }
        s.webhooks.remove(&id);
        s.deliveries.remove_endpoint(id);
        Ok(true)
    }

    async fn rotate_webhook_secret(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
        secret: WebhookSecret,
        now: DateTime<Utc>,
    ) -> Result<Option<Webhook>, StoreError> {
        let mut s = self.lock();
        Ok(owned_mut(&mut s.webhooks, account, id).map(|webhook| {
            webhook.rotate(secret, now, SECRET_OVERLAP);
            webhook.clone()
        }))
    }

    async fn queue_event(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        event: NewEvent,
        limit: usize,
    ) -> Result<Delivery, QueueDeliveryError> {
        let s = &mut *self.lock();
        let endpoint = owned(&s.webhooks, account, webhook);
        let next_id = delivery_ids(&mut s.last_ids);
        s.deliveries.queue_event(endpoint, event, limit, next_id)
    }

    async fn redeliver(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        delivery: DeliveryId,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Delivery, QueueDeliveryError> {
        let s = &mut *self.lock();
        let endpoint = owned(&s.webhooks, account, webhook);
        let next_id = delivery_ids(&mut s.last_ids);
        s.deliveries
            .redeliver(endpoint, delivery, now, limit, next_id)
    }

    async fn deliveries(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        status: Option<DeliveryStatus>,
        page: PageRequest,
    ) -> Result<Option<Page<Delivery>>, StoreError> {
        let s = self.lock();
        let endpoint = owned(&s.webhooks, account, webhook);
        Ok(s.deliveries.deliveries(endpoint, status, page))
    }

    async fn claim_deliveries(
        &self,
        now: DateTime<Utc>,
        lease_for: TimeDelta,
        lease: &LeaseToken,
        limit: usize,
        per_endpoint: usize,
        per_account: usize,
    ) -> Result<Vec<ClaimedDelivery>, StoreError> {
        let s = &mut *self.lock();
        let endpoint = |id: WebhookId| s.webhooks.get(&id);
        let chosen = s
            .deliveries
            .claimable(endpoint, now, limit, per_endpoint, per_account);
        Ok(s.deliveries.lease(chosen, endpoint, lease, now + lease_for))
    }

    async fn finish_delivery(
        &self,
        delivery: DeliveryId,
        lease: &LeaseToken,
        outcome: AttemptOutcome,
    ) -> Result<bool, StoreError> {
        let s = &mut *self.lock();
        let webhooks = &mut s.webhooks;
        Ok(s.deliveries
            .finish(delivery, lease, outcome, |id| webhooks.get_mut(&id)))
    }

    async fn queue_catalog_changed(
        &self,
        head: ChangePosition,
        event: NewEvent,
        sent_before: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let s = &mut *self.lock();
        let follows = |w: &&Webhook| {
            let account = s.accounts.get(&w.account_id);
            account.is_some_and(|a| a.follows_the_catalog())
        };
        let endpoints = s.webhooks.values().filter(follows);
        let next_id = delivery_ids(&mut s.last_ids);
        Ok(s.deliveries
            .queue_catalog_changed(endpoints, head, &event, sent_before, next_id))
    }

    async fn webhook_backlog(&self, now: DateTime<Utc>) -> Result<WebhookBacklog, StoreError> {
        let s = self.lock();
        let endpoint = |id: WebhookId| s.webhooks.get(&id);
        Ok(s.deliveries.backlog(endpoint, s.webhooks.values(), now))
    }

    async fn purge_deliveries(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let s = &mut *self.lock();
        Ok(s.deliveries.purge(s.webhooks.values(), before))
    }
}
