//! The platform's settings of an engine.

use chrono::Duration;
use rust_decimal::Decimal;
use serde::Deserialize;

pub mod human;

use crate::limits;
use crate::webhooks::UrlPolicy;

/// Platform settings of an engine. `Config::default()` holds the product's defaults; change
/// a field on it, or with [`Engine::builder`](crate::Engine::builder)`(store).configure(|c| ..)`.
/// New settings may be added (`#[non_exhaustive]`), each with a default.
///
/// Durations: a wait the runtime performs (`body_timeout`) is a [`std::time::Duration`]; a
/// span of business time added to a stored instant (`idempotency_ttl`,
/// `idempotency_stale_after`) is a [`chrono::Duration`]; `unknown_key_life`, the in-process
/// cache's life, is a [`std::time::Duration`] though it is added to the engine clock's
/// instants.
///
/// # From a file or the environment
///
/// `Config` is [`Deserialize`]: an application loads it with `figment`, `config` or `envy`
/// like the rest of its settings. A field left out keeps its default, durations are written
/// with their unit ([`human`]: `"30s"`, `"24h"`, `"none"` for an optional one), amounts and
/// percentages as numbers or strings, and an unknown field is an error (a misspelt setting is
/// not silently ignored). [`check`](Self::check) still has the last word
/// ([`EngineBuilder::build`](crate::EngineBuilder::build) calls it).
///
/// ```
/// # use commerce_core as commerce;
/// use commerce::config::Config;
/// use std::time::Duration;
///
/// let config: Config = serde_json::from_str(
///     r#"{"hold_days": 7, "body_timeout": "20s", "idempotency_ttl": "12h",
///         "webhook_urls": {"nat64_prefixes": ["2001:db8:64::/96"]}}"#,
/// )
/// .unwrap();
/// assert_eq!(config.hold_days, 7);
/// assert_eq!(config.body_timeout, Some(Duration::from_secs(20)));
/// assert_eq!(config.default_rate_limit, Config::default().default_rate_limit);
/// ```
///
/// With figment, from variables of a prefix that holds nothing else (unknown fields are
/// errors, so a prefix shared with other settings such as `COMMERCE_DATABASE_URL` would
/// refuse them): `COMMERCE_ENGINE__HOLD_DAYS=7`, `COMMERCE_ENGINE__BODY_TIMEOUT=20s`,
/// `COMMERCE_ENGINE__WEBHOOK_URLS__ALLOW_HTTP=true`, read by
/// `Figment::from(Env::prefixed("COMMERCE_ENGINE__").split("__")).extract::<Config>()`, or
/// nested in the application's own settings as `examples/production.rs` does.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(default, deny_unknown_fields)]
#[non_exhaustive]
pub struct Config {
    /// Platform commission on the marketer's profit, percent (default 4).
    pub commission_percent: Decimal,
    /// Days between delivery and payout readiness (default 14).
    pub hold_days: i64,
    /// Smallest withdrawal, EGP (default 100.00).
    pub withdrawal_minimum: Decimal,
    /// Referral percent shown in the wallet (default 0).
    pub referral_percent: Decimal,
    /// Per-minute limit of keys created without their own (default 120).
    pub default_rate_limit: u32,
    /// Largest request body in bytes of every endpoint but `POST /orders` (default 16 KiB);
    /// larger is a 413.
    pub body_limit: usize,
    /// Largest body of `POST /orders` in bytes (default 256 KiB: 100 lines with long notes
    /// fit many times over); larger is a 413.
    pub order_body_limit: usize,
    /// How many unknown keys (hashes of bearer tokens no store knows) an engine remembers, to
    /// refuse them again without a store query (default 10,000; 0 remembers none). Once full,
    /// the oldest is forgotten first.
    pub unknown_keys: usize,
    /// How long an unknown key is remembered (default 30 seconds), by the engine's clock. A
    /// key created later has a random plaintext no client sent before, so it works at once;
    /// a key *imported* ([`Operator::import_key`](crate::operator::Operator::import_key)) whose
    /// plaintext an engine refused within this time works on that engine once the time has
    /// passed (at once on the engine that imported it).
    #[serde(deserialize_with = "human::duration")]
    pub unknown_key_life: std::time::Duration,
    /// How long an adapter waits for a request's whole body once its head was admitted
    /// (default 30 seconds); a body not read whole by then is a `408 request_timeout`, so a
    /// client trickling its body cannot hold a connection and its buffer for ever. `None`
    /// waits as long as the body lasts.
    #[serde(deserialize_with = "human::optional_duration")]
    pub body_timeout: Option<std::time::Duration>,
    /// How long an `Idempotency-Key` replays its first response (default 24 hours).
    #[serde(deserialize_with = "human::time_delta")]
    pub idempotency_ttl: Duration,
    /// After how long a request still in flight under a key is taken to have died (default 2 minutes).
    #[serde(deserialize_with = "human::time_delta")]
    pub idempotency_stale_after: Duration,
    /// Which webhook URLs may be registered and called besides `https` ones of public
    /// addresses (default [`UrlPolicy::STRICT`]: none; the sandbox's [`UrlPolicy::SANDBOX`]
    /// allows `http` and loopback receivers, nothing else private).
    pub webhook_urls: UrlPolicy,
    /// How many bytes of products' JSON an engine keeps to serve `GET /products` and
    /// `GET /products/{id}` without rendering them again (default 64 MiB; 0 keeps none). Each
    /// kept product counts for its JSON's length plus 256 bytes; the least used go first when
    /// a new one would pass the bound, and one heavier than its share of the bound (the whole
    /// bound below 2 MiB, 1 to 4 MiB above) is not kept. A rendering is reused only while the
    /// product's record is unchanged, so this bounds memory, never freshness; a kept
    /// rendering also holds its record (shared with a store that keeps its records in
    /// memory), about as big again. An engine that keeps renderings also keeps the 64 most
    /// used `GET /products` bodies whole, each reused only for the very same renderings and
    /// page meta; 0 keeps no page either.
    pub rendered_products_bytes: usize,
    /// How many bytes of orders' JSON an engine keeps to serve `GET /orders` without reading
    /// their lines or rendering them again (default 64 MiB; 0 keeps none). Each kept order
    /// counts for its JSON's length (about 2 KiB for an order of a few lines, tens of KiB for
    /// 100 lines with warranties) plus 256 bytes; the least used go first when a new one would
    /// pass the bound, and one heavier than its share of the bound (the whole bound below
    /// 2 MiB, 1 to 4 MiB above) is not kept. A rendering is reused only while the order keeps
    /// the `updated_at` it was rendered at (every write of an order through a store moves it
    /// forward) and its payout state, so this bounds memory, never freshness. An order changed
    /// in the database by hand must get a later `updated_at` too, or the engines that kept it
    /// show it as it was until it leaves their cache (set 0 where such edits happen).
    pub rendered_orders_bytes: usize,
    /// The sandbox's test mode (default off; the sandbox's `sandbox::config()` turns it
    /// on): the endpoints under `/api/v1/sandbox/` move the caller's own orders as the
    /// platform would and move the engine's clock forward for everyone (an
    /// [`OffsetClock`](crate::clock::OffsetClock) over the engine's clock). Off, those paths
    /// answer `404 not_found` like any unknown path. Never turn it on in production.
    pub test_mode: bool,
    /// Whether an owner's request for API access is approved at once instead of waiting for
    /// the team ([`Owner::request_api_access`](crate::owner::Owner::request_api_access)); default
    /// `false`, the sandbox's `true`.
    pub approve_api_requests: bool,
}

