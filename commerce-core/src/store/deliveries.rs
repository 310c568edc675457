//! [`DeliveryQueue`]: the webhook deliveries of a backend that keeps them in process memory,
//! with the delivery operations of [`WebhookStore`](super::WebhookStore).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use chrono::{DateTime, Utc};

use super::{ClaimRoom, QueueDeliveryError};
use crate::model::*;

/// The webhook deliveries of a backend that keeps them in process memory, with the delivery
/// operations of [`WebhookStore`](super::WebhookStore) (the caller holds its lock across
/// each call, and across the whole store operation that calls it).
///
/// The endpoints stay the caller's: each operation takes what it needs of them, as an
/// endpoint (`Option<&Webhook>`: the caller's endpoint of that id, `None` when it has none or
/// another account owns it), a lookup by id, or all of them. New deliveries take their ids
/// from the caller's `next_id`, called once per delivery, in order.
///
/// The queue keeps its indexes: the claim reads the pending deliveries in claim order from
/// the start of an index and stops at its batch; an endpoint's list, a URL change and a
/// deleted endpoint read that endpoint's deliveries only. It also keeps what each endpoint
/// was last sent of the change feed (`catalog.changed`).
#[derive(Debug, Default)]
pub struct DeliveryQueue {
    /// Every delivery by id, with its lease.
    deliveries: BTreeMap<DeliveryId, Queued>,
    /// The deliveries still pending, indexed for the claim.
    pending: PendingDeliveries,
    /// Every delivery of each endpoint (its list, a URL change, the expiry).
    by_webhook: ByWebhook,
    /// What each endpoint was last sent of the feed (`catalog.changed`): the position and
    /// when.
    catalog_sent: HashMap<WebhookId, (ChangePosition, DateTime<Utc>)>,
}

/// A delivery with what only the store needs: its lease (holder and end).
#[derive(Debug, Clone)]
struct Queued {
    delivery: Delivery,
    lease: Option<(LeaseToken, DateTime<Utc>)>,
}

impl Queued {
    /// Whether a lease holds the delivery at `now`.
    fn is_leased_at(&self, now: DateTime<Utc>) -> bool {
        self.lease.as_ref().is_some_and(|(_, until)| *until > now)
    }
}

/// The pending deliveries, indexed for the claim: in the order a claim takes them (due
/// first, then by id), per order and endpoint (only the earliest of those may go), and the
/// leased ones per endpoint (at most so many in flight per endpoint). A claim reads from the
/// start of the first index and stops at its batch, whatever the history kept (passing over
/// the due deliveries of endpoints that have as many in flight as they may).
#[derive(Debug, Default)]
struct PendingDeliveries {
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
struct ByWebhook(HashMap<WebhookId, BTreeSet<DeliveryId>>);

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

impl DeliveryQueue {
    /// The outbox: one pending delivery of `event` to each of `receivers` (the endpoints that
    /// receive it, as the caller chose them), in their order, each numbered by `next_id`.
    /// Returns how many were queued.
    pub fn queue(
        &mut self,
        receivers: impl IntoIterator<Item = WebhookId>,
        event: &NewEvent,
        mut next_id: impl FnMut() -> DeliveryId,
    ) -> u64 {
        let mut queued = 0;
        for webhook in receivers {
            self.file(Delivery::queued(next_id(), webhook, event));
            queued += 1;
        }
        queued
    }

    /// Files a new delivery in the table and its indexes.
    fn file(&mut self, delivery: Delivery) -> Delivery {
        let id = delivery.id;
        self.pending.add(&delivery);
        let of_webhook = self.by_webhook.0.entry(delivery.webhook_id).or_default();
        of_webhook.insert(id);
        let queued = Queued {
            delivery: delivery.clone(),
            lease: None,
        };
        self.deliveries.insert(id, queued);
        delivery
    }

    /// [`WebhookStore::queue_event`](super::WebhookStore::queue_event): a manual delivery of
    /// `event` to `endpoint`, unless it is `None`, or [`Webhook::admit_manual`] refuses it
    /// (disabled, or `limit` manual deliveries pending).
    pub fn queue_event(
        &mut self,
        endpoint: Option<&Webhook>,
        event: NewEvent,
        limit: usize,
        next_id: impl FnOnce() -> DeliveryId,
    ) -> Result<Delivery, QueueDeliveryError> {
        self.queue_manual(endpoint, Some(event), limit, next_id)
    }

