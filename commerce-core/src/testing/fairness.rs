//! Webhook fairness: a dead receiver slows only its own endpoint.
//!
//! [`prompt_latencies`] runs real dispatchers ([`Dispatcher::run`](crate::webhooks::Dispatcher::run),
//! one per engine given: engines on one store are app instances sharing it) while one account's
//! endpoint is a [`Tarpit`] (it accepts connections and never answers) fed pings, and measures
//! how long another account's events take to reach its prompt receiver. Used by the store
//! crates' tests (memory, PostgreSQL with one and two instances) and by the `webhooks` bench.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::http::receiver::Receiver;
use crate::Engine;
use crate::domain::webhooks::WebhookInput;
use crate::model::AccountId;
use crate::operator::{Conflict, OperatorError};
use crate::webhooks::DispatcherConfig;

/// A webhook receiver that accepts TCP connections and never answers (a hung server): every
/// attempt to it waits for the dispatcher's timeout. Dropping it closes every connection.
#[non_exhaustive]
pub struct Tarpit {
    /// `http://127.0.0.1:<port>/hooks`.
    pub url: String,
    server: JoinHandle<()>,
}

impl Drop for Tarpit {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Tarpit {
    /// Starts one on a free local port.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind a local port");
        let url = format!("http://{}/hooks", listener.local_addr().expect("bound"));
        let server = tokio::spawn(async move {
            // Held, never read nor answered, until the tarpit is dropped.
            let mut held: Vec<TcpStream> = Vec::new();
            loop {
                if let Ok((stream, _)) = listener.accept().await {
                    held.push(stream);
                }
            }
        });
        Self { url, server }
    }
}

/// What a run does.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Flood {
    /// How long the prompt account's events (and the tarpit's pings) are sent.
    pub duration: Duration,
    /// Pings per second to the tarpit endpoint (0: no tarpit endpoint at all).
    pub tarpit_pings_per_second: u32,
    /// Events per second of the prompt account (pings to its endpoint).
    pub prompt_events_per_second: u32,
    /// The dispatchers' settings (attempt timeout and the rest).
    pub config: DispatcherConfig,
}

impl Flood {
    /// A `Flood` of its fields, in their order.
    pub fn new(
        duration: Duration,
        tarpit_pings_per_second: u32,
        prompt_events_per_second: u32,
        config: DispatcherConfig,
    ) -> Self {
        Self {
            duration,
            tarpit_pings_per_second,
            prompt_events_per_second,
            config,
        }
    }
}

impl Flood {
    /// The same flood with the dispatchers' settings `config`.
    pub fn with_config(mut self, config: DispatcherConfig) -> Self {
        self.config = config;
        self
    }

    /// The scenario, shortened by `duration` and `timeout`: 2 pings a second to the
    /// tarpit, 4 events a second of the prompt account, dispatchers polling every 100 ms.
    pub fn tarpit(duration: Duration, timeout: Duration) -> Self {
        Self {
            duration,
            tarpit_pings_per_second: 2,
            prompt_events_per_second: 4,
            config: DispatcherConfig::default()
                .with_timeout(timeout)
                .with_idle_wait(Duration::from_millis(100)),
        }
    }

    /// The same without the tarpit endpoint.
    pub fn without_tarpit(mut self) -> Self {
        self.tarpit_pings_per_second = 0;
        self
    }
}

/// The delivery latencies of the prompt account's events, sorted.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Latencies {
    /// From queueing an event to its arrival at the receiver, ascending.
    pub sorted: Vec<Duration>,
    /// Events queued that never arrived within the wait.
    pub missing: usize,
}

impl Latencies {
    /// A `Latencies` of its fields, in their order.
    pub fn new(sorted: Vec<Duration>, missing: usize) -> Self {
        Self { sorted, missing }
    }
}

impl Latencies {
    /// The latencies of the events `sent` (event id, when queued) that `receiver` got.
    pub(crate) fn of(receiver: &Receiver, sent: &HashMap<String, Instant>) -> Self {
        let mut sorted: Vec<Duration> = receiver
            .received()
            .iter()
            .filter_map(|r| sent.get(r.header("webhook-id")).map(|at| r.arrived - *at))
            .collect();
        sorted.sort();
        let missing = sent.len().saturating_sub(sorted.len());
        Self { sorted, missing }
    }

    /// The `q`-quantile (0.5: the median, 0.99), by the nearest rank; zero when there is none.
    pub fn quantile(&self, q: f64) -> Duration {
        if self.sorted.is_empty() {
            return Duration::ZERO;
        }
        let rank = (q * self.sorted.len() as f64).ceil() as usize;
        self.sorted[rank.clamp(1, self.sorted.len()) - 1]
    }
}

/// Dispatchers running, one per engine given ([`Dispatcher::run`](crate::webhooks::Dispatcher::run)),
/// until [`stop`](Self::stop).
pub(crate) struct Running {
    stop: watch::Sender<bool>,
    dispatchers: Vec<JoinHandle<()>>,
    timeout: Duration,
}