fn has_at_most_two_decimals(value: Decimal) -> bool {
    value.normalize().scale() <= 2
}

impl Default for Config {
    fn default() -> Self {
        Self {
            commission_percent: Decimal::from(4),
            hold_days: crate::model::DEFAULT_HOLD_DAYS,
            withdrawal_minimum: Decimal::new(10_000, 2),
            referral_percent: Decimal::ZERO,
            default_rate_limit: 120,
            body_limit: limits::DEFAULT_BODY_LIMIT,
            order_body_limit: limits::DEFAULT_ORDER_BODY_LIMIT,
            unknown_keys: limits::DEFAULT_UNKNOWN_KEYS,
            unknown_key_life: std::time::Duration::from_secs(
                limits::DEFAULT_UNKNOWN_KEY_LIFE_SECONDS,
            ),
            body_timeout: Some(std::time::Duration::from_secs(30)),
            idempotency_ttl: Duration::hours(24),
            idempotency_stale_after: Duration::minutes(2),
            webhook_urls: UrlPolicy::default(),
            rendered_products_bytes: crate::limits::RENDERED_CACHE_BYTES,
            rendered_orders_bytes: crate::limits::RENDERED_CACHE_BYTES,
            test_mode: false,
            approve_api_requests: false,
        }
    }
}

/// A setting that [`Config::check`] refuses: which one and why.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the setting `{setting}` {problem}")]
#[non_exhaustive]
pub struct ConfigError {
    /// The field of [`Config`] (`commission_percent`, ...), or of the dispatcher's settings
    /// (`DispatcherConfig::check`, feature `webhooks`: `timeout`, `lease`, `idle_wait`).
    pub setting: &'static str,
    /// What is wrong with it, in English.
    pub problem: &'static str,
}

