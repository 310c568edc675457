//! The dispatcher: claims due deliveries from the store, signs and sends them, records each
//! attempt. Run one per app instance (feature `webhooks`); several, in one process or several
//! sharing a database, never hold the same delivery at once (leases).
//!
//! Fairness: each attempt runs on its own task and frees its slot when it ends; the
//! dispatcher claims again as soon as there is room, never waiting for a slow attempt. At
//! most [`DispatcherConfig::per_endpoint_in_flight`] attempts are in flight per endpoint and
//! [`DispatcherConfig::per_account_in_flight`] per account (counted by the store's leases, so
//! across every dispatcher sharing it), and [`DispatcherConfig::max_in_flight`] per
//! dispatcher; an endpoint that keeps timing out or refusing connections is left alone for a
//! while by its breaker ([`Breaker`](crate::model::Breaker)). A dead receiver costs its own
//! endpoint only.
//!
//! Fairness across accounts: a claim serves the accounts with the fewest attempts in flight
//! first ([`ClaimRoom`](crate::store::ClaimRoom)), and the last
//! [`DispatcherConfig::reserved_in_flight`] slots of a dispatcher are claimed only for
//! accounts with fewer than [`DispatcherConfig::reserved_per_account`] attempts in flight.
//! The cap and the order alone are not enough: accounts whose receivers answer slowly (never
//! a timeout, so no breaker opens) can hold every slot at once (20 accounts × 16 > 256), and
//! an account with nothing in flight would wait for one of their attempts to end. With the
//! reserve, slow accounts hold at most `max_in_flight - reserved_in_flight` slots between them
//! (plus `reserved_per_account` each when they have fewer than that in flight), so an account
//! with little in flight finds a slot at the next claim (within `idle_wait`) as long as fewer
//! than `reserved_in_flight / reserved_per_account` accounts below the reserve's bound compete
//! for it.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::TimeDelta;
use futures_util::FutureExt;
use futures_util::stream::{FuturesUnordered, StreamExt};
use rand::RngCore;
use tokio::task::JoinSet;
use tracing::{Instrument, field};

use super::egress::EgressProxy;
use super::signing::{SIGNATURE_HEADER, TIMESTAMP_HEADER, WEBHOOK_ID_HEADER, sign};
use super::urls::{UrlPolicy, check_url};
use crate::clock::Clock;
use crate::config::human;
use crate::model::{AttemptOutcome, AttemptResult, ClaimedDelivery, DeliveryId, LeaseToken};
use crate::store::{Store, StoreError};
use crate::webhooks::events::render_event;

/// Settings of a [`Dispatcher`]; `DispatcherConfig::default()` holds the product's.
///
/// [`Deserialize`](serde::Deserialize) like [`Config`](crate::config::Config): a field left out keeps
/// its default, durations are written with their unit (`"15s"`), the proxy is its URL, a count
/// of 0 where the builders take at least 1 and an unknown field are errors.
///
/// ```
/// # use commerce_core as commerce;
/// use commerce::webhooks::DispatcherConfig;
/// use std::time::Duration;
///
/// let config: DispatcherConfig =
///     serde_json::from_str(r#"{"timeout": "10s", "lease": "1m", "max_in_flight": 64}"#).unwrap();
/// assert_eq!(config.timeout, Duration::from_secs(10));
/// assert_eq!(config.batch, DispatcherConfig::default().batch);
/// ```
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct DispatcherConfig {
    /// How long an attempt waits for the answer (default 15 s); past it, the attempt failed.
    #[serde(deserialize_with = "human::duration")]
    pub timeout: Duration,
    /// How long a claim holds a delivery (default 60 s: the timeout and a margin). A
    /// dispatcher that dies mid-attempt releases it when the lease runs out; the delivery is
    /// then sent again, with the same `webhook-id`.
    #[serde(deserialize_with = "human::time_delta")]
    pub lease: TimeDelta,
    /// Deliveries claimed at once, per claim (default 32).
    #[serde(deserialize_with = "at_least_one")]
    pub batch: usize,
    /// The wait before claiming again when the last claim found less than it could take
    /// and no attempt ended since (default 1 s).
    #[serde(deserialize_with = "human::duration")]
    pub idle_wait: Duration,
    /// The egress proxy every attempt goes through (default none: attempts connect directly,
    /// and the proxy environment variables `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` are
    /// ignored). See [`EgressProxy`]: the proxy must then enforce the address rules.
    pub proxy: Option<EgressProxy>,
    /// Attempts in flight to one endpoint at most, across every dispatcher sharing the
    /// store (default 4).
    #[serde(deserialize_with = "at_least_one")]
    pub per_endpoint_in_flight: usize,
    /// Attempts in flight in this dispatcher at most (default 256).
    #[serde(deserialize_with = "at_least_one")]
    pub max_in_flight: usize,
    /// Attempts in flight for one account at most (all its endpoints together), across every
    /// dispatcher sharing the store (default 16).
    #[serde(deserialize_with = "at_least_one")]
    pub per_account_in_flight: usize,
    /// This dispatcher's last slots kept for the accounts with little in flight (default 64;
    /// at most half of `max_in_flight` is kept): while fewer slots than that are free, a claim
    /// takes only deliveries of accounts with fewer than `reserved_per_account` in flight.
    pub reserved_in_flight: usize,
    /// The bound of the reserve (default 4): an account with fewer attempts in flight than
    /// this, across every dispatcher, may take a reserved slot.
    pub reserved_per_account: usize,
}

