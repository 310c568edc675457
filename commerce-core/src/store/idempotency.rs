//! Idempotency records of `POST /orders` and `POST /quotes`.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::StoreError;
use crate::model::*;

/// The answer of [`IdempotencyStore::begin_idempotent`].
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum IdempotencyBegin {
    /// No live record: one was created in flight; the caller goes on.
    Started,
    /// A finished request with the same fingerprint: replay this response.
    Replay(StoredResponse),
    /// The key was used with other data.
    Mismatch,
    /// The first request with this key is still being processed.
    InFlight,
    /// The first request registered this order or quote but died before its response was
    /// kept: the caller answers with the record as it is now and keeps that response.
    Recovered(Created),
}

/// What a request under an idempotency key created, linked to the key's record in the
/// creation's own atomic operation: [`OrderStore::place_order`](super::OrderStore::place_order)
/// links its order, [`SupplyStore::insert_quote`](super::SupplyStore::insert_quote) its quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
// Exhaustive on purpose: each kind is a create under the protocol, answered by its endpoint.
pub enum Created {
    /// An order (`POST /orders`).
    Order(OrderId),
    /// A quote (`POST /quotes`).
    Quote(QuoteId),
}

/// The order a request created; `Err` with what it created otherwise.
impl TryFrom<Created> for OrderId {
    type Error = Created;
    fn try_from(created: Created) -> Result<Self, Created> {
        match created {
            Created::Order(id) => Ok(id),
            other => Err(other),
        }
    }
}

/// The quote a request created; `Err` with what it created otherwise.
impl TryFrom<Created> for QuoteId {
    type Error = Created;
    fn try_from(created: Created) -> Result<Self, Created> {
        match created {
            Created::Quote(id) => Ok(id),
            other => Err(other),
        }
    }
}

impl From<OrderId> for Created {
    fn from(id: OrderId) -> Self {
        Created::Order(id)
    }
}

impl From<QuoteId> for Created {
    fn from(id: QuoteId) -> Self {
        Created::Quote(id)
    }
}