// Longest hold period accepted, in days (ten years): beyond it date arithmetic is the
// problem, not the product.
use crate::domain::earnings::MAX_HOLD_DAYS;

impl Config {
    /// Checks every setting: percentages within 0-100 with at most 2 decimals, amounts
    /// positive with at most 2 decimals, durations and limits positive (the stale time
    /// shorter than the replay time), the hold period within 0-3650 days. The first setting
    /// that is wrong is named. [`EngineBuilder::build`](crate::EngineBuilder::build) calls it.
    ///
    /// ```
    /// # use commerce_core as commerce;
    /// use commerce::config::Config;
    /// use rust_decimal::Decimal;
    ///
    /// let mut config = Config::default();
    /// assert!(config.check().is_ok());
    /// config.commission_percent = Decimal::new(4125, 3); // 4.125
    /// assert_eq!(config.check().unwrap_err().setting, "commission_percent");
    /// ```
    pub fn check(&self) -> Result<(), ConfigError> {
        let fail = |setting, problem| Err(ConfigError { setting, problem });
        for (setting, percent) in [
            ("commission_percent", self.commission_percent),
            ("referral_percent", self.referral_percent),
        ] {
            if percent < Decimal::ZERO || percent > Decimal::ONE_HUNDRED {
                return fail(setting, "must be within 0 and 100");
            }
            if !has_at_most_two_decimals(percent) {
                return fail(setting, "must have at most 2 decimals");
            }
        }
        if self.withdrawal_minimum <= Decimal::ZERO {
            return fail("withdrawal_minimum", "must be positive");
        }
        if !has_at_most_two_decimals(self.withdrawal_minimum) {
            return fail("withdrawal_minimum", "must have at most 2 decimals");
        }
        if !(0..=MAX_HOLD_DAYS).contains(&self.hold_days) {
            return fail("hold_days", "must be within 0 and 3650");
        }
        if self.default_rate_limit == 0 {
            return fail("default_rate_limit", "must be positive");
        }
        if self.body_limit == 0 {
            return fail("body_limit", "must be positive");
        }
        if self.order_body_limit == 0 {
            return fail("order_body_limit", "must be positive");
        }
        if self.unknown_key_life.is_zero() {
            return fail("unknown_key_life", "must be positive");
        }
        if self.body_timeout.is_some_and(|t| t.is_zero()) {
            return fail("body_timeout", "must be positive (or None)");
        }
        if self.idempotency_ttl <= Duration::zero() {
            return fail("idempotency_ttl", "must be positive");
        }
        if self.idempotency_stale_after <= Duration::zero() {
            return fail("idempotency_stale_after", "must be positive");
        }
        if self.idempotency_stale_after >= self.idempotency_ttl {
            return fail(
                "idempotency_stale_after",
                "must be shorter than idempotency_ttl",
            );
        }
        Ok(())
    }