impl Running {
    /// Starts them with `config`.
    pub(crate) fn start(engines: &[Engine], config: &DispatcherConfig) -> Self {
        let (stop, stopped) = watch::channel(false);
        let dispatchers = engines
            .iter()
            .map(|engine| {
                let dispatcher = engine.dispatcher().with_config(config.clone());
                let mut stopped = stopped.clone();
                tokio::spawn(dispatcher.run(async move {
                    let _ = stopped.wait_for(|stop| *stop).await;
                }))
            })
            .collect();
        Self {
            stop,
            dispatchers,
            timeout: config.timeout,
        }
    }

    /// What says they are to stop (for other tasks of the run to watch).
    pub(crate) fn stopped(&self) -> watch::Receiver<bool> {
        self.stop.subscribe()
    }

    /// Stops them and waits for each to record its attempts in flight (at most the attempt
    /// timeout and 5 s more).
    pub(crate) async fn stop(self) {
        self.stop.send_replace(true);
        for dispatcher in self.dispatchers {
            let _ = tokio::time::timeout(self.timeout + Duration::from_secs(5), dispatcher).await;
        }
    }
}

/// Runs one [`Flood`]: registers a prompt receiver for `prompt` and (when it pings one) a
/// [`Tarpit`] for `dead`, runs one dispatcher per engine, queues the pings at their rates for
/// the flood's duration, waits for the prompt events to arrive (at most twice the attempt
/// timeout plus 5 s more), stops the dispatchers and returns the prompt events' latencies.
/// The endpoints are deleted at the end.
pub async fn prompt_latencies(
    engines: &[Engine],
    prompt: AccountId,
    dead: AccountId,
    flood: &Flood,
) -> Latencies {
    let operator = engines[0].operator();
    let receiver = Receiver::start().await;
    let tarpit = Tarpit::start().await;
    let fine = operator
        .create_webhook(prompt, WebhookInput::url(&receiver.url))
        .await
        .expect("the prompt endpoint");
    let hung = if flood.tarpit_pings_per_second > 0 {
        let created = operator
            .create_webhook(dead, WebhookInput::url(&tarpit.url))
            .await
            .expect("the tarpit endpoint");
        Some(created.id)
    } else {
        None
    };

    let running = Running::start(engines, &flood.config);

    // One tick per 10 ms: each kind of event is due `rate` times a second.
    let tick = Duration::from_millis(10);
    let due = |rate: u32, n: u64| rate > 0 && n.is_multiple_of(100 / u64::from(rate.clamp(1, 100)));
    let mut sent: HashMap<String, Instant> = HashMap::new();
    let started = Instant::now();
    let mut ticks = tokio::time::interval(tick);
    let mut n = 0u64;
    while started.elapsed() < flood.duration {
        ticks.tick().await;
        if let Some(hung) = hung
            && due(flood.tarpit_pings_per_second, n)
        {
            // Past the manual-delivery limit the tarpit's pings are refused (409
            // `webhook_busy`): the flood is bounded, which is part of what is tested.
            match operator.ping_webhook(hung).await {
                Ok(_) | Err(OperatorError::Conflict(Conflict::WebhookBusy { .. })) => {}
                Err(error) => panic!("a tarpit ping: {error:?}"),
            }
        }
        if due(flood.prompt_events_per_second, n + 3) {
            let queued_at = Instant::now();
            let ping = operator.ping_webhook(fine.id).await.expect("a prompt ping");
            sent.insert(ping.event_id, queued_at);
        }
        n += 1;
    }

    let wait = flood.config.timeout * 2 + Duration::from_secs(5);
    let deadline = Instant::now() + wait;
    while receiver.received().len() < sent.len() && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The tarpit's connections close: the attempts in flight to it end at once.
    drop(tarpit);
    running.stop().await;

    let latencies = Latencies::of(&receiver, &sent);
    for id in [Some(fine.id), hung].into_iter().flatten() {
        operator.delete_webhook(id).await.expect("endpoint deleted");
    }
    latencies
}

/// The test of the goal: with one account's endpoint a tarpit fed 2 pings a second (the
/// attempt timeout shortened to 5 s, the flood to 8 s), another account's events arrive with
/// p99 <= 2 s (and every one arrives). Fails when a batch waits for its slowest attempt.
pub async fn a_dead_receiver_slows_only_its_own_endpoint(
    engines: &[Engine],
    prompt: AccountId,
    dead: AccountId,
) {
    let flood = Flood::tarpit(Duration::from_secs(8), Duration::from_secs(5));
    let latencies = prompt_latencies(engines, prompt, dead, &flood).await;
    assert_eq!(latencies.missing, 0, "every prompt event arrives");
    assert!(
        latencies.sorted.len() >= 25,
        "{} events",
        latencies.sorted.len()
    );
    let p99 = latencies.quantile(0.99);
    assert!(
        p99 <= Duration::from_secs(2),
        "p99 {p99:?} (p50 {:?}) beside a tarpit with {} dispatcher(s)",
        latencies.quantile(0.5),
        engines.len()
    );
}