    /// [`WebhookStore::redeliver`](super::WebhookStore::redeliver): a manual delivery to
    /// `endpoint` of the event of its delivery `delivery`, due `now`, refused as
    /// [`queue_event`](Self::queue_event) is (`NotFound` also for a delivery of another
    /// endpoint).
    pub fn redeliver(
        &mut self,
        endpoint: Option<&Webhook>,
        delivery: DeliveryId,
        now: DateTime<Utc>,
        limit: usize,
        next_id: impl FnOnce() -> DeliveryId,
    ) -> Result<Delivery, QueueDeliveryError> {
        let event = self
            .deliveries
            .get(&delivery)
            .filter(|q| endpoint.is_some_and(|w| w.id == q.delivery.webhook_id))
            .map(|q| q.delivery.requeued(now));
        self.queue_manual(endpoint, event, limit, next_id)
    }

    /// Queues `event` (`None`: not found) for `endpoint` on request, unless the endpoint is
    /// not found, is disabled or has `limit` manual deliveries pending.
    fn queue_manual(
        &mut self,
        endpoint: Option<&Webhook>,
        event: Option<NewEvent>,
        limit: usize,
        next_id: impl FnOnce() -> DeliveryId,
    ) -> Result<Delivery, QueueDeliveryError> {
        let endpoint = endpoint.ok_or(QueueDeliveryError::NotFound)?;
        let pending = self.pending.manual_of(endpoint.id);
        let event = endpoint.admit_manual(event, pending, limit)?;
        let delivery = Delivery::queued(next_id(), endpoint.id, &event).manual();
        Ok(self.file(delivery))
    }

    /// [`WebhookStore::update_webhook`](super::WebhookStore::update_webhook): applies `patch`
    /// to `endpoint` (the caller's endpoint of that id, to write; `None` when it has none or
    /// another account owns it) at `now` and, when the patch moves it to another URL
    /// ([`WebhookPatch::changes_url`]), ends its pending deliveries with [`URL_CHANGED`]. The
    /// endpoint as written, `None` when `endpoint` is.
    pub fn update_endpoint(
        &mut self,
        endpoint: Option<&mut Webhook>,
        patch: WebhookPatch,
        now: DateTime<Utc>,
    ) -> Option<Webhook> {
        let endpoint = endpoint?;
        let moved = patch.changes_url(endpoint);
        patch.apply(endpoint, now);
        if moved {
            self.end_pending(endpoint.id, URL_CHANGED);
        }
        Some(endpoint.clone())
    }

    /// Ends every pending delivery of `webhook` with `reason` (and its lease): after its URL
    /// changed ([`URL_CHANGED`]), or when it expired ([`EXPIRED`]).
    fn end_pending(&mut self, webhook: WebhookId, reason: &str) {
        for id in self.by_webhook.of(webhook) {
            if let Some(queued) = self.deliveries.get_mut(&id)
                && queued.delivery.status == DeliveryStatus::Pending
            {
                self.pending.remove(&queued.delivery);
                self.pending.release(&queued.delivery);
                queued.delivery.end(reason);
                queued.lease = None;
            }
        }
    }

    /// Drops everything of a deleted endpoint: its deliveries and what it was last sent of
    /// the change feed (see
    /// [`WebhookStore::delete_webhook`](super::WebhookStore::delete_webhook)).
    pub fn remove_endpoint(&mut self, webhook: WebhookId) {
        self.catalog_sent.remove(&webhook);
        for id in self.by_webhook.0.remove(&webhook).into_iter().flatten() {
            if let Some(q) = self.deliveries.remove(&id) {
                self.pending.remove(&q.delivery);
            }
        }
        self.pending.leased.remove(&webhook);
    }

    /// [`WebhookStore::deliveries`](super::WebhookStore::deliveries): `endpoint`'s
    /// deliveries, newest first, optionally of one status, one page; `None` when `endpoint`
    /// is.
    pub fn deliveries(
        &self,
        endpoint: Option<&Webhook>,
        status: Option<DeliveryStatus>,
        page: PageRequest,
    ) -> Option<Page<Delivery>> {
        let found = self
            .by_webhook
            .of(endpoint?.id)
            .rev()
            .filter_map(|id| self.deliveries.get(&id))
            .map(|q| &q.delivery)
            .filter(|d| status.is_none_or(|st| st == d.status));
        Some(Page::of_items(found, page).cloned())
    }

