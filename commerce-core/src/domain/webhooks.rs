//! Webhook endpoints: the rules of their fields and the operations the API and the
//! [`Operator`](crate::operator::Operator) share.

use std::future::Future;
use std::net::IpAddr;
use std::time::Duration;

use chrono::{DateTime, Utc};

use crate::domain::fields::{TextKind, clean_text};
use crate::model::*;
use crate::model::{FieldProblem, Problem};
use crate::store::{
    InsertWebhookError, MAX_PENDING_MANUAL, MAX_WEBHOOKS_PER_ACCOUNT, QueueDeliveryError, Store,
    StoreError,
};
use crate::webhooks::{Addresses, Dns, UrlPolicy, UrlProblem, check_url, new_secret};

pub use crate::limits::MAX_DESCRIPTION;

/// What a caller asks of an endpoint: every field optional (a registration needs `url`).
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct WebhookInput {
    /// Where to send events.
    pub url: Option<String>,
    /// Which event types (all subscribable ones when registering without).
    pub events: Option<Vec<EventType>>,
    /// The owner's description (`Some(None)` clears it).
    pub description: Option<Option<String>>,
    /// Enable or disable it (changes only).
    pub enabled: Option<bool>,
}

impl WebhookInput {
    /// A registration of `url` for every event type.
    pub fn url(url: impl Into<String>) -> Self {
        Self {
            url: Some(url.into()),
            ..Self::default()
        }
    }

    /// Only these event types.
    pub fn with_events(mut self, events: Vec<EventType>) -> Self {
        self.events = Some(events);
        self
    }

    /// With a description.
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(Some(description.into()));
        self
    }

    /// Enable (`true`) or disable it.
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.enabled = Some(enabled);
        self
    }

    /// Whether registering it (`creating`) or making this change, for an account of `side`,
    /// directs order data: the endpoint receives order events after it, and it registers the
    /// endpoint or changes its `url` or `events`. The API then asks for `orders:read` besides
    /// `webhooks:manage`. Without `events`, a registration or a change of `url` is taken to
    /// direct order data when the side has order events (a supplier's has none).
    pub(crate) fn directs_order_data(&self, creating: bool, side: Side) -> bool {
        // A type of another side directs nothing: the registration is refused (422).
        let ours = EventType::for_side(side);
        let receives_orders = |events: &[EventType]| {
            events
                .iter()
                .any(|e| e.is_order_event() && ours.contains(e))
        };
        match &self.events {
            Some(events) => receives_orders(events),
            None => (creating || self.url.is_some()) && receives_orders(EventType::for_side(side)),
        }
    }
}

/// Why a webhook operation changed nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub(crate) enum WebhookError {
    /// No such endpoint (or delivery) of the account.
    #[error("webhook not found")]
    NotFound,
    /// Fields break a rule.
    #[error("invalid webhook fields")]
    Invalid(Vec<FieldProblem>),
    /// The account has [`MAX_WEBHOOKS_PER_ACCOUNT`] endpoints already.
    #[error("the account has {0} webhooks already")]
    TooMany(usize),
    /// A ping or redelivery to a disabled endpoint.
    #[error("the webhook is disabled")]
    Disabled,
    /// A ping or redelivery while the endpoint has [`MAX_PENDING_MANUAL`] of them pending.
    #[error("the webhook has {0} manual deliveries pending already")]
    Busy(usize),
    /// The store failed.
    #[error(transparent)]
    Store(#[from] StoreError),
}

fn url_problem(problem: UrlProblem) -> Problem {
    match problem {
        UrlProblem::NotHttps => Problem::NotHttps,
        UrlProblem::NotPublic => Problem::NotPublicAddress,
        _ => Problem::InvalidUrl,
    }
}

/// How long registration waits for a host name to resolve; past it, the URL is refused as
/// not public.
pub(crate) const DNS_TIMEOUT: Duration = Duration::from_secs(2);

