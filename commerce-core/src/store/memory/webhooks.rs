//! [`WebhookStore`] for [`MemoryStore`]: endpoints and deliveries under the store's one lock,
//! so an order change and its deliveries are one operation.

use std::collections::{BTreeSet, HashMap};

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};

use super::{MemoryStore, State};
use crate::model::*;
use crate::store::{
    ClaimRoom, InsertWebhookError, QueueDeliveryError, SECRET_OVERLAP, StoreError, WebhookStore,
};

/// A delivery with what only the store needs: its lease (holder and end).
#[derive(Debug, Clone)]
pub(super) struct Queued {
    delivery: Delivery,
    lease: Option<(LeaseToken, DateTime<Utc>)>,
}

/// The pending deliveries, indexed for the claim: in the order a claim takes them (due
/// first, then by id), per order and endpoint (only the earliest of those may go), and the
/// leased ones per endpoint (at most so many in flight per endpoint). A claim reads from the
/// start of the first index and stops at its batch, whatever the history kept (passing over
/// the due deliveries of endpoints that have as many in flight as they may).
#[derive(Debug, Default)]
pub(super) struct PendingDeliveries {
    by_due: BTreeSet<(DateTime<Utc>, DeliveryId)>,
    by_order: HashMap<(WebhookId, OrderId), BTreeSet<DeliveryId>>,
    /// How many manual deliveries are pending per endpoint (the limit of `queue_event` and
    /// `redeliver`).
    manual: HashMap<WebhookId, usize>,
    /// How many `catalog.changed` deliveries are pending per endpoint (at most one: a round
    /// passes over an endpoint that has one).
    catalog_changed: HashMap<WebhookId, usize>,
    /// The leased (claimed) deliveries per endpoint: how many are in flight to it.
    leased: HashMap<WebhookId, BTreeSet<DeliveryId>>,
}

/// Every delivery of each endpoint, by id: an endpoint's list, a URL change and the expiry
/// read its own deliveries, never every account's.
#[derive(Debug, Default)]
pub(super) struct ByWebhook(HashMap<WebhookId, BTreeSet<DeliveryId>>);

impl ByWebhook {
    /// The ids of `webhook`'s deliveries, oldest first.
    fn of(&self, webhook: WebhookId) -> impl DoubleEndedIterator<Item = DeliveryId> + '_ {
        self.0.get(&webhook).into_iter().flatten().copied()
    }
}

impl PendingDeliveries {
    /// Files `delivery` when it is pending.
    fn add(&mut self, delivery: &Delivery) {
        if delivery.status != DeliveryStatus::Pending {
            return;
        }
        if let Some(at) = delivery.next_attempt_at {
            self.by_due.insert((at, delivery.id));
        }
        if let Some(order) = delivery.order_id {
            let pair = (delivery.webhook_id, order);
            self.by_order.entry(pair).or_default().insert(delivery.id);
        }
        for counted in self.counters(delivery) {
            *counted.entry(delivery.webhook_id).or_default() += 1;
        }
    }

    /// The per-endpoint counts of pending deliveries that `delivery` counts in.
    fn counters(&mut self, delivery: &Delivery) -> Vec<&mut HashMap<WebhookId, usize>> {
        let mut counted = Vec::new();
        if delivery.manual {
            counted.push(&mut self.manual);
        }
        if delivery.event_type == EventType::CatalogChanged {
            counted.push(&mut self.catalog_changed);
        }
        counted
    }

    /// Unfiles `delivery` as it is now (before a change of its status or due time).
    fn remove(&mut self, delivery: &Delivery) {
        if let Some(at) = delivery.next_attempt_at {
            self.by_due.remove(&(at, delivery.id));
        }
        if let Some(order) = delivery.order_id {
            let pair = (delivery.webhook_id, order);
            if let Some(ids) = self.by_order.get_mut(&pair) {
                ids.remove(&delivery.id);
                if ids.is_empty() {
                    self.by_order.remove(&pair);
                }
            }
        }
        if delivery.status != DeliveryStatus::Pending {
            return;
        }
        for counted in self.counters(delivery) {
            if let Some(count) = counted.get_mut(&delivery.webhook_id) {
                *count -= 1;
                if *count == 0 {
                    counted.remove(&delivery.webhook_id);
                }
            }
        }
    }

