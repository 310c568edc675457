//! Webhook endpoints and the outbox of their deliveries.
//!
//! The outbox itself is written by [`OrderStore::place_order`](super::OrderStore::place_order)
//! and [`OrderStore::change_order_status`](super::OrderStore::change_order_status): in the same
//! atomic operation as the order change, each enabled endpoint of the order's account that
//! receives the event's type ([`Webhook::receives`]) gets one pending [`Delivery`] of it
//! ([`NewEvent::order`] takes the event's [`EventSnapshot`]: the order as it stands after the
//! change). A committed change always has its deliveries; a change that did not happen has
//! none. A store keeps the snapshot and never renders: the dispatcher claims due deliveries
//! ([`WebhookStore::claim_deliveries`]), renders each body from its snapshot when it sends
//! it (`webhooks::render_event`) and records each attempt ([`WebhookStore::finish_delivery`]).

use std::collections::HashMap;

use async_trait::async_trait;
use chrono::{DateTime, TimeDelta, Utc};

use super::StoreError;
use crate::model::*;

/// How long the previous secret keeps signing after a rotation.
pub const SECRET_OVERLAP: TimeDelta = TimeDelta::hours(24);

pub use crate::limits::{MAX_PENDING_MANUAL, MAX_WEBHOOKS_PER_ACCOUNT};

/// Why [`WebhookStore::queue_event`] or [`WebhookStore::redeliver`] queued nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum QueueDeliveryError {
    /// No such endpoint (of the account), or no such delivery of it.
    #[error("webhook or delivery not found")]
    NotFound,
    /// The endpoint is disabled: nothing is queued for it.
    #[error("the webhook is disabled")]
    Disabled,
    /// The endpoint has `limit` manual deliveries pending already.
    #[error("the webhook has {limit} manual deliveries pending already")]
    Busy {
        /// The limit.
        limit: usize,
    },
    /// The storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// Why [`WebhookStore::insert_webhook`] registered nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum InsertWebhookError {
    /// The account has as many endpoints as it may.
    #[error("the account has {limit} webhooks already")]
    TooMany {
        /// The limit.
        limit: usize,
    },
    /// The storage failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

/// How many claimable deliveries a claim reads per delivery it may take before it picks
/// ([`ClaimRoom::has_enough`]): among them, the candidates [`ClaimRoom::pick`] chooses from,
/// the accounts with the fewest attempts in flight first.
pub const CANDIDATES_PER_CLAIMED: usize = 2;

/// The in-flight limits of one claim ([`WebhookStore::claim_deliveries`]) and the choice among
/// its candidates, so that every store decides them alike.
///
/// A store counts the deliveries under a live lease ([`new`](Self::new)), then offers the
/// claimable deliveries in claim order ([`offer`](Self::offer)): one is kept as a candidate
/// when its endpoint has fewer than `per_endpoint` and its account fewer than `per_account` in
/// flight, the candidates kept before counted, so that any choice among them keeps both
/// limits. The store stops reading when the room [`has_enough`](Self::has_enough) (or it runs
/// out; it may pass over the deliveries of the endpoints and accounts that are full without
/// offering them), and [`pick`](Self::pick) takes at most `limit` of the candidates, one at a
/// time from the account with the fewest in flight (ties: the earliest candidate in claim
/// order): among the oldest claimable deliveries, an account with nothing in flight goes
/// before one with many, whatever their backlogs' age.
#[derive(Debug, Clone)]
pub struct ClaimRoom {
    per_endpoint: usize,
    per_account: usize,
    /// In flight per endpoint and per account, the candidates kept counted.
    endpoints: HashMap<WebhookId, usize>,
    accounts: HashMap<AccountId, usize>,
    /// In flight per account under a live lease (without the candidates): the pick's order.
    leased: HashMap<AccountId, usize>,
    /// The candidates kept, in claim order.
    candidates: Vec<(DeliveryId, AccountId)>,
    /// How many deliveries were offered (kept or not).
    offered: usize,
}

impl ClaimRoom {
    /// At most `per_endpoint` in flight per endpoint and `per_account` per account; `leased`
    /// names the endpoint and account of each delivery under a live lease already.
    pub fn new(
        per_endpoint: usize,
        per_account: usize,
        leased: impl IntoIterator<Item = (WebhookId, AccountId)>,
    ) -> Self {
        let mut endpoints = HashMap::new();
        let mut accounts = HashMap::new();
        for (endpoint, account) in leased {
            *endpoints.entry(endpoint).or_default() += 1;
            *accounts.entry(account).or_default() += 1;
        }
        Self {
            per_endpoint,
            per_account,
            endpoints,
            leased: accounts.clone(),
            accounts,
            candidates: Vec::new(),
            offered: 0,
        }
    }