/// Checks a webhook URL: its form ([`check_url`]) and, for a host name, that it resolves
/// within [`DNS_TIMEOUT`] and every address it resolves to is allowed
/// ([`UrlPolicy::allows`]). A name that does not resolve (in time) and one that resolves to a
/// non-public address get the same answer ([`Problem::NotPublicAddress`]), so that
/// registering URLs cannot probe which internal names exist. The dispatcher checks the
/// addresses again when it connects (a name may resolve elsewhere later). The lookup is
/// async ([`Dns`]): past the timeout it is dropped, and no thread keeps waiting for it.
pub(crate) async fn check_webhook_url(url: &str, policy: UrlPolicy) -> Result<(), Problem> {
    check_webhook_url_with(url, policy, DNS_TIMEOUT, |host, _port| async move {
        Dns::system(DNS_TIMEOUT).lookup(&host).await
    })
    .await
}

/// [`check_webhook_url`] with its resolver and timeout given (the tests' way in).
async fn check_webhook_url_with<F, Fut>(
    url: &str,
    policy: UrlPolicy,
    timeout: Duration,
    lookup: F,
) -> Result<(), Problem>
where
    F: FnOnce(String, u16) -> Fut,
    Fut: Future<Output = std::io::Result<Vec<IpAddr>>>,
{
    let parsed = check_url(url, policy).map_err(url_problem)?;
    let Some(url::Host::Domain(host)) = parsed.host() else {
        return Ok(());
    };
    if policy.addresses == Addresses::Any {
        return Ok(());
    }
    let port = parsed.port_or_known_default().unwrap_or(443);
    let addresses = match tokio::time::timeout(timeout, lookup(host.to_owned(), port)).await {
        Ok(Ok(addresses)) => addresses,
        Ok(Err(_)) | Err(_) => Vec::new(),
    };
    if addresses.is_empty() || !addresses.iter().all(|ip| policy.allows(*ip)) {
        return Err(Problem::NotPublicAddress);
    }
    Ok(())
}

/// Checks the fields given for an endpoint of an account of `side`: the URL
/// ([`check_webhook_url`]), a non-empty list of event types of that side
/// ([`EventType::for_side`]) without repeats (a type of the other side is refused), a
/// printable description of at most [`MAX_DESCRIPTION`] characters (blank clears it).
async fn check(
    input: &mut WebhookInput,
    policy: UrlPolicy,
    side: Side,
) -> Result<(), WebhookError> {
    let mut problems = Vec::new();
    let mut fail = |field: &str, problem| {
        problems.push(FieldProblem {
            field: field.into(),
            problem,
        })
    };
    if let Some(url) = &input.url
        && let Err(problem) = check_webhook_url(url, policy).await
    {
        fail("url", problem);
    }
    if let Some(events) = &mut input.events {
        events.dedup();
        if events.is_empty() {
            fail("events", Problem::Required);
        } else if events
            .iter()
            .any(|e| !EventType::for_side(side).contains(e))
        {
            fail("events", Problem::UnknownValue);
        }
    }
    if let Some(Some(description)) = &input.description {
        match clean_text(description, MAX_DESCRIPTION, TextKind::SingleLine) {
            Ok(cleaned) => input.description = Some(cleaned),
            Err(problem) => fail("description", problem),
        }
    }
    if problems.is_empty() {
        Ok(())
    } else {
        Err(WebhookError::Invalid(problems))
    }
}

/// Registers an endpoint of `account` (of `side`) with a new secret (returned in the
/// endpoint, to show once).
pub(crate) async fn register(
    store: &dyn Store,
    policy: UrlPolicy,
    (account, side): (AccountId, Side),
    mut input: WebhookInput,
    now: DateTime<Utc>,
) -> Result<Webhook, WebhookError> {
    if input.url.is_none() {
        return Err(WebhookError::Invalid(vec![FieldProblem {
            field: "url".into(),
            problem: Problem::Required,
        }]));
    }
    check(&mut input, policy, side).await?;
    let new = NewWebhook::builder()
        .account_id(account)
        .url(input.url.unwrap_or_default())
        .secret(WebhookSecret::new(new_secret()))
        .created_at(now)
        .maybe_events(input.events.map(EventSelection::Only))
        .maybe_description(input.description.flatten())
        .build();
    match store.insert_webhook(new, MAX_WEBHOOKS_PER_ACCOUNT).await {
        Ok(webhook) => Ok(webhook),
        Err(InsertWebhookError::TooMany { limit }) => Err(WebhookError::TooMany(limit)),
        Err(InsertWebhookError::Store(e)) => Err(e.into()),
    }
}