/// Idempotency records: one request per key and account.
///
/// **Fenced.** A record belongs to the request that holds it: the request's
/// [`IdempotencyToken`], written when the request starts the record or takes it over
/// ([`IdempotencyDecision::Start`], [`IdempotencyDecision::Recover`]). A request can stall
/// between [`begin_idempotent`](Self::begin_idempotent) and its placement past the stale
/// time (a paused process, pool starvation) while a retry takes the record over; once it
/// resumes, its claim no longer holds the record, and none of its writes under the key take
/// effect: [`OrderStore::place_order`](super::OrderStore::place_order) refuses its order
/// ([`PlaceOrderError::IdempotencyLost`](super::PlaceOrderError::IdempotencyLost), in the same
/// atomic operation as the placement: nothing written),
/// [`SupplyStore::insert_quote`](super::SupplyStore::insert_quote) its quote
/// ([`InsertQuoteError::IdempotencyLost`](super::InsertQuoteError::IdempotencyLost), likewise),
/// [`finish_idempotent`] answers `NotFound` and [`abandon_idempotent`] does nothing. One order
/// or quote per key, whatever the timing.
///
/// [`finish_idempotent`]: Self::finish_idempotent
/// [`abandon_idempotent`]: Self::abandon_idempotent
#[async_trait]
pub trait IdempotencyStore: Send + Sync {
    /// Starts a request under an idempotency key (see [`IdempotencyBegin`]), carrying out
    /// [`IdempotencyRecord::decide`]. A record older than `expires_before` counts as absent;
    /// an in-flight record older than `stale_before` is taken over (its request is taken to
    /// have died). Starting or taking over writes `claim.token` into the record: from then on
    /// only this claim holds it. The record's order or quote is not set here: it is linked by
    /// [`OrderStore::place_order`](super::OrderStore::place_order) or
    /// [`SupplyStore::insert_quote`](super::SupplyStore::insert_quote), in the creation's own
    /// atomic operation and only while the claim holds the record, so idempotency records
    /// live in the same backend as orders and quotes. One atomic operation: the record read,
    /// decided on and written together, so of requests at once under one key one starts (or
    /// takes over) and the others find it in flight.
    async fn begin_idempotent(
        &self,
        claim: &IdempotencyClaim,
        fingerprint: &str,
        now: DateTime<Utc>,
        expires_before: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> Result<IdempotencyBegin, StoreError>;
    /// Keeps the response of a successful request for replay; `NotFound` (writing nothing)
    /// when the record is gone or `claim` no longer holds it. One atomic write: the claim's
    /// hold checked by the write itself, so a request whose record was taken over never keeps
    /// its response over the new holder's.
    async fn finish_idempotent(
        &self,
        claim: &IdempotencyClaim,
        response: StoredResponse,
    ) -> Result<(), StoreError>;
    /// Forgets the record of a request that ended in an error, if `claim` still holds it and
    /// [`IdempotencyRecord::may_be_abandoned`] (one linked to an order or a quote stays);
    /// otherwise does nothing. One atomic write: both conditions checked by the delete itself,
    /// so a record taken over, linked or answered meanwhile stays.
    async fn abandon_idempotent(&self, claim: &IdempotencyClaim) -> Result<(), StoreError>;
    /// Deletes records created before `before`; returns how many. One atomic write: the
    /// count is of the records this delete removed.
    async fn purge_idempotency(&self, before: DateTime<Utc>) -> Result<u64, StoreError>;
}

/// What a store keeps under an idempotency key (its [`IdempotencyScope`]).
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct IdempotencyRecord {
    /// Fingerprint of the first request's method, path and body.
    pub fingerprint: String,
    /// When the record was created (or last taken over).
    pub created_at: DateTime<Utc>,
    /// The token of the request that holds the record (see [`IdempotencyStore`]).
    pub token: IdempotencyToken,
    /// The order the request registered, written by [`place_order`] in the same operation.
    ///
    /// [`place_order`]: super::OrderStore::place_order
    pub order_id: Option<OrderId>,
    /// The quote the request registered, written by [`insert_quote`] in the same operation.
    ///
    /// [`insert_quote`]: super::SupplyStore::insert_quote
    pub quote_id: Option<QuoteId>,
    /// The response kept for replay, once the request finished.
    pub response: Option<StoredResponse>,
}

/// What [`IdempotencyStore::begin_idempotent`] does with the record it found, decided by
/// [`IdempotencyRecord::decide`]: the one rule every backend applies.
#[derive(Debug, Clone, PartialEq)]
// Exhaustive on purpose: a backend carries out every decision, so a new one is a change of the store contract.
pub enum IdempotencyDecision {
    /// Write a fresh in-flight record held by the caller's token (insert it, or overwrite the
    /// expired, or stale and unlinked, one) and answer [`IdempotencyBegin::Started`].
    Start,
    /// Set the record's `created_at` to now and its token to the caller's, and answer
    /// [`IdempotencyBegin::Recovered`]: its request is taken to have died after registering
    /// this order or quote.
    Recover(Created),
    /// Answer this, writing nothing ([`Replay`](IdempotencyBegin::Replay),
    /// [`Mismatch`](IdempotencyBegin::Mismatch) or [`InFlight`](IdempotencyBegin::InFlight)).
    Answer(IdempotencyBegin),
}

impl IdempotencyDecision {
    /// The answer of [`IdempotencyStore::begin_idempotent`] once the decision is carried out.
    pub fn into_begin(self) -> IdempotencyBegin {
        match self {
            IdempotencyDecision::Start => IdempotencyBegin::Started,
            IdempotencyDecision::Recover(created) => IdempotencyBegin::Recovered(created),
            IdempotencyDecision::Answer(answer) => answer,
        }
    }
}

impl IdempotencyRecord {
    /// A fresh in-flight record of a request with `fingerprint` and `token`, begun at `now`.
    pub fn started(fingerprint: &str, token: IdempotencyToken, now: DateTime<Utc>) -> Self {
        Self {
            fingerprint: fingerprint.to_owned(),
            created_at: now,
            token,
            order_id: None,
            quote_id: None,
            response: None,
        }
    }

    /// What the request registered under the key, if anything: its order or its quote.
    pub fn created(&self) -> Option<Created> {
        self.order_id
            .map(Created::Order)
            .or(self.quote_id.map(Created::Quote))
    }

    /// Whether [`IdempotencyStore::abandon_idempotent`] forgets this record: only one that
    /// neither registered an order or a quote nor kept a response.
    pub fn may_be_abandoned(&self) -> bool {
        self.created().is_none() && self.response.is_none()
    }