/// A count the builders keep at 1 or more: 0 is refused.
fn at_least_one<'de, D: serde::Deserializer<'de>>(deserializer: D) -> Result<usize, D::Error> {
    match <usize as serde::Deserialize>::deserialize(deserializer)? {
        0 => Err(serde::de::Error::custom("must be at least 1")),
        count => Ok(count),
    }
}

impl Default for DispatcherConfig {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(15),
            lease: TimeDelta::seconds(60),
            batch: 32,
            idle_wait: Duration::from_secs(1),
            proxy: None,
            per_endpoint_in_flight: 4,
            max_in_flight: 256,
            per_account_in_flight: 16,
            reserved_in_flight: 64,
            reserved_per_account: 4,
        }
    }
}

impl DispatcherConfig {
    /// Checks the settings together: a `timeout` and an `idle_wait` above zero, and a `lease`
    /// longer than the `timeout` (a claim must outlast the attempt it covers, or another
    /// instance claims the delivery again while it is still being sent). The first setting
    /// that is wrong is named. [`EngineBuilder::build`](crate::EngineBuilder::build) calls it
    /// for the settings it was given.
    ///
    /// ```
    /// # use commerce_core as commerce;
    /// use std::time::Duration;
    /// use commerce::webhooks::DispatcherConfig;
    ///
    /// assert!(DispatcherConfig::default().check().is_ok());
    /// let slow = DispatcherConfig::default().with_timeout(Duration::from_secs(90));
    /// assert_eq!(slow.check().unwrap_err().setting, "lease"); // 60 s by default
    /// ```
    pub fn check(&self) -> Result<(), crate::config::ConfigError> {
        let fail = |setting, problem| Err(crate::config::ConfigError { setting, problem });
        if self.timeout.is_zero() {
            return fail("timeout", "must be above zero");
        }
        if self.idle_wait.is_zero() {
            return fail("idle_wait", "must be above zero");
        }
        let lease = self.lease.to_std().unwrap_or_default();
        if lease <= self.timeout {
            return fail("lease", "must be longer than the timeout");
        }
        Ok(())
    }

    /// With this attempt timeout.
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// With this lease.
    pub fn with_lease(mut self, lease: TimeDelta) -> Self {
        self.lease = lease;
        self
    }

    /// With this batch size.
    pub fn with_batch(mut self, batch: usize) -> Self {
        self.batch = batch.max(1);
        self
    }

    /// With this idle wait.
    pub fn with_idle_wait(mut self, wait: Duration) -> Self {
        self.idle_wait = wait;
        self
    }

    /// Every attempt through this egress proxy.
    pub fn with_proxy(mut self, proxy: EgressProxy) -> Self {
        self.proxy = Some(proxy);
        self
    }

    /// With at most this many attempts in flight per endpoint (at least 1).
    pub fn with_per_endpoint_in_flight(mut self, most: usize) -> Self {
        self.per_endpoint_in_flight = most.max(1);
        self
    }

    /// With at most this many attempts in flight in the dispatcher (at least 1).
    pub fn with_max_in_flight(mut self, most: usize) -> Self {
        self.max_in_flight = most.max(1);
        self
    }

    /// With at most this many attempts in flight per account (at least 1).
    pub fn with_per_account_in_flight(mut self, most: usize) -> Self {
        self.per_account_in_flight = most.max(1);
        self
    }

