//! Webhooks: order events pushed to the URLs an account registers, signed as
//! [Standard Webhooks](https://www.standardwebhooks.com/) 1.0 and delivered at least once.
//!
//! - **Events** ([`EventType`](crate::model::EventType)): `order.created`,
//!   `order.status_changed` and, on request, `ping`. The store writes an order's events in the
//!   same atomic operation as the change ([`WebhookStore`](crate::store::WebhookStore), the
//!   outbox), each kept as an [`EventSnapshot`](crate::model::EventSnapshot)
//!   ([`NewEvent::order`](crate::model::NewEvent::order)): a committed change always has
//!   them, a change that did not happen never does. The dispatcher renders the body when it
//!   sends ([`render_event`]).
//! - **Registration**: `POST /api/v1/webhooks` and the rest (ability `webhooks:manage`), or
//!   [`Operator`](crate::operator::Operator)'s webhook methods for the platform.
//! - **Delivery**: the dispatcher (feature `webhooks`: `engine.dispatcher().run(shutdown)`)
//!   claims due deliveries, signs ([`sign`]) and sends them, and retries on the schedule of
//!   [`RETRY_SCHEDULE`](crate::domain::delivery::RETRY_SCHEDULE).
//! - **Receivers** check a request with [`verify`].
//!
//! The reference for integrators is `docs/webhooks.md` in the repository.

#[cfg(feature = "webhooks")]
mod dispatcher;
mod dns;
// Events rendered for their deliveries.
#[cfg(feature = "webhooks")]
mod egress;
pub(crate) mod events;
mod nat64;
mod signing;
mod urls;

#[cfg(feature = "webhooks")]
#[cfg_attr(docsrs, doc(cfg(feature = "webhooks")))]
pub use dispatcher::{Dispatcher, DispatcherConfig};
pub(crate) use dns::Dns;
#[cfg(test)]
pub(crate) use dns::fake as dns_fake;
#[cfg(feature = "webhooks")]
#[cfg_attr(docsrs, doc(cfg(feature = "webhooks")))]
pub use egress::EgressProxy;
pub use events::render_event;
pub use nat64::{Nat64Prefix, Nat64PrefixError, Nat64Prefixes};
pub use signing::{
    MAX_SIGNATURES, SIGNATURE_HEADER, TIMESTAMP_HEADER, VerifyError, WEBHOOK_ID_HEADER, new_secret,
    sign, verify,
};
pub use urls::{Addresses, MAX_URL, UrlPolicy, UrlProblem, check_address, check_url};