    /// What the store needs to render an order's webhook events under these settings.
    pub fn event_context(&self) -> crate::model::EventContext {
        crate::model::EventContext {
            hold_days: self.hold_days,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused(change: impl FnOnce(&mut Config)) -> &'static str {
        let mut config = Config::default();
        change(&mut config);
        config.check().unwrap_err().setting
    }

    #[test]
    fn the_defaults_pass_and_each_wrong_setting_is_named() {
        assert_eq!(Config::default().check(), Ok(()));
        assert_eq!(
            refused(|c| c.commission_percent = Decimal::new(4125, 3)),
            "commission_percent"
        );
        assert_eq!(
            refused(|c| c.commission_percent = Decimal::new(-1, 0)),
            "commission_percent"
        );
        assert_eq!(
            refused(|c| c.referral_percent = Decimal::new(10001, 2)),
            "referral_percent"
        );
        assert_eq!(
            refused(|c| c.withdrawal_minimum = Decimal::ZERO),
            "withdrawal_minimum"
        );
        assert_eq!(
            refused(|c| c.withdrawal_minimum = Decimal::new(1001, 3)),
            "withdrawal_minimum"
        );
        assert_eq!(refused(|c| c.hold_days = -1), "hold_days");
        assert_eq!(refused(|c| c.hold_days = 3651), "hold_days");
        assert_eq!(refused(|c| c.default_rate_limit = 0), "default_rate_limit");
        assert_eq!(refused(|c| c.body_limit = 0), "body_limit");
        assert_eq!(refused(|c| c.order_body_limit = 0), "order_body_limit");
        assert_eq!(
            refused(|c| c.unknown_key_life = std::time::Duration::ZERO),
            "unknown_key_life"
        );
        assert_eq!(
            refused(|c| c.body_timeout = Some(std::time::Duration::ZERO)),
            "body_timeout"
        );
        assert_eq!(
            refused(|c| c.idempotency_ttl = Duration::zero()),
            "idempotency_ttl"
        );
        assert_eq!(
            refused(|c| c.idempotency_stale_after = Duration::hours(25)),
            "idempotency_stale_after"
        );
    }

    #[test]
    fn trailing_zeros_do_not_count_as_decimals() {
        let config = Config {
            commission_percent: Decimal::new(4500, 3),    // 4.500
            withdrawal_minimum: Decimal::new(100_000, 3), // 100.000
            body_timeout: None,
            hold_days: 0,
            ..Config::default()
        };
        assert_eq!(config.check(), Ok(()));
    }

    /// The way an application loads it: a TOML file, then `COMMERCE_ENGINE__*` variables over
    /// it (figment, the recipe of the docs above), durations written with their unit; what
    /// neither names keeps its default. The prefix holds nothing else: a plain `COMMERCE_`
    /// would also read the tests' own `COMMERCE_TEST_POSTGRES_URL`, an unknown field.
    #[test]
    #[allow(clippy::result_large_err)] // figment's error, in a test
    fn a_config_loads_from_toml_and_the_environment() {
        use figment::providers::{Env, Format, Toml};
        use figment::{Figment, Jail};

        Jail::expect_with(|jail| {
            jail.set_env("COMMERCE_ENGINE__HOLD_DAYS", "7");
            jail.set_env("COMMERCE_ENGINE__BODY_TIMEOUT", "20s");
            jail.set_env("COMMERCE_ENGINE__IDEMPOTENCY_TTL", "12h");
            jail.set_env("COMMERCE_ENGINE__WEBHOOK_URLS__ALLOW_HTTP", "true");
            jail.set_env(
                "COMMERCE_ENGINE__WEBHOOK_URLS__ADDRESSES",
                "public_and_loopback",
            );
            let file = r#"
                hold_days = 30
                commission_percent = 4.5
                withdrawal_minimum = "150.00"
                unknown_key_life = "1m 30s"
                idempotency_stale_after = "5m"
                [webhook_urls]
                nat64_prefixes = ["2001:db8:64::/96"]
            "#;
            let config: Config = Figment::from(Toml::string(file))
                .merge(Env::prefixed("COMMERCE_ENGINE__").split("__"))
                .extract()?;
            assert_eq!(config.hold_days, 7, "the environment over the file");
            assert_eq!(config.commission_percent, Decimal::new(45, 1));
            assert_eq!(config.withdrawal_minimum, Decimal::new(15_000, 2));
            assert_eq!(config.unknown_key_life, std::time::Duration::from_secs(90));
            assert_eq!(
                config.body_timeout,
                Some(std::time::Duration::from_secs(20))
            );
            assert_eq!(config.idempotency_ttl, Duration::hours(12));
            assert_eq!(config.idempotency_stale_after, Duration::minutes(5));
            let prefix = crate::webhooks::Nat64Prefix::parse("2001:db8:64::/96").unwrap();
            let policy = UrlPolicy::SANDBOX
                .with_nat64_prefixes(crate::webhooks::Nat64Prefixes::NONE.with(prefix).unwrap());
            assert_eq!(config.webhook_urls, policy);
            let defaults = Config::default();
            assert_eq!(config.default_rate_limit, defaults.default_rate_limit);
            assert_eq!(config.order_body_limit, defaults.order_body_limit);
            assert!(!config.test_mode);
            assert_eq!(config.check(), Ok(()));
            Ok(())
        });
    }

    /// Nothing given is `Config::default()`; `"none"` turns an optional timeout off; a
    /// misspelt setting, a duration without its unit and a wrong NAT64 prefix are errors
    /// naming what is wrong.
    #[test]
    fn defaults_none_and_refusals() {
        use figment::Figment;
        use figment::providers::{Format, Toml};

        let read = |toml: &str| {
            Figment::from(Toml::string(toml))
                .extract::<Config>()
                .map_err(|error| error.to_string())
        };
        assert_eq!(read("").unwrap(), Config::default());
        assert_eq!(read(r#"body_timeout = "none""#).unwrap().body_timeout, None);
        for (toml, says) in [
            ("hold_dayz = 7", "hold_dayz"),
            ("body_timeout = 30", "such as \"30s\""),
            (r#"idempotency_ttl = "a day""#, "is not a duration"),
            (r#"webhook_urls = { addresses = "private" }"#, "private"),
            (
                r#"webhook_urls = { nat64_prefixes = ["2001:db8::/33"] }"#,
                "32, 40, 48, 56, 64 or 96",
            ),
        ] {
            let error = read(toml).unwrap_err();
            assert!(error.contains(says), "{toml}: {error}");
        }
    }
}