    /// The endpoint and account of each delivery under a live lease at `now` (`endpoint`:
    /// the caller's endpoint of an id).
    fn in_flight<'a, 'w: 'a>(
        &'a self,
        endpoint: impl Fn(WebhookId) -> Option<&'w Webhook> + 'a,
        now: DateTime<Utc>,
    ) -> impl Iterator<Item = (WebhookId, AccountId)> + 'a {
        self.pending
            .leased
            .iter()
            .filter_map(move |(webhook, ids)| Some((endpoint(*webhook)?, ids)))
            .flat_map(move |(webhook, ids)| {
                ids.iter()
                    .filter_map(|id| self.deliveries.get(id))
                    .filter(move |q| q.is_leased_at(now))
                    .map(|_| (webhook.id, webhook.account_id))
            })
    }

    /// The first half of [`WebhookStore::claim_deliveries`](super::WebhookStore::claim_deliveries):
    /// at most `limit` deliveries that may be claimed at `now`, chosen by
    /// [`ClaimRoom::choose`] from the pending ones in claim order (the index read from its
    /// start); `endpoint` is the caller's endpoint of an id. Nothing is written:
    /// [`lease`](Self::lease) claims them, under the same lock.
    pub fn claimable<'w>(
        &self,
        endpoint: impl Fn(WebhookId) -> Option<&'w Webhook> + Copy,
        now: DateTime<Utc>,
        limit: usize,
        per_endpoint: usize,
        per_account: usize,
    ) -> Vec<DeliveryId> {
        let room = ClaimRoom::new(per_endpoint, per_account, self.in_flight(endpoint, now));
        let in_claim_order = self.pending.by_due.iter().filter_map(|(_, id)| {
            let q = self.deliveries.get(id)?;
            Some((
                &q.delivery,
                endpoint(q.delivery.webhook_id),
                q.is_leased_at(now),
            ))
        });
        room.choose(in_claim_order, now, limit, |d| {
            self.pending.is_next_of_its_order(d)
        })
    }

    /// The second half of [`WebhookStore::claim_deliveries`](super::WebhookStore::claim_deliveries):
    /// leases the deliveries [`claimable`](Self::claimable) chose to `lease` until `until`,
    /// each with its endpoint (`endpoint`: the caller's endpoint of an id). Call it with what
    /// `claimable` answered under the same lock; an id the queue does not hold as pending, or
    /// whose endpoint `endpoint` does not find, is passed over.
    pub fn lease<'a>(
        &mut self,
        chosen: Vec<DeliveryId>,
        endpoint: impl Fn(WebhookId) -> Option<&'a Webhook>,
        lease: &LeaseToken,
        until: DateTime<Utc>,
    ) -> Vec<ClaimedDelivery> {
        let mut claimed = Vec::with_capacity(chosen.len());
        for id in chosen {
            let Some(queued) = self.deliveries.get_mut(&id) else {
                continue;
            };
            let Some(webhook) = endpoint(queued.delivery.webhook_id) else {
                continue;
            };
            if queued.delivery.status != DeliveryStatus::Pending {
                continue;
            }
            queued.lease = Some((lease.clone(), until));
            let delivery = queued.delivery.clone();
            self.pending.lease(&delivery);
            claimed.push(ClaimedDelivery::new(delivery, webhook.clone(), lease));
        }
        claimed
    }

    /// [`WebhookStore::finish_delivery`](super::WebhookStore::finish_delivery): records
    /// `outcome` on the delivery while `lease` holds it, and on its endpoint (`endpoint`: the
    /// caller's endpoint of an id, to write). `false` (nothing written) when `lease` does not
    /// hold it.
    pub fn finish<'a>(
        &mut self,
        delivery: DeliveryId,
        lease: &LeaseToken,
        outcome: AttemptOutcome,
        endpoint: impl FnOnce(WebhookId) -> Option<&'a mut Webhook>,
    ) -> bool {
        let Some(queued) = self
            .deliveries
            .get_mut(&delivery)
            .filter(|q| q.lease.as_ref().is_some_and(|(held, _)| held == lease))
        else {
            return false;
        };
        self.pending.remove(&queued.delivery);
        self.pending.release(&queued.delivery);
        queued.lease = None;
        queued.delivery.record(&outcome);
        self.pending.add(&queued.delivery);
        if let Some(webhook) = endpoint(queued.delivery.webhook_id) {
            webhook.record(&outcome);
        }
        true
    }

    /// [`WebhookStore::queue_catalog_changed`](super::WebhookStore::queue_catalog_changed)
    /// over `endpoints`, the caller's endpoints of the accounts that may read the change feed
    /// ([`Account::follows_the_catalog`]): one delivery of `event` to each that is due
    /// ([`Webhook::catalog_changed_due`]) and has no `catalog.changed` delivery pending, each
    /// numbered by `next_id`, and `head` kept as what it was last sent. Returns how many
    /// endpoints were sent one.
    pub fn queue_catalog_changed<'a>(
        &mut self,
        endpoints: impl IntoIterator<Item = &'a Webhook>,
        head: ChangePosition,
        event: &NewEvent,
        sent_before: DateTime<Utc>,
        next_id: impl FnMut() -> DeliveryId,
    ) -> u64 {
        let due: Vec<WebhookId> = endpoints
            .into_iter()
            .filter(|w| w.catalog_changed_due(self.catalog_sent.get(&w.id), head, sent_before))
            .filter(|w| !self.pending.has_catalog_changed(w.id))
            .map(|w| w.id)
            .collect();
        for webhook in &due {
            self.catalog_sent.insert(*webhook, (head, event.created_at));
        }
        self.queue(due, event, next_id)
    }

    /// [`WebhookStore::webhook_backlog`](super::WebhookStore::webhook_backlog) at `now`:
    /// `endpoint` is the caller's endpoint of an id, `endpoints` all of them.
    pub fn backlog<'a>(
        &self,
        endpoint: impl Fn(WebhookId) -> Option<&'a Webhook>,
        endpoints: impl IntoIterator<Item = &'a Webhook>,
        now: DateTime<Utc>,
    ) -> WebhookBacklog {
        let enabled = |id: WebhookId| endpoint(id).is_some_and(|w| w.enabled);
        let due = self
            .pending
            .by_due
            .iter()
            .take_while(|(at, _)| *at <= now)
            .filter_map(|(_, id)| self.deliveries.get(id))
            .filter(|q| !q.is_leased_at(now) && enabled(q.delivery.webhook_id))
            .count();
        let leased = self
            .pending
            .leased
            .values()
            .flatten()
            .filter_map(|id| self.deliveries.get(id))
            .filter(|q| q.is_leased_at(now) && q.delivery.status == DeliveryStatus::Pending)
            .count();
        let open_breakers = endpoints
            .into_iter()
            .filter(|w| w.enabled && w.breaker.is_open(now))
            .count();
        WebhookBacklog::new(due as u64, leased as u64, open_breakers as u64)
    }

    /// [`WebhookStore::purge_deliveries`](super::WebhookStore::purge_deliveries): ends the
    /// pending deliveries of the endpoints among `endpoints` (all of the caller's) disabled
    /// before `before` ([`EXPIRED`]), then removes the deliveries that are no longer pending
    /// and were created before `before`. Returns how many were removed.
    pub fn purge<'a>(
        &mut self,
        endpoints: impl IntoIterator<Item = &'a Webhook>,
        before: DateTime<Utc>,
    ) -> u64 {
        for webhook in endpoints.into_iter().filter(|w| w.expired_by(before)) {
            self.end_pending(webhook.id, EXPIRED);
        }
        let Self {
            deliveries,
            by_webhook,
            ..
        } = self;
        let was = deliveries.len();
        deliveries.retain(|_, q| {
            let kept = q.delivery.kept_by_purge(before);
            if !kept && let Some(ids) = by_webhook.0.get_mut(&q.delivery.webhook_id) {
                ids.remove(&q.delivery.id);
                if ids.is_empty() {
                    by_webhook.0.remove(&q.delivery.webhook_id);
                }
            }
            kept
        });
        (was - deliveries.len()) as u64
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A lease of ids the queue does not hold passes them over (it once panicked).
    #[test]
    fn a_lease_passes_over_what_the_queue_does_not_hold() {
        let mut queue = DeliveryQueue::default();
        let chosen = vec![DeliveryId::new(9)];
        let at = DateTime::<Utc>::UNIX_EPOCH;
        let claimed = queue.lease(chosen, |_| None, &LeaseToken::new("t"), at);
        assert!(claimed.is_empty());
    }
}
