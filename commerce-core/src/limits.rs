//! The one table of input limits: the input checks (`api/`, `domain/`, [`Operator`](crate::operator::Operator)),
//! the OpenAPI document ([`openapi`](crate::web::openapi)) and the integrator docs (`docs/`, checked
//! by this module's tests) all take their figures from here.
//!
//! The public ones are re-exported where they belong (`domain::fields::MAX_TEXT`,
//! `domain::checkout::MAX_LINES`, `webhooks::MAX_URL`, `store::MAX_WEBHOOKS_PER_ACCOUNT`, ...).
//! Money's cap is [`MAX_AMOUNT`](crate::money::MAX_AMOUNT), with the money rules.

/// Longest `external_reference` and `legacy_number`, in characters.
pub const MAX_REFERENCE: usize = 100;
/// Longest `full_name`, `address`, `store_name` and `store_link`, in characters.
pub const MAX_TEXT: usize = 255;
/// Longest `note`, in characters.
pub const MAX_NOTE: usize = 1000;
/// Longest phone number as typed (before normalising), in characters.
pub const MAX_PHONE: usize = 32;
/// Longest `reason_note` of a cancellation, in characters.
pub const MAX_REASON: usize = 500;
/// Longest `Idempotency-Key`, in characters (printable ASCII).
pub const MAX_IDEMPOTENCY_KEY: usize = 100;
/// Longest `Request-Id` a client may send to have it echoed, in characters (printable ASCII).
pub const MAX_REQUEST_ID: usize = 100;

/// Longest name of an API key, in characters.
pub const MAX_KEY_NAME: usize = 100;
/// Fewest characters of a key's plaintext the platform imports
/// ([`Operator::import_key`](crate::operator::Operator::import_key)); the keys the engine makes have 48.
pub const MIN_KEY_LENGTH: usize = 32;
/// The most live keys (neither revoked nor expired) one account may have; revoked and expired
/// ones do not count.
pub const MAX_LIVE_KEYS: usize = 20;

/// Most lines in one order or quote.
pub const MAX_LINES: usize = 100;
/// Largest quantity of one line.
pub const MAX_QUANTITY: i64 = 999;
/// Most warranties on one line.
pub const MAX_WARRANTIES: usize = 10;

/// Largest `quantity` of a supplier's quote.
pub const MAX_QUOTE_QUANTITY: i64 = 100_000;
/// Largest `unit_price` of a quote, in pounds (`"1000000.00"`): a quote's value
/// (`unit_price` x `quantity`) stays far inside the money columns.
pub const MAX_QUOTE_UNIT_PRICE: i64 = 1_000_000;
/// Longest `note` of a supplier's quote, in characters.
pub const MAX_QUOTE_NOTE: usize = 500;
/// How far ahead a quote's `valid_until` may be, in days.
pub const MAX_QUOTE_DAYS: i64 = 90;

/// Largest step of the sandbox's clock (`POST /sandbox/clock`, `advance_seconds`): 365 days.
pub const MAX_CLOCK_ADVANCE_SECONDS: i64 = 31_536_000;
/// Furthest the sandbox's clock may be ahead of the machine's, all steps together: 3,650 days
/// (ten years of 365 days). Every store keeps working at the bound (the SQL stores hold
/// instants up to the year 2262).
pub const MAX_CLOCK_AHEAD_SECONDS: i64 = 315_360_000;

/// Largest request body by default ([`Config::body_limit`](crate::config::Config::body_limit)), in
/// bytes: 16 KiB, for every endpoint but `POST /orders`.
pub(crate) const DEFAULT_BODY_LIMIT: usize = 16 * 1024;
/// Largest body of `POST /orders` by default
/// ([`Config::order_body_limit`](crate::config::Config::order_body_limit)), in bytes: 256 KiB.
pub(crate) const DEFAULT_ORDER_BODY_LIMIT: usize = 256 * 1024;
/// How many unknown keys an engine remembers by default
/// ([`Config::unknown_keys`](crate::config::Config::unknown_keys)).
pub(crate) const DEFAULT_UNKNOWN_KEYS: usize = 10_000;
/// How long an unknown key is remembered by default, in seconds
/// ([`Config::unknown_key_life`](crate::config::Config::unknown_key_life)).
pub(crate) const DEFAULT_UNKNOWN_KEY_LIFE_SECONDS: u64 = 30;