    /// With this reserve: the last `slots` of the dispatcher (at most half of
    /// `max_in_flight`; 0 keeps none) only for accounts with fewer than `below` in flight.
    pub fn with_reserve(mut self, slots: usize, below: usize) -> Self {
        self.reserved_in_flight = slots;
        self.reserved_per_account = below;
        self
    }

    /// How many deliveries a claim may take when `room` slots are free, and the per-account
    /// limit it claims under: above the reserve, up to the reserve's edge under
    /// `per_account_in_flight`; within it, under `reserved_per_account` (never above
    /// `per_account_in_flight`). Each at most `batch`.
    fn claim_limits(&self, room: usize) -> (usize, usize) {
        let reserve = self.reserved_in_flight.min(self.max_in_flight / 2);
        if room > reserve {
            (self.batch.min(room - reserve), self.per_account_in_flight)
        } else {
            let below = self.reserved_per_account.min(self.per_account_in_flight);
            (self.batch.min(room), below)
        }
    }
}

/// One finished attempt: what to record, under which lease.
type Finished = (DeliveryId, LeaseToken, AttemptOutcome);

/// Sends the queued webhook deliveries. Get one from
/// [`Engine::dispatcher`](crate::Engine::dispatcher); spawn [`run`](Self::run).
///
/// Its clock is the engine's, so a test with a [`ManualClock`](crate::clock::ManualClock)
/// runs the whole retry schedule by moving the clock and calling
/// [`deliver_due`](Self::deliver_due).
#[derive(Clone)]
pub struct Dispatcher {
    store: Arc<dyn Store>,
    clock: Arc<dyn Clock>,
    policy: UrlPolicy,
    config: DispatcherConfig,
    client: reqwest::Client,
    /// This dispatcher's lease prefix (random), and a counter for each claim.
    instance: String,
    claims: Arc<AtomicU64>,
}

impl std::fmt::Debug for Dispatcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dispatcher")
            .field("instance", &self.instance)
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

impl Dispatcher {
    /// A dispatcher over `store` with the engine's clock and URL policy.
    pub(crate) fn new(
        store: Arc<dyn Store>,
        clock: Arc<dyn Clock>,
        policy: UrlPolicy,
        config: DispatcherConfig,
    ) -> Self {
        let client = super::egress::client(policy, &config);
        let mut id = [0u8; 8];
        rand::rng().fill_bytes(&mut id);
        Self {
            store,
            clock,
            policy,
            config,
            client,
            instance: id.iter().map(|b| format!("{b:02x}")).collect(),
            claims: Arc::new(AtomicU64::new(0)),
        }
    }

    /// The same dispatcher with other settings.
    pub fn with_config(self, config: DispatcherConfig) -> Self {
        Self::new(self.store, self.clock, self.policy, config)
    }

    /// The settings.
    pub fn config(&self) -> &DispatcherConfig {
        &self.config
    }

    /// Claims up to `limit` due deliveries under a new lease (at most
    /// `per_endpoint_in_flight` per endpoint and `per_account` per account with those in
    /// flight already).
    async fn claim(
        &self,
        limit: usize,
        per_account: usize,
    ) -> Result<Vec<ClaimedDelivery>, StoreError> {
        let lease = LeaseToken::new(format!(
            "{}-{}",
            self.instance,
            self.claims.fetch_add(1, Ordering::Relaxed)
        ));
        self.store
            .claim_deliveries(
                self.clock.now(),
                self.config.lease,
                &lease,
                limit,
                self.config.per_endpoint_in_flight,
                per_account,
            )
            .await
    }

    /// Records finished attempts (one store call); a failure is logged (the leases run out
    /// and the deliveries are sent again).
    async fn record(&self, finished: Vec<Finished>) {
        if let Err(error) = self.store.finish_deliveries(finished).await {
            tracing::warn!(%error, "webhook attempts not recorded");
        }
    }

    /// One pass, for tests and tools that drive the dispatcher themselves (with a
    /// [`ManualClock`](crate::clock::ManualClock)): claims the deliveries due now (at most
    /// `batch`, `per_endpoint_in_flight` per endpoint and `per_account_in_flight` per account,
    /// no reserve), attempts them all at once, records
    /// each attempt; how many were attempted. Attempts that finish together are recorded
    /// together (one store call, one transaction on the SQL stores). Call it until it
    /// returns 0 to send everything due; [`run`](Self::run) is the dispatcher of a service.
    pub async fn deliver_due(&self) -> Result<usize, StoreError> {
        let limit = self.config.batch.min(self.config.max_in_flight);
        let claimed = self.claim(limit, self.config.per_account_in_flight).await?;
        let count = claimed.len();
        let mut attempts: FuturesUnordered<_> =
            claimed.into_iter().map(|c| self.attempt(c)).collect();
        while let Some(first) = attempts.next().await {
            let mut finished = vec![first];
            while let Some(Some(more)) = attempts.next().now_or_never() {
                finished.push(more);
            }
            self.store.finish_deliveries(finished).await?;
        }
        Ok(count)
    }

