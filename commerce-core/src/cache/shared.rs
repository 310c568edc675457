//! What an engine and its operator share: the store (with the rendered-JSON caches around it),
//! the clock, the settings, the catalogue-pulls cache, `GET /me`'s kept bodies, the unknown
//! keys and the product records the checkout prices from.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::cache::CachingStore;
use crate::cache::pulls_seen::PullsSeen;
use crate::cache::rendered_me::RenderedMe;
use crate::cache::unknown_keys::UnknownKeys;
use crate::clock::{Clock, OffsetClock};
use crate::config::Config;
use crate::domain::earnings::PayoutRules;
use crate::domain::kept::KeptProducts;
use crate::store::Store;

/// Shared by every clone of an [`Engine`](crate::Engine) and its [`Operator`](crate::operator::Operator).
pub(crate) struct Shared {
    /// The store as given, behind the tracing layer, behind the rendered-JSON caches.
    pub(crate) store: Arc<CachingStore>,
    pub(crate) clock: Arc<dyn Clock>,
    /// The test clock, when [`Config::test_mode`] is on (then it is also `clock`).
    pub(crate) test_clock: Option<Arc<OffsetClock>>,
    pub(crate) config: Config,
    /// Catalogue pulls already recorded this month (writes skipped).
    pub(crate) pulls_seen: PullsSeen,
    /// `GET /me`'s bodies, reused while the account and key records are unchanged.
    pub(crate) rendered_me: RenderedMe,
    /// Bearer tokens found unknown lately, refused again without a store query.
    pub(crate) unknown_keys: UnknownKeys,
    /// The product records the checkout prices from (checked by the order's stock write).
    pub(crate) kept_products: KeptProducts,
}

impl Shared {
    /// The store, as the engine calls it (through its caches and its tracing layer).
    pub(crate) fn store(&self) -> &dyn Store {
        &*self.store
    }

    /// The current instant, from the clock.
    pub(crate) fn now(&self) -> DateTime<Utc> {
        self.clock.now()
    }

    /// The payout rule at `now`.
    pub(crate) fn payout_rules(&self, now: DateTime<Utc>) -> PayoutRules {
        PayoutRules::clamped(now, self.config.hold_days)
    }
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}