/// Largest page size (`per_page`).
pub const MAX_PER_PAGE: u32 = 100;

/// Largest `limit` of the catalogue change feed (`GET /catalog/changes`).
pub(crate) const MAX_CHANGES_LIMIT: u32 = 1000;
/// The change feed's `limit` when left out.
pub(crate) const DEFAULT_CHANGES_LIMIT: u32 = 100;
/// Longest change feed cursor (`after`), in characters.
pub(crate) const MAX_CURSOR: usize = 100;
/// How long a change feed cursor stays good, in days: an older one is a 410 `cursor_expired`.
pub(crate) const CURSOR_DAYS: i64 = 30;
/// The least time between two `catalog.changed` events to one endpoint, in seconds: also how
/// often the instance runner derives them.
pub(crate) const CATALOG_CHANGED_SECONDS: u64 = 10;

/// Longest webhook URL, in characters.
pub const MAX_URL: usize = 2048;
/// Longest webhook `description`, in characters.
pub const MAX_DESCRIPTION: usize = 255;
/// The most endpoints one account may register.
pub const MAX_WEBHOOKS_PER_ACCOUNT: usize = 10;
/// The most manual deliveries (pings, redeliveries) pending at once for one endpoint.
pub const MAX_PENDING_MANUAL: usize = 10;

/// Default bound of each rendered-JSON cache, in bytes (64 MiB):
/// [`Config::rendered_orders_bytes`](crate::config::Config::rendered_orders_bytes) and
/// [`Config::rendered_products_bytes`](crate::config::Config::rendered_products_bytes). Each kept
/// rendering counts for its JSON's length plus 256 bytes (its fields, reference counts and
/// slot in the cache).
pub const RENDERED_CACHE_BYTES: usize = 64 * 1024 * 1024;

#[cfg(test)]
mod tests {
    use super::*;

