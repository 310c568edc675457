//! The rules of a new API key, whoever creates it: the platform ([`Operator`](crate::operator::Operator))
//! or the account's owner ([`Owner`](crate::owner::Owner), its pages). Both check a [`KeySpec`] here
//! and report a [`FieldProblem`] per field that breaks a rule, with the same Arabic message;
//! both mint the key here (its prefix, its random part, the hash a store keeps).

use chrono::{DateTime, Utc};

use super::fields::{TextKind, clean_text};
pub use crate::limits::MAX_KEY_NAME;
use crate::model::{Ability, FieldProblem, Problem, Side};

/// The minting of a key: its prefix, its random part and the hash a store keeps. Public at the
/// crate's root (`KEY_PREFIX`, `TEST_KEY_PREFIX`, `hash_key`), so that each has one path.
pub(crate) mod mint {
    use rand::Rng;
    use rand::distr::Alphanumeric;
    use sha2::{Digest, Sha256};

    use crate::model::KeyHash;

    /// The recognisable prefix of generated keys (the prefix of a key created by an engine in the
    /// sandbox's test mode is [`TEST_KEY_PREFIX`]).
    pub const KEY_PREFIX: &str = "sk_live_";

    /// The prefix of keys created by an engine in the sandbox's test mode
    /// ([`Config::test_mode`](crate::config::Config::test_mode)): a sandbox key is never taken for a live
    /// one.
    pub const TEST_KEY_PREFIX: &str = "sk_test_";

    /// SHA-256 of a key's plaintext: the only form a store keeps.
    pub fn hash_key(plaintext: &str) -> KeyHash {
        Sha256::digest(plaintext.as_bytes()).into()
    }

    /// A new random key: `prefix` ([`KEY_PREFIX`] or [`TEST_KEY_PREFIX`]) and 40 alphanumeric
    /// characters (about 238 bits).
    pub(crate) fn generate_key(prefix: &str) -> String {
        let random: String = rand::rng()
            .sample_iter(&Alphanumeric)
            .take(40)
            .map(char::from)
            .collect();
        format!("{prefix}{random}")
    }
}
pub(crate) use mint::{KEY_PREFIX, TEST_KEY_PREFIX, generate_key, hash_key};

/// What a new key is allowed: [`KeySpec::new`] (`expires_at` `None`: no expiry; `rate_limit`
/// `None`: the engine's default limit).
///
/// Checked when the key is created: `name` required, printable, trimmed, at most
/// [`MAX_KEY_NAME`] characters (for everyone); for an owner, `abilities` only of the account's
/// side and at least one, and `expires_at` later than now.
#[derive(Debug, Clone, PartialEq, Default)]
#[non_exhaustive]
pub struct KeySpec {
    /// Name shown to the owner.
    pub name: String,
    /// Abilities.
    pub abilities: Vec<Ability>,
    /// Expiry, if any.
    pub expires_at: Option<DateTime<Utc>>,
    /// Own per-minute limit (`None`: the engine's default, 120).
    pub rate_limit: Option<u32>,
}

/// Who creates a key, for [`KeySpec::check`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum KeyMaker {
    /// The platform: any abilities, any expiry (imports and fixtures may carry expired keys).
    Platform,
    /// The account's owner, of this side at this instant: only the side's abilities
    /// ([`Ability::for_side`]), at least one when the side has any, and an expiry later than now.
    Owner {
        /// The account's side.
        side: Side,
        /// Now.
        now: DateTime<Utc>,
    },
}

impl KeySpec {
    /// A `KeySpec` of its fields, in their order.
    pub fn new(
        name: String,
        abilities: Vec<Ability>,
        expires_at: Option<DateTime<Utc>>,
        rate_limit: Option<u32>,
    ) -> Self {
        Self {
            name,
            abilities,
            expires_at,
            rate_limit,
        }
    }

    /// The spec as stored, or every problem found: `name` required, printable, trimmed, at
    /// most [`MAX_KEY_NAME`] characters (for everyone); for an owner, `abilities` only of the
    /// account's side and at least one, and `expires_at` later than now.
    pub(crate) fn check(mut self, maker: KeyMaker) -> Result<Self, Vec<FieldProblem>> {
        let mut problems = Vec::new();
        let mut note = |field: &str, problem: Problem| {
            problems.push(FieldProblem {
                field: field.to_owned(),
                problem,
            });
        };
        match clean_text(&self.name, MAX_KEY_NAME, TextKind::SingleLine) {
            Ok(Some(name)) => self.name = name,
            Ok(None) => note("name", Problem::Required),
            Err(problem) => note("name", problem),
        }
        let mut seen = Vec::new();
        self.abilities.retain(|a| {
            let first = !seen.contains(a);
            seen.push(*a);
            first
        });
        if let KeyMaker::Owner { side, now } = maker {
            let allowed = Ability::for_side(side);
            if self.abilities.iter().any(|a| !allowed.contains(a)) {
                note("abilities", Problem::UnknownValue);
            } else if self.abilities.is_empty() && !allowed.is_empty() {
                note("abilities", Problem::Required);
            }
            if self.expires_at.is_some_and(|at| at <= now) {
                note("expires_at", Problem::NotInFuture);
            }
        }
        if problems.is_empty() {
            Ok(self)
        } else {
            Err(problems)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn generated_keys_are_prefixed_and_distinct() {
        let a = generate_key(KEY_PREFIX);
        let b = generate_key(KEY_PREFIX);
        assert!(a.starts_with(KEY_PREFIX));
        assert_eq!(a.len(), KEY_PREFIX.len() + 40);
        assert_ne!(a, b);
        assert_ne!(hash_key(&a), hash_key(&b));
        let test = generate_key(TEST_KEY_PREFIX);
        assert!(test.starts_with(TEST_KEY_PREFIX));
        assert_eq!(test.len(), a.len());
    }
}