    /// Whether the request with `token` holds this record: only then do its placement, its
    /// finish and its abandon take effect.
    pub fn is_held_by(&self, token: IdempotencyToken) -> bool {
        self.token == token
    }
}

/// The idempotency records of a backend that keeps them in process memory, with the
/// operations of [`IdempotencyStore`] (the caller holds its lock across each).
#[derive(Debug, Default)]
pub struct IdempotencyRecords(std::collections::HashMap<IdempotencyScope, IdempotencyRecord>);

impl IdempotencyRecords {
    /// [`IdempotencyStore::begin_idempotent`]: carries out [`IdempotencyRecord::decide`].
    pub fn begin(
        &mut self,
        claim: &IdempotencyClaim,
        fingerprint: &str,
        now: DateTime<Utc>,
        expires_before: DateTime<Utc>,
        stale_before: DateTime<Utc>,
    ) -> IdempotencyBegin {
        let found = self.0.get(&claim.scope);
        let decision = IdempotencyRecord::decide(found, fingerprint, expires_before, stale_before);
        match &decision {
            IdempotencyDecision::Start => {
                let record = IdempotencyRecord::started(fingerprint, claim.token, now);
                self.0.insert(claim.scope.clone(), record);
            }
            IdempotencyDecision::Recover(_) => {
                if let Some(record) = self.0.get_mut(&claim.scope) {
                    record.created_at = now;
                    record.token = claim.token;
                }
            }
            IdempotencyDecision::Answer(_) => {}
        }
        decision.into_begin()
    }

    /// The record `claim` holds, if any.
    fn held_mut(&mut self, claim: &IdempotencyClaim) -> Option<&mut IdempotencyRecord> {
        self.0
            .get_mut(&claim.scope)
            .filter(|record| record.is_held_by(claim.token))
    }

    /// Whether `claim` holds its record: [`OrderStore::place_order`] and
    /// [`SupplyStore::insert_quote`] check it before any write and refuse the order or quote
    /// otherwise ([`PlaceOrderError::IdempotencyLost`](super::PlaceOrderError::IdempotencyLost),
    /// [`InsertQuoteError::IdempotencyLost`](super::InsertQuoteError::IdempotencyLost)).
    ///
    /// [`OrderStore::place_order`]: super::OrderStore::place_order
    /// [`SupplyStore::insert_quote`]: super::SupplyStore::insert_quote
    pub fn holds(&self, claim: &IdempotencyClaim) -> bool {
        self.0
            .get(&claim.scope)
            .is_some_and(|record| record.is_held_by(claim.token))
    }

    /// Links the record `claim` holds to the order or quote its request created (inside
    /// [`OrderStore::place_order`](super::OrderStore::place_order) or
    /// [`SupplyStore::insert_quote`](super::SupplyStore::insert_quote), after
    /// [`holds`](Self::holds)).
    pub fn link(&mut self, claim: &IdempotencyClaim, created: impl Into<Created>) {
        if let Some(record) = self.held_mut(claim) {
            match created.into() {
                Created::Order(order) => record.order_id = Some(order),
                Created::Quote(quote) => record.quote_id = Some(quote),
            }
        }
    }

    /// [`IdempotencyStore::finish_idempotent`].
    pub fn finish(
        &mut self,
        claim: &IdempotencyClaim,
        response: StoredResponse,
    ) -> Result<(), StoreError> {
        let record = self.held_mut(claim).ok_or(StoreError::NotFound)?;
        record.response = Some(response);
        Ok(())
    }

    /// [`IdempotencyStore::abandon_idempotent`].
    pub fn abandon(&mut self, claim: &IdempotencyClaim) {
        if self
            .held_mut(claim)
            .is_some_and(|record| record.may_be_abandoned())
        {
            self.0.remove(&claim.scope);
        }
    }

    /// [`IdempotencyStore::purge_idempotency`].
    pub fn purge(&mut self, before: DateTime<Utc>) -> u64 {
        let count = self.0.len();
        self.0.retain(|_, r| r.created_at >= before);
        (count - self.0.len()) as u64
    }
}

#[cfg(test)]
mod tests {
    use chrono::{Duration, TimeZone};

    use super::*;

    fn at(minute: i64) -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap() + Duration::minutes(minute)
    }