/// Changes an endpoint (`account`: only one of that account's) of an account of `side`.
pub(crate) async fn update(
    store: &dyn Store,
    policy: UrlPolicy,
    (account, side): (Option<AccountId>, Side),
    id: WebhookId,
    mut input: WebhookInput,
    now: DateTime<Utc>,
) -> Result<Webhook, WebhookError> {
    check(&mut input, policy, side).await?;
    let patch = WebhookPatch {
        url: input.url,
        events: input.events,
        description: input.description,
        enabled: input.enabled,
    };
    store
        .update_webhook(account, id, patch, now)
        .await?
        .ok_or(WebhookError::NotFound)
}

/// Gives an endpoint a new secret; the old one signs too for the next 24 hours.
pub(crate) async fn rotate_secret(
    store: &dyn Store,
    account: Option<AccountId>,
    id: WebhookId,
    now: DateTime<Utc>,
) -> Result<Webhook, WebhookError> {
    store
        .rotate_webhook_secret(account, id, WebhookSecret::new(new_secret()), now)
        .await?
        .ok_or(WebhookError::NotFound)
}

impl From<QueueDeliveryError> for WebhookError {
    fn from(error: QueueDeliveryError) -> Self {
        match error {
            QueueDeliveryError::NotFound => WebhookError::NotFound,
            QueueDeliveryError::Disabled => WebhookError::Disabled,
            QueueDeliveryError::Busy { limit } => WebhookError::Busy(limit),
            QueueDeliveryError::Store(e) => e.into(),
        }
    }
}

/// Queues a `ping` for an endpoint, due now: refused for a disabled endpoint and while it
/// has [`MAX_PENDING_MANUAL`] pings and redeliveries pending.
pub(crate) async fn ping(
    store: &dyn Store,
    account: Option<AccountId>,
    id: WebhookId,
    now: DateTime<Utc>,
) -> Result<Delivery, WebhookError> {
    Ok(store
        .queue_event(account, id, NewEvent::ping(id, now), MAX_PENDING_MANUAL)
        .await?)
}

/// Queues the event of one of an endpoint's deliveries again, due now, with the limits of
/// [`ping`].
pub(crate) async fn redeliver(
    store: &dyn Store,
    account: Option<AccountId>,
    id: WebhookId,
    delivery: DeliveryId,
    now: DateTime<Utc>,
) -> Result<Delivery, WebhookError> {
    Ok(store
        .redeliver(account, id, delivery, now, MAX_PENDING_MANUAL)
        .await?)
}

#[cfg(test)]
mod tests {
    use std::io;

    use super::*;
    use crate::webhooks::dns_fake;