    /// Runs until `shutdown` completes. Each attempt runs on its own task; the dispatcher
    /// claims whenever it has room (at most `max_in_flight` attempts; the last
    /// `reserved_in_flight` only for accounts with fewer than `reserved_per_account` in
    /// flight), records attempts as
    /// they end (those that ended together in one store call) and claims again at once, so
    /// that a slow receiver holds up its own attempts only. When a claim finds less than it
    /// could take, it claims again after `idle_wait` or when an attempt ends. When `shutdown`
    /// completes it claims no more, waits for the attempts in flight and records them, so
    /// stopping leaves nothing claimed (it takes at most the attempt timeout).
    ///
    /// With the feature `metrics` it also keeps the dispatcher's gauges
    /// ([`observe`](crate::observe)): its attempts in flight, and the store's backlog sampled
    /// every [`BACKLOG_SAMPLE`](crate::observe::BACKLOG_SAMPLE).
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        let mut in_flight: JoinSet<Finished> = JoinSet::new();
        let mut stopping = false;
        let mut sampled: Option<std::time::Instant> = None;
        loop {
            if cfg!(feature = "metrics") && !stopping {
                self.sample_backlog(&mut sampled).await;
            }
            let room = self.config.max_in_flight.saturating_sub(in_flight.len());
            let mut more = false;
            if !stopping && room > 0 {
                let (limit, per_account) = self.config.claim_limits(room);
                match self.claim(limit, per_account).await {
                    Ok(claimed) => {
                        more = claimed.len() == limit && room > limit;
                        for c in claimed {
                            let this = self.clone();
                            in_flight.spawn(async move { this.attempt(c).await });
                        }
                    }
                    Err(error) => tracing::warn!(%error, "webhook claim failed"),
                }
            }
            crate::observe::webhooks_in_flight(in_flight.len());
            if stopping && in_flight.is_empty() {
                return;
            }
            tokio::select! {
                biased;
                () = &mut shutdown, if !stopping => stopping = true,
                Some(first) = in_flight.join_next(), if !in_flight.is_empty() => {
                    let mut finished = Vec::new();
                    let mut ended = Some(first);
                    while let Some(result) = ended {
                        match result {
                            Ok(attempt) => finished.push(attempt),
                            Err(error) => tracing::warn!(%error, "webhook attempt task failed"),
                        }
                        ended = in_flight.try_join_next();
                    }
                    self.record(finished).await;
                }
                () = tokio::task::yield_now(), if more => {}
                () = tokio::time::sleep(self.config.idle_wait), if !stopping => {}
            }
        }
    }

    /// Reads the store's backlog for the gauges when the last sample is older than
    /// [`BACKLOG_SAMPLE`](crate::observe::BACKLOG_SAMPLE).
    async fn sample_backlog(&self, sampled: &mut Option<std::time::Instant>) {
        if sampled.is_some_and(|at| at.elapsed() < crate::observe::BACKLOG_SAMPLE) {
            return;
        }
        *sampled = Some(std::time::Instant::now());
        match self.store.webhook_backlog(self.clock.now()).await {
            Ok(backlog) => crate::observe::webhook_backlog(backlog),
            Err(error) => tracing::warn!(%error, "webhook backlog not read"),
        }
    }

    /// One attempt of a claimed delivery, in its `commerce.webhook` span (never the secret,
    /// the URL or the payload): what to record.
    async fn attempt(&self, claimed: ClaimedDelivery) -> Finished {
        let d = &claimed.delivery;
        let span = tracing::info_span!(
            crate::observe::WEBHOOK_SPAN,
            delivery_id = d.id.get(),
            webhook_id = d.webhook_id.get(),
            event_type = d.event_type.as_str(),
            attempt = d.attempts + 1,
            status = field::Empty,
        );
        async {
            let result = self.send(&claimed).await;
            let span = tracing::Span::current();
            match &result {
                AttemptResult::Answered(code) => span.record("status", code),
                AttemptResult::NoAnswer(reason) | AttemptResult::Unreachable(reason) => {
                    span.record("status", reason.as_str())
                }
            };
            let answer = crate::observe::answer_of(&result);
            let outcome = result.decide(
                d.attempts + 1,
                self.clock.now(),
                claimed.webhook.failing_since,
            );
            crate::observe::webhook_attempted(answer, &outcome);
            tracing::debug!(delivered = ?outcome.status, "webhook attempt");
            (d.id, claimed.lease.clone(), outcome)
        }
        .instrument(span)
        .await
    }

    /// Sends one attempt: the URL checked again, the body signed with the secrets signing
    /// now, redirects not followed.
    async fn send(&self, claimed: &ClaimedDelivery) -> AttemptResult {
        let url = match check_url(&claimed.webhook.url, self.policy) {
            Ok(url) => url,
            Err(problem) => return AttemptResult::NoAnswer(problem.to_string()),
        };
        let now = self.clock.now();
        let d = &claimed.delivery;
        let timestamp = now.timestamp();
        let body = render_event(&d.event_id, d.event_type, &d.snapshot);
        let signature = sign(
            &claimed.webhook.signing_secrets(now),
            &d.event_id,
            timestamp,
            body.as_bytes(),
        );
        let request = self
            .client
            .post(url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(WEBHOOK_ID_HEADER, &d.event_id)
            .header(TIMESTAMP_HEADER, timestamp)
            .header(SIGNATURE_HEADER, signature)
            .body(body);
        match request.send().await {
            Ok(response) => AttemptResult::Answered(response.status().as_u16()),
            Err(error) if error.is_timeout() => AttemptResult::Unreachable("timeout".into()),
            Err(error) if error.is_connect() => {
                AttemptResult::Unreachable("connection failed".into())
            }
            Err(_) => AttemptResult::NoAnswer("request failed".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::DispatcherConfig;

    /// Above the reserve a claim takes up to its edge under the per-account limit; within it,
    /// under the reserve's bound; the reserve is at most half of the slots.
    #[test]
    fn the_last_slots_are_claimed_only_for_accounts_with_little_in_flight() {
        let config = DispatcherConfig::default();
        assert_eq!(config.claim_limits(256), (32, 16));
        assert_eq!(config.claim_limits(65), (1, 16));
        assert_eq!(config.claim_limits(64), (32, 4));
        assert_eq!(config.claim_limits(10), (10, 4));
        let small = DispatcherConfig::default().with_max_in_flight(8);
        assert_eq!(small.claim_limits(8), (4, 16), "a reserve of 4 of 8");
        assert_eq!(small.claim_limits(4), (4, 4));
        let none = DispatcherConfig::default().with_reserve(0, 4);
        assert_eq!(none.claim_limits(1), (1, 16), "no reserve");
    }

    /// Read from settings: what is left out keeps its default, durations have their unit, the
    /// proxy is checked as `EgressProxy::new` checks it, and a count of 0, a bad proxy or an
    /// unknown field is an error.
    #[test]
    fn settings_keep_their_defaults_and_checks() {
        use std::time::Duration;

        let read = |json: &str| {
            serde_json::from_str::<DispatcherConfig>(json).map_err(|error| error.to_string())
        };
        let config = read(
            r#"{"timeout": "10s", "lease": "2m", "per_account_in_flight": 8,
                "proxy": "http://user:secret@proxy.internal:3128"}"#,
        )
        .unwrap();
        let proxy = super::EgressProxy::new("http://user:secret@proxy.internal:3128").unwrap();
        let expected = DispatcherConfig::default()
            .with_timeout(Duration::from_secs(10))
            .with_lease(chrono::TimeDelta::minutes(2))
            .with_per_account_in_flight(8)
            .with_proxy(proxy);
        assert_eq!(config, expected);
        for (json, says) in [
            (r#"{"batch": 0}"#, "at least 1"),
            (r#"{"max_in_flight": 0}"#, "at least 1"),
            (
                r#"{"proxy": "socks5://proxy.internal:1080"}"#,
                "http or https",
            ),
            (r#"{"timout": "1s"}"#, "timout"),
            (r#"{"idle_wait": 1}"#, "such as"),
        ] {
            let error = read(json).unwrap_err();
            assert!(error.contains(says), "{json}: {error}");
            assert!(!error.contains("secret"));
        }
    }
}