    fn record(created: i64, order: Option<OrderId>, answered: bool) -> IdempotencyRecord {
        IdempotencyRecord {
            fingerprint: "f".into(),
            created_at: at(created),
            token: IdempotencyToken(1),
            order_id: order,
            quote_id: None,
            response: answered.then(|| StoredResponse {
                status: 201,
                body: b"{}".to_vec(),
            }),
        }
    }

    /// `decide` at minute 100 with records expiring before minute 10 and stale before 98.
    fn decide(record: Option<&IdempotencyRecord>, fingerprint: &str) -> IdempotencyDecision {
        IdempotencyRecord::decide(record, fingerprint, at(10), at(98))
    }

    #[test]
    fn every_state_of_a_record_has_one_answer() {
        use IdempotencyBegin::*;
        use IdempotencyDecision::*;
        assert_eq!(decide(None, "f"), Start);
        assert_eq!(
            decide(Some(&record(5, Some(OrderId::new(7)), true)), "other"),
            Start
        );
        assert_eq!(
            decide(Some(&record(99, None, false)), "other"),
            Answer(Mismatch)
        );
        assert!(matches!(
            decide(Some(&record(50, Some(OrderId::new(7)), true)), "f"),
            Answer(Replay(r)) if r.status == 201
        ));
        assert_eq!(
            decide(Some(&record(99, Some(OrderId::new(7)), false)), "f"),
            Answer(InFlight)
        );
        assert_eq!(
            decide(Some(&record(98, None, false)), "f"),
            Answer(InFlight)
        );
        assert_eq!(
            decide(Some(&record(97, Some(OrderId::new(7)), false)), "f"),
            Recover(Created::Order(OrderId::new(7)))
        );
        let quoted = IdempotencyRecord {
            quote_id: Some(QuoteId::new(4)),
            ..record(97, None, false)
        };
        assert_eq!(
            decide(Some(&quoted), "f"),
            Recover(Created::Quote(QuoteId::new(4)))
        );
        assert_eq!(decide(Some(&record(97, None, false)), "f"), Start);
    }

    #[test]
    fn only_the_holder_links_finishes_or_abandons() {
        let scope = IdempotencyScope {
            account_id: AccountId::new(1),
            key: "k".into(),
        };
        let first = IdempotencyClaim {
            scope: scope.clone(),
            token: IdempotencyToken(1),
        };
        let retry = IdempotencyClaim {
            scope,
            token: IdempotencyToken(2),
        };
        let mut records = IdempotencyRecords::default();
        let begin = |records: &mut IdempotencyRecords, claim, minute| {
            records.begin(claim, "f", at(minute), at(minute - 60), at(minute - 1))
        };
        assert_eq!(begin(&mut records, &first, 100), IdempotencyBegin::Started);
        assert!(records.holds(&first));
        // Stale: the retry takes the record over, and only it holds the record now.
        assert_eq!(begin(&mut records, &retry, 102), IdempotencyBegin::Started);
        assert!(!records.holds(&first) && records.holds(&retry));
        records.link(&first, OrderId::new(7));
        records.abandon(&first);
        let response = StoredResponse {
            status: 201,
            body: vec![],
        };
        assert!(matches!(
            records.finish(&first, response.clone()),
            Err(StoreError::NotFound)
        ));
        assert_eq!(begin(&mut records, &first, 102), IdempotencyBegin::InFlight);
        // A recovery is a takeover too.
        records.link(&retry, OrderId::new(8));
        assert_eq!(
            begin(&mut records, &first, 104),
            IdempotencyBegin::Recovered(Created::Order(OrderId::new(8)))
        );
        assert!(records.holds(&first) && !records.holds(&retry));
        assert!(records.finish(&retry, response.clone()).is_err());
        assert!(records.finish(&first, response).is_ok());
    }

    #[test]
    fn only_a_record_without_order_or_response_is_abandoned() {
        assert!(record(1, None, false).may_be_abandoned());
        assert!(!record(1, Some(OrderId::new(3)), false).may_be_abandoned());
        assert!(!record(1, None, true).may_be_abandoned());
        let quoted = IdempotencyRecord {
            quote_id: Some(QuoteId::new(3)),
            ..record(1, None, false)
        };
        assert!(!quoted.may_be_abandoned());
    }
}