    fn answers(
        found: &'static [&'static str],
    ) -> impl FnOnce(String, u16) -> std::future::Ready<io::Result<Vec<IpAddr>>> {
        move |_, _| {
            std::future::ready(Ok(found
                .iter()
                .map(|a| a.parse().expect("an address"))
                .collect()))
        }
    }

    async fn check_with<F, Fut>(url: &str, policy: UrlPolicy, lookup: F) -> Result<(), Problem>
    where
        F: FnOnce(String, u16) -> Fut,
        Fut: Future<Output = io::Result<Vec<IpAddr>>>,
    {
        let timeout = Duration::from_millis(50);
        // A generous bound: the check must end by its own timeout, never hang.
        tokio::time::timeout(
            Duration::from_secs(10),
            check_webhook_url_with(url, policy, timeout, lookup),
        )
        .await
        .expect("the check ends by its own DNS timeout")
    }

    /// A name that resolves to a non-public address, one that does not resolve, one whose
    /// lookup never answers: one answer for all three.
    #[tokio::test]
    async fn not_public_unresolvable_and_slow_names_get_one_answer() {
        let url = "https://hooks.internal.example/h";
        let strict = UrlPolicy::STRICT;
        let private = check_with(url, strict, answers(&["10.0.0.7"])).await;
        let mixed = check_with(url, strict, answers(&["93.184.216.34", "fd00::7"])).await;
        let none = check_with(url, strict, answers(&[])).await;
        let failed = check_with(url, strict, |_, _| async {
            Err::<Vec<IpAddr>, _>(io::Error::other("no such host"))
        })
        .await;
        let silent = check_with(url, strict, |_, _| std::future::pending()).await;
        for answer in [private, mixed, none, failed, silent] {
            assert_eq!(answer, Err(Problem::NotPublicAddress));
        }
        assert_eq!(
            check_with(url, strict, answers(&["93.184.216.34"])).await,
            Ok(())
        );
        // The sandbox: loopback names are fine, other private ones are not.
        let local = "http://localhost:4000/h";
        let sandbox = UrlPolicy::SANDBOX;
        assert_eq!(
            check_with(local, sandbox, answers(&["127.0.0.1", "::1"])).await,
            Ok(())
        );
        assert_eq!(
            check_with(local, sandbox, answers(&["127.0.0.1", "10.0.0.1"])).await,
            Err(Problem::NotPublicAddress)
        );
    }

    /// The lookup is given the URL's host and port (the scheme's default without one).
    #[tokio::test]
    async fn the_lookup_gets_the_host_and_port() {
        let seen = std::sync::Mutex::new(Vec::new());
        for url in ["https://a.example/h", "http://b.example:8080/h"] {
            let _ = check_with(url, UrlPolicy::SANDBOX, |host, port| {
                seen.lock().unwrap().push((host, port));
                std::future::ready(Ok(vec![IpAddr::from([93, 184, 216, 34])]))
            })
            .await;
        }
        assert_eq!(
            seen.into_inner().unwrap(),
            [
                ("a.example".to_owned(), 443),
                ("b.example".to_owned(), 8080)
            ]
        );
    }

    /// The check through the real resolver: a name server that answers a private address
    /// gets the URL refused, one that answers a public address gets it accepted.
    #[tokio::test]
    async fn the_resolvers_answers_are_checked() {
        let url = "https://hooks.example.com/h";
        for (address, expected) in [
            ("10.0.0.7", Err(Problem::NotPublicAddress)),
            ("64:ff9b::10.0.0.7", Err(Problem::NotPublicAddress)),
            ("93.184.216.34", Ok(())),
        ] {
            let server = dns_fake::answering(vec![address.parse().expect("an address")]).await;
            let dns = Dns::with_servers(&[server], DNS_TIMEOUT);
            let checked = check_with(url, UrlPolicy::STRICT, |host, _| async move {
                dns.lookup(&host).await
            })
            .await;
            assert_eq!(checked, expected, "{address}");
        }
    }

    /// Eight checks at once of names whose name server never answers: each is refused when
    /// its timeout passes (together, not one after the other), the server did get the
    /// queries, and the runtime's only blocking thread is free at once afterwards (a
    /// `getaddrinfo` still waiting would hold it).
    #[test]
    fn a_silent_name_server_costs_the_timeout_and_no_thread() {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .max_blocking_threads(1)
            .build()
            .expect("a runtime");
        let silent = std::net::UdpSocket::bind("127.0.0.1:0").expect("a UDP socket");
        let timeout = Duration::from_millis(300);
        let dns = Dns::with_servers(&[silent.local_addr().expect("its address")], timeout);
        runtime.block_on(async {
            let started = std::time::Instant::now();
            let checks = (0..8).map(|i| {
                let dns = dns.clone();
                let url = format!("https://slow-{i}.example.com/h");
                async move {
                    check_webhook_url_with(&url, UrlPolicy::STRICT, timeout, |host, _| async move {
                        dns.lookup(&host).await
                    })
                    .await
                }
            });
            let answers = futures_util::future::join_all(checks).await;
            let took = started.elapsed();
            assert!(
                answers.iter().all(|a| *a == Err(Problem::NotPublicAddress)),
                "{answers:?}"
            );
            assert!(took >= timeout, "ended before the timeout: {took:?}");
            assert!(
                took < Duration::from_secs(2),
                "eight checks should end together, at their timeout: {took:?}"
            );
            tokio::time::timeout(Duration::from_secs(1), tokio::task::spawn_blocking(|| ()))
                .await
                .expect("the blocking pool's only thread is free")
                .expect("the blocking task ran");
        });
        silent
            .set_read_timeout(Some(Duration::from_secs(1)))
            .expect("a read timeout");
        let mut query = [0u8; 512];
        let (length, _) = silent
            .recv_from(&mut query)
            .expect("the resolver asked the silent server");
        assert!(length > 12, "a DNS query: a 12-byte header and a question");
    }
}