    /// Whether a delivery of `endpoint` (of `account`) would not be kept: either has as many
    /// in flight as it may, the candidates kept counted.
    pub fn is_full(&self, endpoint: WebhookId, account: AccountId) -> bool {
        self.endpoints.get(&endpoint).copied().unwrap_or(0) >= self.per_endpoint
            || self.accounts.get(&account).copied().unwrap_or(0) >= self.per_account
    }

    /// The endpoints that have as many in flight as they may (the candidates counted).
    pub fn full_endpoints(&self) -> impl Iterator<Item = WebhookId> + '_ {
        let most = self.per_endpoint;
        self.endpoints
            .iter()
            .filter(move |(_, n)| **n >= most)
            .map(|(id, _)| *id)
    }

    /// The accounts that have as many in flight as they may (the candidates counted).
    pub fn full_accounts(&self) -> impl Iterator<Item = AccountId> + '_ {
        let most = self.per_account;
        self.accounts
            .iter()
            .filter(move |(_, n)| **n >= most)
            .map(|(id, _)| *id)
    }

    /// Offers the next claimable delivery in claim order; whether it was kept as a candidate
    /// (its endpoint and account had room; it is then counted).
    pub fn offer(&mut self, delivery: DeliveryId, endpoint: WebhookId, account: AccountId) -> bool {
        self.offered += 1;
        if self.is_full(endpoint, account) {
            return false;
        }
        *self.endpoints.entry(endpoint).or_default() += 1;
        *self.accounts.entry(account).or_default() += 1;
        self.candidates.push((delivery, account));
        true
    }

    /// Whether a claim of `limit` may stop reading: it has at least `limit` candidates and
    /// was offered [`CANDIDATES_PER_CLAIMED`] deliveries per delivery it may take (so that a
    /// long backlog of one account is not all it chooses from, nor read to its end).
    pub fn has_enough(&self, limit: usize) -> bool {
        self.candidates.len() >= limit
            && self.offered >= limit.saturating_mul(CANDIDATES_PER_CLAIMED)
    }

    /// The claim of a backend that reads pending deliveries one at a time
    /// ([`WebhookStore::claim_deliveries`]), decided here so that every such backend decides
    /// alike: `in_claim_order` is the pending deliveries by due time, then id, each with its
    /// endpoint and whether it is under a live lease at `now`. Reading stops at the first
    /// delivery not due at `now` or once the room [`has_enough`](Self::has_enough); passed
    /// over are the deliveries of a missing or disabled endpoint, or one whose breaker is
    /// open, and the leased ones. One is offered when its endpoint or account is full (to be
    /// refused) or when `is_next_of_its_order` (no pending delivery of its order to its
    /// endpoint came before it); then [`pick`](Self::pick) chooses at most `limit`.
    pub fn choose<'a>(
        mut self,
        in_claim_order: impl IntoIterator<Item = (&'a Delivery, Option<&'a Webhook>, bool)>,
        now: DateTime<Utc>,
        limit: usize,
        is_next_of_its_order: impl Fn(&Delivery) -> bool,
    ) -> Vec<DeliveryId> {
        for (delivery, webhook, leased) in in_claim_order {
            if !delivery.is_due(now) || self.has_enough(limit) {
                break;
            }
            let open = |w: &&Webhook| w.enabled && !w.breaker.is_open(now);
            let Some(webhook) = webhook.filter(open) else {
                continue;
            };
            // A full endpoint's or account's is offered (and refused) without the order's check.
            if !leased
                && (self.is_full(webhook.id, webhook.account_id) || is_next_of_its_order(delivery))
            {
                self.offer(delivery.id, webhook.id, webhook.account_id);
            }
        }
        self.pick(limit)
    }

    /// At most `limit` of the candidates, in claim order, chosen one at a time from the account
    /// with the fewest in flight (those under a live lease and those chosen before), ties to
    /// the earliest candidate.
    pub fn pick(self, limit: usize) -> Vec<DeliveryId> {
        use std::cmp::Reverse;
        use std::collections::{BinaryHeap, VecDeque};
        let mut queues: HashMap<AccountId, VecDeque<usize>> = HashMap::new();
        for (position, (_, account)) in self.candidates.iter().enumerate() {
            queues.entry(*account).or_default().push_back(position);
        }
        let mut heap: BinaryHeap<Reverse<(usize, usize, AccountId)>> = queues
            .iter()
            .map(|(account, queue)| {
                let in_flight = self.leased.get(account).copied().unwrap_or(0);
                Reverse((in_flight, queue[0], *account))
            })
            .collect();
        let mut picked = Vec::with_capacity(limit.min(self.candidates.len()));
        while picked.len() < limit
            && let Some(Reverse((in_flight, position, account))) = heap.pop()
        {
            picked.push(position);
            let queue = queues.get_mut(&account).expect("an account of the heap");
            queue.pop_front();
            if let Some(next) = queue.front() {
                heap.push(Reverse((in_flight + 1, *next, account)));
            }
        }
        picked.sort_unstable();
        picked
            .into_iter()
            .map(|position| self.candidates[position].0)
            .collect()
    }
}