    /// How many manual deliveries to `webhook` are pending.
    fn manual_of(&self, webhook: WebhookId) -> usize {
        self.manual.get(&webhook).copied().unwrap_or(0)
    }

    /// Whether a `catalog.changed` delivery to `webhook` is pending.
    fn has_catalog_changed(&self, webhook: WebhookId) -> bool {
        self.catalog_changed.contains_key(&webhook)
    }

    /// Files `delivery` as leased (claimed).
    fn lease(&mut self, delivery: &Delivery) {
        let ids = self.leased.entry(delivery.webhook_id).or_default();
        ids.insert(delivery.id);
    }

    /// Unfiles `delivery` as leased (its attempt recorded, or the delivery dropped).
    fn release(&mut self, delivery: &Delivery) {
        if let Some(ids) = self.leased.get_mut(&delivery.webhook_id) {
            ids.remove(&delivery.id);
            if ids.is_empty() {
                self.leased.remove(&delivery.webhook_id);
            }
        }
    }

    /// Whether no pending delivery of the same order to the same endpoint came before it.
    fn is_next_of_its_order(&self, delivery: &Delivery) -> bool {
        delivery.order_id.is_none_or(|order| {
            self.by_order
                .get(&(delivery.webhook_id, order))
                .and_then(|ids| ids.first())
                .is_none_or(|first| *first == delivery.id)
        })
    }
}

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
        let Some((receivers, event)) = event else {
            return;
        };
        for webhook in receivers {
            let id = DeliveryId::new(self.next_id("webhook_deliveries"));
            self.queue(Delivery::queued(id, webhook, &event));
        }
    }

    /// Files a new delivery.
    fn queue(&mut self, delivery: Delivery) -> Delivery {
        let id = delivery.id;
        self.pending_deliveries.add(&delivery);
        self.deliveries_by_webhook
            .0
            .entry(delivery.webhook_id)
            .or_default()
            .insert(id);
        self.deliveries.insert(
            id,
            Queued {
                delivery: delivery.clone(),
                lease: None,
            },
        );
        delivery
    }

    fn owned_webhook(&self, account: Option<AccountId>, id: WebhookId) -> Option<&Webhook> {
        self.webhooks
            .get(&id)
            .filter(|w| account.is_none_or(|a| a == w.account_id))
    }

    /// Queues `event` for `webhook` on request, unless the endpoint is not found, is disabled
    /// or has `limit` manual deliveries pending (see `WebhookStore::queue_event`).
    fn queue_manual(
        &mut self,
        account: Option<AccountId>,
        webhook: WebhookId,
        event: impl FnOnce(&Self) -> Option<NewEvent>,
        limit: usize,
    ) -> Result<Delivery, QueueDeliveryError> {
        let endpoint = self
            .owned_webhook(account, webhook)
            .ok_or(QueueDeliveryError::NotFound)?;
        let pending = self.pending_deliveries.manual_of(webhook);
        let event = endpoint.admit_manual(event(self), pending, limit)?;
        let id = DeliveryId::new(self.next_id("webhook_deliveries"));
        Ok(self.queue(Delivery::queued(id, webhook, &event).manual()))
    }

    /// Ends every pending delivery of `webhook` with `reason` (and its lease).
    fn end_pending(&mut self, webhook: WebhookId, reason: &str) {
        let State {
            deliveries,
            pending_deliveries,
            deliveries_by_webhook,
            ..
        } = self;
        for id in deliveries_by_webhook.of(webhook) {
            if let Some(queued) = deliveries.get_mut(&id)
                && queued.delivery.status == DeliveryStatus::Pending
            {
                pending_deliveries.remove(&queued.delivery);
                pending_deliveries.release(&queued.delivery);
                queued.delivery.end(reason);
                queued.lease = None;
            }
        }
    }

    fn owned_webhook_mut(
        &mut self,
        account: Option<AccountId>,
        id: WebhookId,
    ) -> Option<&mut Webhook> {
        self.webhooks
            .get_mut(&id)
            .filter(|w| account.is_none_or(|a| a == w.account_id))
    }

    /// The endpoint and account of each delivery under a live lease at `now`.
    fn in_flight(&self, now: DateTime<Utc>) -> impl Iterator<Item = (WebhookId, AccountId)> + '_ {
        self.pending_deliveries
            .leased
            .iter()
            .filter_map(|(webhook, ids)| Some((self.webhooks.get(webhook)?, ids)))
            .flat_map(move |(webhook, ids)| {
                ids.iter()
                    .filter_map(|id| self.deliveries.get(id))
                    .filter(move |q| q.lease.as_ref().is_some_and(|(_, until)| *until > now))
                    .map(|_| (webhook.id, webhook.account_id))
            })
    }

    /// At most `limit` deliveries that may be claimed at `now` (see
    /// `WebhookStore::claim_deliveries`), chosen by [`ClaimRoom::choose`] from the pending
    /// ones in claim order (the index read from its start).
    fn claimable(
        &self,
        now: DateTime<Utc>,
        limit: usize,
        per_endpoint: usize,
        per_account: usize,
    ) -> Vec<DeliveryId> {
        let room = ClaimRoom::new(per_endpoint, per_account, self.in_flight(now));
        let in_claim_order = self.pending_deliveries.by_due.iter().filter_map(|(_, id)| {
            let q = self.deliveries.get(id)?;
            let leased = q.lease.as_ref().is_some_and(|(_, until)| *until > now);
            Some((
                &q.delivery,
                self.webhooks.get(&q.delivery.webhook_id),
                leased,
            ))
        });
        room.choose(in_claim_order, now, limit, |d| {
            self.pending_deliveries.is_next_of_its_order(d)
        })
    }
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
        Ok(self.lock().owned_webhook(account, id).cloned())
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
        let mut s = self.lock();
        let Some(webhook) = s.owned_webhook_mut(account, id) else {
            return Ok(None);
        };
        let moved = patch.changes_url(webhook);
        patch.apply(webhook, now);
        let webhook = webhook.clone();
        if moved {
            s.end_pending(id, URL_CHANGED);
        }
        Ok(Some(webhook))
    }

    async fn delete_webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
    ) -> Result<bool, StoreError> {
        let mut s = self.lock();
        if s.owned_webhook(account, id).is_none() {
            return Ok(false);
        }
        s.webhooks.remove(&id);
        s.catalog_sent.remove(&id);
        let State {
            deliveries,
            pending_deliveries,
            deliveries_by_webhook,
            ..
        } = &mut *s;
        for delivery in deliveries_by_webhook.0.remove(&id).into_iter().flatten() {
            if let Some(q) = deliveries.remove(&delivery) {
                pending_deliveries.remove(&q.delivery);
            }
        }
        pending_deliveries.leased.remove(&id);
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
        Ok(s.owned_webhook_mut(account, id).map(|webhook| {
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
        self.lock()
            .queue_manual(account, webhook, |_| Some(event), limit)
    }

    async fn redeliver(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        delivery: DeliveryId,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Delivery, QueueDeliveryError> {
        let event = |s: &State| {
            s.deliveries
                .get(&delivery)
                .filter(|q| q.delivery.webhook_id == webhook)
                .map(|q| q.delivery.requeued(now))
        };
        self.lock().queue_manual(account, webhook, event, limit)
    }

    async fn deliveries(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        status: Option<DeliveryStatus>,
        page: PageRequest,
    ) -> Result<Option<Page<Delivery>>, StoreError> {
        let s = self.lock();
        if s.owned_webhook(account, webhook).is_none() {
            return Ok(None);
        }
        let found = s
            .deliveries_by_webhook
            .of(webhook)
            .rev()
            .filter_map(|id| s.deliveries.get(&id))
            .map(|q| &q.delivery)
            .filter(|d| status.is_none_or(|st| st == d.status));
        Ok(Some(Page::of_items(found, page).cloned()))
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
        let mut s = self.lock();
        let ids = s.claimable(now, limit, per_endpoint, per_account);
        let mut claimed = Vec::with_capacity(ids.len());
        for id in ids {
            let queued = s.deliveries.get_mut(&id).expect("just found");
            queued.lease = Some((lease.clone(), now + lease_for));
            let delivery = queued.delivery.clone();
            s.pending_deliveries.lease(&delivery);
            let webhook = s.webhooks[&delivery.webhook_id].clone();
            claimed.push(ClaimedDelivery::new(delivery, webhook, lease));
        }
        Ok(claimed)
    }

    async fn finish_delivery(
        &self,
        delivery: DeliveryId,
        lease: &LeaseToken,
        outcome: AttemptOutcome,
    ) -> Result<bool, StoreError> {
        let mut s = self.lock();
        let State {
            deliveries,
            pending_deliveries,
            webhooks,
            ..
        } = &mut *s;
        let Some(queued) = deliveries
            .get_mut(&delivery)
            .filter(|q| q.lease.as_ref().is_some_and(|(held, _)| held == lease))
        else {
            return Ok(false);
        };
        pending_deliveries.remove(&queued.delivery);
        pending_deliveries.release(&queued.delivery);
        queued.lease = None;
        queued.delivery.record(&outcome);
        pending_deliveries.add(&queued.delivery);
        if let Some(webhook) = webhooks.get_mut(&queued.delivery.webhook_id) {
            webhook.record(&outcome);
        }
        Ok(true)
    }

    async fn queue_catalog_changed(
        &self,
        head: ChangePosition,
        event: NewEvent,
        sent_before: DateTime<Utc>,
    ) -> Result<u64, StoreError> {
        let mut s = self.lock();
        let due: Vec<WebhookId> = s
            .webhooks
            .values()
            .filter(|w| w.catalog_changed_due(s.catalog_sent.get(&w.id), head, sent_before))
            .filter(|w| {
                s.accounts
                    .get(&w.account_id)
                    .is_some_and(|a| a.follows_the_catalog())
            })
            .filter(|w| !s.pending_deliveries.has_catalog_changed(w.id))
            .map(|w| w.id)
            .collect();
        for webhook in &due {
            s.catalog_sent.insert(*webhook, (head, event.created_at));
        }
        let count = due.len() as u64;
        s.queue_outbox_event(Some((due, event)).filter(|(due, _)| !due.is_empty()));
        Ok(count)
    }

    async fn webhook_backlog(&self, now: DateTime<Utc>) -> Result<WebhookBacklog, StoreError> {
        let s = self.lock();
        let live = |q: &Queued| q.lease.as_ref().is_some_and(|(_, until)| *until > now);
        let enabled = |id: WebhookId| s.webhooks.get(&id).is_some_and(|w| w.enabled);
        let due = s
            .pending_deliveries
            .by_due
            .iter()
            .take_while(|(at, _)| *at <= now)
            .filter_map(|(_, id)| s.deliveries.get(id))
            .filter(|q| !live(q) && enabled(q.delivery.webhook_id))
            .count();
        let leased = s
            .pending_deliveries
            .leased
            .values()
            .flatten()
            .filter_map(|id| s.deliveries.get(id))
            .filter(|q| live(q) && q.delivery.status == DeliveryStatus::Pending)
            .count();
        let open_breakers = s
            .webhooks
            .values()
            .filter(|w| w.enabled && w.breaker.is_open(now))
            .count();
        Ok(WebhookBacklog {
            due: due as u64,
            leased: leased as u64,
            open_breakers: open_breakers as u64,
        })
    }

    async fn purge_deliveries(&self, before: DateTime<Utc>) -> Result<u64, StoreError> {
        let mut s = self.lock();
        let expired: Vec<WebhookId> = s
            .webhooks
            .values()
            .filter(|w| w.expired_by(before))
            .map(|w| w.id)
            .collect();
        for webhook in expired {
            s.end_pending(webhook, EXPIRED);
        }
        let State {
            deliveries,
            deliveries_by_webhook,
            ..
        } = &mut *s;
        let was = deliveries.len();
        deliveries.retain(|_, q| {
            let kept = q.delivery.kept_by_purge(before);
            if !kept && let Some(ids) = deliveries_by_webhook.0.get_mut(&q.delivery.webhook_id) {
                ids.remove(&q.delivery.id);
                if ids.is_empty() {
                    deliveries_by_webhook.0.remove(&q.delivery.webhook_id);
                }
            }
            kept
        });
        Ok((was - deliveries.len()) as u64)
    }
}
