//! The dispatcher: claims due deliveries from the store, signs and sends them, records each
//! attempt. Run one per app instance (feature `webhooks`); several, in one process or several
//! sharing a database, never hold the same delivery at once (leases).

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use chrono::TimeDelta;
use futures_util::FutureExt;
use futures_util::stream::{FuturesUnordered, StreamExt};
use rand::RngCore;
use tracing::{Instrument, field};

use super::egress::EgressProxy;
use super::signing::{SIGNATURE_HEADER, TIMESTAMP_HEADER, WEBHOOK_ID_HEADER, sign};
use super::urls::{UrlPolicy, check_url};
use crate::clock::Clock;
use crate::model::{AttemptOutcome, AttemptResult, ClaimedDelivery, DeliveryId};
use crate::store::{Store, StoreError};

/// Settings of a [`Dispatcher`]; `DispatcherConfig::default()` holds the product's.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct DispatcherConfig {
    /// How long an attempt waits for the answer (default 15 s); past it, the attempt failed.
    pub timeout: Duration,
    /// How long a claim holds a delivery (default 60 s: the timeout and a margin). A
    /// dispatcher that dies mid-attempt releases it when the lease runs out; the delivery is
    /// then sent again, with the same `webhook-id`.
    pub lease: TimeDelta,
    /// Deliveries claimed and sent at once, per pass (default 32).
    pub batch: usize,
    /// The wait between passes when nothing was due (default 1 s).
    pub idle_wait: Duration,
    /// The egress proxy every attempt goes through (default none: attempts connect directly,
    /// and the proxy environment variables `HTTP_PROXY`, `HTTPS_PROXY`, `ALL_PROXY` are
    /// ignored). See [`EgressProxy`]: the proxy must then enforce the address rules.
    pub proxy: Option<EgressProxy>,
}

impl Default for DispatcherConfig {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(15),
            lease: TimeDelta::seconds(60),
            batch: 32,
            idle_wait: Duration::from_secs(1),
            proxy: None,
        }
    }
}

impl DispatcherConfig {
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
}

/// Sends the queued webhook deliveries. Get one from
/// [`Engine::webhooks`](crate::Engine::webhooks); spawn [`run`](Self::run).
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

    /// One pass: claims the deliveries due now (at most `batch`), attempts them all at once,
    /// records each attempt; how many were attempted. Attempts that finish together are
    /// recorded together (one store call, one transaction on the SQL stores); a slow receiver
    /// delays the record of its own attempt only.
    pub async fn deliver_due(&self) -> Result<usize, StoreError> {
        let lease = format!(
            "{}-{}",
            self.instance,
            self.claims.fetch_add(1, Ordering::Relaxed)
        );
        let claimed = self
            .store
            .claim_deliveries(
                self.clock.now(),
                self.config.lease,
                &lease,
                self.config.batch,
            )
            .await?;
        let count = claimed.len();
        let mut attempts: FuturesUnordered<_> =
            claimed.into_iter().map(|c| self.attempt(c)).collect();
        while let Some(first) = attempts.next().await {
            let mut finished = vec![first];
            while let Some(Some(more)) = attempts.next().now_or_never() {
                finished.push(more);
            }
            self.store.finish_deliveries(&lease, finished).await?;
        }
        Ok(count)
    }

    /// Runs passes until `shutdown` completes: right away while deliveries are due, else
    /// after `idle_wait`. A pass under way when `shutdown` completes is finished first (its
    /// attempts are recorded), so stopping leaves nothing claimed.
    pub async fn run(self, shutdown: impl Future<Output = ()>) {
        tokio::pin!(shutdown);
        loop {
            let busy = match self.deliver_due().await {
                Ok(attempted) => attempted > 0,
                Err(error) => {
                    tracing::warn!(%error, "webhook dispatcher pass failed");
                    false
                }
            };
            if busy {
                // Yield between passes, and stop here when asked.
                tokio::select! {
                    biased;
                    () = &mut shutdown => return,
                    () = tokio::task::yield_now() => {}
                }
            } else {
                tokio::select! {
                    () = &mut shutdown => return,
                    () = tokio::time::sleep(self.config.idle_wait) => {}
                }
            }
        }
    }

    /// One attempt of a claimed delivery, in its `commerce.webhook` span (never the secret,
    /// the URL or the payload): what to record.
    async fn attempt(&self, claimed: ClaimedDelivery) -> (DeliveryId, AttemptOutcome) {
        let d = &claimed.delivery;
        let span = tracing::info_span!(
            "commerce.webhook",
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
                AttemptResult::NoAnswer(reason) => span.record("status", reason.as_str()),
            };
            let outcome = result.decide(
                d.attempts + 1,
                self.clock.now(),
                claimed.webhook.failing_since,
            );
            tracing::debug!(delivered = ?outcome.status, "webhook attempt");
            (d.id, outcome)
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
        let signature = sign(
            &claimed.webhook.signing_secrets(now),
            &d.event_id,
            timestamp,
            d.payload.as_bytes(),
        );
        let request = self
            .client
            .post(url)
            .header(http::header::CONTENT_TYPE, "application/json")
            .header(WEBHOOK_ID_HEADER, &d.event_id)
            .header(TIMESTAMP_HEADER, timestamp)
            .header(SIGNATURE_HEADER, signature)
            .body(d.payload.clone());
        match request.send().await {
            Ok(response) => AttemptResult::Answered(response.status().as_u16()),
            Err(error) if error.is_timeout() => AttemptResult::NoAnswer("timeout".into()),
            Err(error) if error.is_connect() => AttemptResult::NoAnswer("connection failed".into()),
            Err(_) => AttemptResult::NoAnswer("request failed".into()),
        }
    }
}
