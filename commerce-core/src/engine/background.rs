//! [`Engine::run_background`]: what an application instance runs beside the API, in one call.

use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;

use super::Engine;
use crate::limits::CATALOG_CHANGED_SECONDS;
use crate::operator::Operator;

/// How often [`Engine::run_background`] purges: hourly, as the records it drops expire by the
/// hour (idempotency records after 24 hours, webhook history after 30 days).
const PURGE_EVERY: Duration = Duration::from_secs(3600);

/// How often [`Engine::run_background`] derives the events that no write queues itself
/// (`catalog.changed`, quotes that expired).
const DERIVE_EVERY: Duration = Duration::from_secs(CATALOG_CHANGED_SECONDS);

impl Engine {
    /// Runs what each instance of an application must run beside serving the API, until
    /// `shutdown` resolves, then drains it and closes the store:
    ///
    /// - the webhook dispatcher (`Engine::dispatcher`, feature `webhooks`): order events
    ///   leave the store's outbox only through a running dispatcher;
    /// - the purges, at once and then hourly: [`Operator::purge_idempotency`]
    ///   (`Idempotency-Key` records past their window) and
    ///   [`Operator::purge_webhook_deliveries`] (delivery history past 30 days); a failed
    ///   purge is logged (`ERROR`) and tried again the next hour;
    /// - the derived events, at once and then every 10 seconds:
    ///   [`Operator::send_catalog_changed`] (`catalog.changed` to the marketers' endpoints
    ///   whose last one the catalogue change feed has passed) and [`Operator::expire_quotes`]
    ///   (a quote past its end is written `expired`, with its `quote.updated` event); a failure
    ///   is logged and tried again at the next tick.
    ///
    /// Once `shutdown` resolves, the dispatcher stops claiming and records the attempts it has
    /// in flight (each bounded by its timeout, 15 s by default), the purges stop (a purge
    /// under way finishes first), and then the store is closed
    /// ([`AccountStore::close`](crate::store::AccountStore::close): the SQL stores close the
    /// pool they opened, so the database sees every session end). Resolve `shutdown` once
    /// the server has stopped and its requests have finished: they need the store until then.
    ///
    /// Call it once per instance; instances sharing a database may each run it. An
    /// application that runs the dispatcher or the purges its own way calls those instead.
    ///
    /// ```no_run
    /// # use commerce_core as commerce;
    /// # async fn serve_until_signal(_: &commerce::Engine) {}
    /// # async fn demo(engine: commerce::Engine) -> Result<(), tokio::task::JoinError> {
    /// let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    /// let background = tokio::spawn(engine.clone().run_background(async {
    ///     let _ = stopped.await;
    /// }));
    /// serve_until_signal(&engine).await; // the server, drained on SIGTERM or ctrl-c
    /// let _ = stop.send(()); // then the dispatcher and the purges, then the store
    /// background.await?;
    /// # Ok(()) }
    /// ```
    pub async fn run_background(self, shutdown: impl Future<Output = ()> + Send) {
        let (stop, stopping) = watch::channel(false);
        let stopped = move || {
            let mut stopping = stopping.clone();
            async move {
                // An error means the sender is gone, which is a shutdown as well.
                let _ = stopping.wait_for(|stop| *stop).await;
            }
        };
        let signal = async move {
            shutdown.await;
            let _ = stop.send(true);
        };
        #[cfg(feature = "webhooks")]
        let dispatcher = self.dispatcher().run(stopped());
        #[cfg(not(feature = "webhooks"))]
        let dispatcher = async {};
        tokio::join!(
            signal,
            dispatcher,
            purge_periodically(self.operator(), stopped()),
            derive_periodically(self.operator(), stopped())
        );
        if let Err(error) = self.shared.store().close().await {
            tracing::error!(%error, "closing the store failed");
        }
    }
}

/// At once and then every [`PURGE_EVERY`]: the idempotency records and the webhook history.
/// Stops when `shutdown` resolves, between two purges.
async fn purge_periodically(operator: Operator, shutdown: impl Future<Output = ()>) {
    let purge = || {
        let operator = operator.clone();
        async move {
            match operator.purge_idempotency().await {
                Ok(count) => tracing::info!(count, "idempotency records purged"),
                Err(error) => tracing::error!(%error, "idempotency purge failed"),
            }
            match operator.purge_webhook_deliveries().await {
                Ok(count) => tracing::info!(count, "webhook deliveries purged"),
                Err(error) => tracing::error!(%error, "webhook history purge failed"),
            }
        }
    };
    every(PURGE_EVERY, shutdown, purge).await;
}

/// At once and then every [`DERIVE_EVERY`]: the events derived from the store's state.
/// Stops when `shutdown` resolves, between two ticks.
async fn derive_periodically(operator: Operator, shutdown: impl Future<Output = ()>) {
    let derive = || {
        let operator = operator.clone();
        async move {
            match operator.send_catalog_changed().await {
                Ok(0) => {}
                Ok(count) => tracing::debug!(count, "catalog.changed sent"),
                Err(error) => tracing::error!(%error, "sending catalog.changed failed"),
            }
            match operator.expire_quotes().await {
                Ok(0) => {}
                Ok(count) => tracing::info!(count, "quotes expired"),
                Err(error) => tracing::error!(%error, "expiring quotes failed"),
            }
        }
    };
    every(DERIVE_EVERY, shutdown, derive).await;
}

/// Runs `work` at once and then every `period` (a late tick delays the next), until
/// `shutdown` resolves; a round under way finishes first.
async fn every<W, F>(period: Duration, shutdown: impl Future<Output = ()>, work: W)
where
    W: Fn() -> F,
    F: Future<Output = ()>,
{
    let mut ticks = tokio::time::interval(period);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        tokio::select! {
            biased;
            () = &mut shutdown => return,
            _ = ticks.tick() => {}
        }
        work().await;
    }
}