/// Webhook endpoints, their deliveries, and the dispatcher's claims on them.
///
/// Reads and changes of one endpoint take `account`: `Some` limits them to that account's
/// endpoints (the API: another account's endpoint is "not found"), `None` is the platform.
///
/// The deliveries of order events are not queued through this trait: they are the outbox
/// [`OrderStore::place_order`](super::OrderStore::place_order) and
/// [`OrderStore::change_order_status`](super::OrderStore::change_order_status) write in their
/// own atomic operation, which is why endpoints live in the same backend as orders.
#[async_trait]
pub trait WebhookStore: Send + Sync {
    /// Registers an endpoint (enabled), unless the account has `limit` already; the count and
    /// the insert are one atomic operation, so endpoints registered at once never exceed it.
    /// An account that does not exist is `Store(NotFound)`, decided in the same atomic
    /// operation (the SQL store locks the account's row for the count).
    async fn insert_webhook(
        &self,
        new: NewWebhook,
        limit: usize,
    ) -> Result<Webhook, InsertWebhookError>;
    /// One endpoint: one read of its record.
    async fn webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
    ) -> Result<Option<Webhook>, StoreError>;
    /// An account's endpoints, oldest first, one page. Provided: the back office's
    /// [`find_webhooks`](Self::find_webhooks) of the account's endpoints, every one counted.
    async fn webhooks(
        &self,
        account: AccountId,
        page: PageRequest,
    ) -> Result<Page<Webhook>, StoreError> {
        let query = WebhookQuery::default()
            .account(account)
            .count_limit(u64::MAX);
        let found = self.find_webhooks(&query, page).await?;
        Ok(Page::new(found.items, found.total.value))
    }
    /// The endpoints of any account that `query` matches ([`WebhookQuery::select`]: its
    /// filters, by id), one page, with how many match counted up to the query's
    /// `count_limit` ([`Listing::of_selected`]): the back office's failing endpoints. One
    /// read, not one snapshot: the SQL stores read the page and the count in separate
    /// statements.
    async fn find_webhooks(
        &self,
        query: &WebhookQuery,
        page: PageRequest,
    ) -> Result<Listing<Webhook>, StoreError>;
    /// Changes an endpoint ([`WebhookPatch::apply`]); `None` when there is none. A change of
    /// its URL ([`WebhookPatch::changes_url`]) ends its pending deliveries in the same atomic
    /// operation (failed, `last_error` [`URL_CHANGED`]), leases included: nothing queued
    /// before goes to the new URL.
    async fn update_webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
        patch: WebhookPatch,
        now: DateTime<Utc>,
    ) -> Result<Option<Webhook>, StoreError>;
    /// Deletes an endpoint and every delivery to it (pending ones are dropped); whether there
    /// was one. One atomic operation: the endpoint and the deliveries it has go together. On
    /// PostgreSQL a delivery an order's write queues while the delete runs can be left
    /// behind; with no endpoint it is never claimed, and
    /// [`purge_deliveries`](Self::purge_deliveries) removes it.
    async fn delete_webhook(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
    ) -> Result<bool, StoreError>;
    /// Replaces the signing secret; the old one keeps signing for [`SECRET_OVERLAP`] after
    /// `now`. `None` when there is no such endpoint. One atomic operation: the endpoint read
    /// (locked on the SQL stores) and written back, so the secret kept as the old one is the
    /// one it replaced, even when two rotations meet.
    async fn rotate_webhook_secret(
        &self,
        account: Option<AccountId>,
        id: WebhookId,
        secret: WebhookSecret,
        now: DateTime<Utc>,
    ) -> Result<Option<Webhook>, StoreError>;
    /// Queues `event` for one endpoint on request, whatever it subscribes to (a `ping`), due
    /// at the event's `created_at`, marked [`manual`](Delivery::manual). Refused when the
    /// endpoint is not found, is disabled, or has `limit` manual deliveries pending: the
    /// count and the insert are one atomic operation, so requests at once never queue more.
    async fn queue_event(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        event: NewEvent,
        limit: usize,
    ) -> Result<Delivery, QueueDeliveryError>;
    /// Queues the event of a delivery again: a new pending, [`manual`](Delivery::manual)
    /// delivery of the same event (same `event_id` and snapshot), due `now`. Refused as
    /// [`queue_event`](Self::queue_event) is (`NotFound` also for a delivery not of this
    /// endpoint), with the count and the insert likewise one atomic operation, the delivery
    /// read in it.
    async fn redeliver(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        delivery: DeliveryId,
        now: DateTime<Utc>,
        limit: usize,
    ) -> Result<Delivery, QueueDeliveryError>;
    /// An endpoint's deliveries, newest first (by id), optionally of one status, one page;
    /// `None` when there is no such endpoint. One read from one snapshot: the endpoint's
    /// existence and the page agree.
    async fn deliveries(
        &self,
        account: Option<AccountId>,
        webhook: WebhookId,
        status: Option<DeliveryStatus>,
        page: PageRequest,
    ) -> Result<Option<Page<Delivery>>, StoreError>;
    /// Claims up to `limit` deliveries for one dispatcher until `now + lease_for`, marked with
    /// `lease`: pending ones due by `now`, of enabled endpoints whose [`Breaker`] is not open
    /// at `now`, not under another live lease, each the earliest pending delivery of its order
    /// to its endpoint (so one order's events reach an endpoint in order), at most
    /// `per_endpoint` of one endpoint and `per_account` of one account under a live lease once
    /// claimed (those of earlier claims, by any dispatcher, count), chosen by a [`ClaimRoom`]:
    /// among the oldest claimable ones (read until it [`has_enough`](ClaimRoom::has_enough)),
    /// the accounts with the fewest in flight first. Claims are exclusive and the
    /// limits hold across claims: several dispatchers, in one process or several sharing a
    /// database, never hold the same delivery at once nor more than `per_endpoint` of one
    /// endpoint or `per_account` of one account. (A store may claim fewer than that, e.g.
    /// while deliveries of one of its orders wait for each other; never more.) One atomic
    /// operation: the leases in flight counted, the deliveries chosen and their leases written
    /// together.
    async fn claim_deliveries(
        &self,
        now: DateTime<Utc>,
        lease_for: TimeDelta,
        lease: &LeaseToken,
        limit: usize,
        per_endpoint: usize,
        per_account: usize,
    ) -> Result<Vec<ClaimedDelivery>, StoreError>;
    /// Records an attempt of a claimed delivery ([`AttemptResult::decide`] made `outcome`):
    /// the delivery's status, attempts and last answer, its lease released; the endpoint's
    /// failing streak, its breaker ([`Breaker::after`], applied to the endpoint as it is when
    /// recorded), and disabling it when the outcome says so. Only while `lease` still holds
    /// the delivery; `false` (nothing written) when it does not any more. One atomic
    /// operation: the lease checked, the delivery and its endpoint written together, so an
    /// attempt whose lease was taken over changes neither.
    async fn finish_delivery(
        &self,
        delivery: DeliveryId,
        lease: &LeaseToken,
        outcome: AttemptOutcome,
    ) -> Result<bool, StoreError>;
    /// Records several attempts, each `(delivery, lease, outcome)` as
    /// [`finish_delivery`](Self::finish_delivery) would: whether each was recorded, in order.
    /// A store that can write them in one transaction does (the SQL stores: one commit for a
    /// dispatcher's attempts that finished together, instead of one per attempt).
    async fn finish_deliveries(
        &self,
        attempts: Vec<(DeliveryId, LeaseToken, AttemptOutcome)>,
    ) -> Result<Vec<bool>, StoreError> {
        let mut recorded = Vec::with_capacity(attempts.len());
        for (delivery, lease, outcome) in attempts {
            recorded.push(self.finish_delivery(delivery, &lease, outcome).await?);
        }
        Ok(recorded)
    }
    /// Derives `catalog.changed` from the change feed, in one atomic operation: for each
    /// enabled endpoint of an active marketer account whose API access is approved (one that
    /// may read the feed) that receives the type ([`Webhook::receives`]), has no
    /// `catalog.changed` delivery pending (a receiver that is down gets one nudge waiting for
    /// it, not one per round) and is due, one pending delivery of `event` ([`NewEvent::catalog_changed`]: one event,
    /// the same id for every endpoint), and `head` and the event's instant kept as what the
    /// endpoint was last sent. `head` is the position of the feed's newest change
    /// ([`CatalogStore::newest_catalog_change`](super::CatalogStore::newest_catalog_change)).
    /// An endpoint is due when it was never sent one, or was last sent a position before
    /// `head` at or before `sent_before` (the caller passes 10 seconds ago: at most one every
    /// 10 seconds per endpoint, the latest cursor winning). Returns how many endpoints were
    /// sent one.
    ///
    /// Its work grows with the endpoints, never with the changes: the caller reads the feed
    /// once, for its newest change, and the store compares each endpoint's last position
    /// with it.
    /// Calls made at once (several instances) send each endpoint at most one: an endpoint
    /// marked by one is no longer due for the other.
    async fn queue_catalog_changed(
        &self,
        head: ChangePosition,
        event: NewEvent,
        sent_before: DateTime<Utc>,
    ) -> Result<u64, StoreError>;
    /// The history purge (`before` is 30 days ago), in one atomic operation: ends the pending
    /// deliveries of the endpoints disabled (`disabled_at`) before `before` (failed,
    /// `last_error` [`EXPIRED`]), then deletes the deliveries created before `before` that are
    /// no longer pending (history is kept 30 days), and those of deleted endpoints; how many
    /// were deleted.
    async fn purge_deliveries(&self, before: DateTime<Utc>) -> Result<u64, StoreError>;
    /// The dispatcher's backlog at `now` ([`WebhookBacklog`]): counts only, read without a
    /// write (a dispatcher samples it for its gauges). One read: every count from one
    /// statement on the SQL stores.
    async fn webhook_backlog(&self, now: DateTime<Utc>) -> Result<WebhookBacklog, StoreError>;
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(n: &[i64]) -> Vec<DeliveryId> {
        n.iter().copied().map(DeliveryId::new).collect()
    }

    /// An account with many in flight waits behind one with none, even with older candidates;
    /// a full account's offers are refused.
    #[test]
    fn the_pick_serves_the_account_with_the_fewest_in_flight_first() {
        let (busy, idle) = (AccountId::new(1), AccountId::new(2));
        let (b1, b2, i1) = (WebhookId::new(1), WebhookId::new(2), WebhookId::new(3));
        let mut room = ClaimRoom::new(4, 5, [(b1, busy), (b1, busy), (b2, busy)]);
        assert!(room.offer(DeliveryId::new(1), b2, busy));
        assert!(room.offer(DeliveryId::new(2), b1, busy));
        assert!(
            !room.offer(DeliveryId::new(3), b2, busy),
            "the account is full"
        );
        assert!(room.is_full(b2, busy));
        assert_eq!(room.full_accounts().collect::<Vec<_>>(), [busy]);
        assert!(room.offer(DeliveryId::new(4), i1, idle));
        assert!(room.offer(DeliveryId::new(5), i1, idle));
        assert_eq!(
            room.clone().pick(1),
            ids(&[4]),
            "3 in flight wait behind none"
        );
        assert_eq!(
            room.clone().pick(3),
            ids(&[1, 4, 5]),
            "idle, idle, then ties: oldest"
        );
        assert_eq!(room.pick(10), ids(&[1, 2, 4, 5]));
    }

    /// A claim reads on until it has `limit` candidates and was offered 2 per delivery it
    /// may take.
    #[test]
    fn a_claim_reads_on_until_it_has_enough_to_choose_from() {
        let (a, w) = (AccountId::new(1), WebhookId::new(1));
        let mut room = ClaimRoom::new(2, 10, []);
        for n in 1..=3 {
            room.offer(DeliveryId::new(n), w, a);
            assert!(!room.has_enough(2), "{n} offered");
        }
        room.offer(DeliveryId::new(4), w, a);
        assert!(room.has_enough(2), "2 candidates, 4 offered");
        let mut short = ClaimRoom::new(1, 10, []);
        for n in 1..=8 {
            short.offer(DeliveryId::new(n), w, a);
        }
        assert!(!short.has_enough(2), "1 candidate: the claim reads on");
    }
}