    /// `docs/<file>`, at compile time.
    fn doc(file: &str) -> &'static str {
        match file {
            "orders.md" => include_str!("../../docs/orders.md"),
            "errors.md" => include_str!("../../docs/errors.md"),
            "idempotency.md" => include_str!("../../docs/idempotency.md"),
            "pagination.md" => include_str!("../../docs/pagination.md"),
            "webhooks.md" => include_str!("../../docs/webhooks.md"),
            "sandbox.md" => include_str!("../../docs/sandbox.md"),
            "authentication.md" => include_str!("../../docs/authentication.md"),
            "bad-input.md" => include_str!("../../docs/bad-input.md"),
            _ => unreachable!("{file}"),
        }
    }

    /// Each limit as the docs state it: (file, a text that marks the line, what the line must
    /// say).
    fn stated() -> Vec<(&'static str, &'static str, String)> {
        vec![
            (
                "orders.md",
                "| `external_reference` |",
                format!("up to {MAX_REFERENCE} characters"),
            ),
            (
                "orders.md",
                "| `full_name` |",
                format!("up to {MAX_TEXT} characters"),
            ),
            (
                "orders.md",
                "| `address` |",
                format!("up to {MAX_TEXT} characters"),
            ),
            (
                "orders.md",
                "| `store_name` |",
                format!("up to {MAX_TEXT} characters"),
            ),
            (
                "orders.md",
                "| `store_link` |",
                format!("up to {MAX_TEXT} characters"),
            ),
            (
                "orders.md",
                "| `note` |",
                format!("up to {MAX_NOTE} characters"),
            ),
            (
                "orders.md",
                "| `reason_note` |",
                format!("up to {MAX_REASON} characters"),
            ),
            (
                "orders.md",
                "| `lines` |",
                format!("1 to {MAX_LINES} lines"),
            ),
            (
                "orders.md",
                "| `quantity` |",
                format!("1 to {MAX_QUANTITY},"),
            ),
            (
                "orders.md",
                "| `warranty_ids` |",
                format!("up to {MAX_WARRANTIES};"),
            ),
            (
                "errors.md",
                "| `lines` |",
                format!("more than {MAX_LINES} items"),
            ),
            (
                "errors.md",
                "| `lines.0.warranty_ids` |",
                format!("more than {MAX_WARRANTIES})"),
            ),
            (
                "errors.md",
                "| `Idempotency-Key` |",
                format!("1 to {MAX_IDEMPOTENCY_KEY} printable ASCII characters"),
            ),
            (
                "idempotency.md",
                "| Form |",
                format!("1 to {MAX_IDEMPOTENCY_KEY} printable ASCII characters"),
            ),
            (
                "pagination.md",
                "| `per_page` |",
                format!("1 to {MAX_PER_PAGE} |"),
            ),
            (
                "webhooks.md",
                "| `url` |",
                format!("up to {MAX_URL} characters"),
            ),
            (
                "webhooks.md",
                "| `description` |",
                format!("up to {MAX_DESCRIPTION} characters"),
            ),
            (
                "sandbox.md",
                "| `POST /api/v1/sandbox/clock` |",
                format!("{{\"advance_seconds\": 1..{MAX_CLOCK_ADVANCE_SECONDS}}}"),
            ),
            (
                "sandbox.md",
                "`advance_seconds` is an integer from 1 to",
                format!("1 to {}", group_thousands(MAX_CLOCK_ADVANCE_SECONDS)),
            ),
            (
                "sandbox.md",
                "ahead of the machine's clock in total",
                format!("{} seconds", group_thousands(MAX_CLOCK_AHEAD_SECONDS)),
            ),
            (
                "webhooks.md",
                "An account may register at most",
                format!("at most {MAX_WEBHOOKS_PER_ACCOUNT} webhooks"),
            ),
            (
                "authentication.md",
                "An account may have at most",
                format!("at most {MAX_LIVE_KEYS} live keys"),
            ),
            (
                "authentication.md",
                "`import_key`",
                format!("at least {MIN_KEY_LENGTH} characters"),
            ),
            (
                "bad-input.md",
                "**Oversized body, declared**",
                format!(
                    "`POST /orders`, {} KiB by default; `Config::body_limit` for every other endpoint, {} KiB by default",
                    DEFAULT_ORDER_BODY_LIMIT / 1024,
                    DEFAULT_BODY_LIMIT / 1024
                ),
            ),
            (
                "authentication.md",
                "remembered as unknown for",
                format!("for {DEFAULT_UNKNOWN_KEY_LIFE_SECONDS} seconds"),
            ),
            (
                "authentication.md",
                "10,000 of them",
                format!(
                    "{} of them",
                    group_thousands(i64::try_from(DEFAULT_UNKNOWN_KEYS).unwrap_or(i64::MAX))
                ),
            ),
            (
                "errors.md",
                "| `key_limit` |",
                format!("{MAX_LIVE_KEYS} live keys"),
            ),
        ]
    }

    /// `31536000` as prose writes it: `31,536,000`.
    fn group_thousands(n: i64) -> String {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i).is_multiple_of(3) {
                out.push(',');
            }
            out.push(c);
        }
        out
    }

    #[test]
    fn the_docs_state_the_limits_of_this_table() {
        let mut wrong = Vec::new();
        for (file, marker, says) in stated() {
            let lines: Vec<&str> = doc(file).lines().filter(|l| l.contains(marker)).collect();
            if lines.is_empty() {
                wrong.push(format!("docs/{file}: no line with {marker:?}"));
            } else if !lines.iter().any(|l| l.contains(&says)) {
                wrong.push(format!(
                    "docs/{file}: the line of {marker:?} does not say {says:?}"
                ));
            }
        }
        assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    }
}
