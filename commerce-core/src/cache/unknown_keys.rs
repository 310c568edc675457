//! The keys an engine found unknown lately: bearer tokens whose hash no store holds,
//! remembered for a short life ([`Config::unknown_key_life`](crate::config::Config::unknown_key_life))
//! so that a flood of made-up keys costs one store query per key, not one per request.
//!
//! Why a remembered miss may stand without asking the store again: a key the platform
//! creates has a fresh random plaintext (about 238 bits), so its hash is one no client can
//! have sent before it existed; a remembered miss never hides it. Only an *imported* key
//! ([`Operator::import_key`](crate::operator::Operator::import_key)) has a plaintext a client may have
//! sent earlier: the engine that imports it forgets the miss at once, and every other engine
//! at the end of the miss's life.

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;

use chrono::{DateTime, Utc};

use crate::model::KeyHash;

/// A bounded set of unknown key hashes, each with the instant it stops counting.
pub(crate) struct UnknownKeys {
    capacity: usize,
    life: chrono::Duration,
    inner: Mutex<Remembered>,
}

#[derive(Default)]
struct Remembered {
    /// Each hash's end of life.
    until: HashMap<KeyHash, DateTime<Utc>>,
    /// The hashes in the order they were remembered (so in order of their end of life).
    order: VecDeque<(KeyHash, DateTime<Utc>)>,
}

impl Remembered {
    /// Forgets the oldest entry; `false` when there is none.
    fn drop_oldest(&mut self) -> bool {
        let Some((hash, until)) = self.order.pop_front() else {
            return false;
        };
        // A hash remembered again later has a later end: only its own entry removes it.
        if self.until.get(&hash) == Some(&until) {
            self.until.remove(&hash);
        }
        true
    }
}

impl UnknownKeys {
    /// Remembers up to `capacity` hashes (0: none), each for `life`.
    pub(crate) fn new(capacity: usize, life: std::time::Duration) -> Self {
        Self {
            capacity,
            life: chrono::Duration::from_std(life).unwrap_or(chrono::Duration::MAX),
            inner: Mutex::new(Remembered::default()),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Remembered> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `hash` was found unknown less than its life before `now`.
    pub(crate) fn is_unknown(&self, hash: &KeyHash, now: DateTime<Utc>) -> bool {
        self.capacity > 0
            && self
                .lock()
                .until
                .get(hash)
                .is_some_and(|until| now < *until)
    }

    /// Remembers that no store knew `hash` at `now`.
    pub(crate) fn remember(&self, hash: KeyHash, now: DateTime<Utc>) {
        if self.capacity == 0 {
            return;
        }
        let until = now
            .checked_add_signed(self.life)
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
        let mut remembered = self.lock();
        while remembered.order.front().is_some_and(|(_, end)| *end <= now)
            && remembered.drop_oldest()
        {}
        while remembered.order.len() >= self.capacity && remembered.drop_oldest() {}
        remembered.until.insert(hash, until);
        remembered.order.push_back((hash, until));
    }

    /// Forgets `hash`: a key with it was just stored.
    pub(crate) fn forget(&self, hash: &KeyHash) {
        self.lock().until.remove(hash);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use std::time::Duration;

    fn at(seconds: i64) -> DateTime<Utc> {
        Utc.timestamp_opt(1_800_000_000 + seconds, 0).unwrap()
    }

    #[test]
    fn a_miss_lasts_its_life_and_is_forgotten_on_demand() {
        let keys = UnknownKeys::new(10, Duration::from_secs(30));
        keys.remember([1; 32], at(0));
        assert!(keys.is_unknown(&[1; 32], at(29)));
        assert!(!keys.is_unknown(&[1; 32], at(30)));
        assert!(!keys.is_unknown(&[2; 32], at(0)));
        keys.forget(&[1; 32]);
        assert!(!keys.is_unknown(&[1; 32], at(1)));
    }

    #[test]
    fn the_oldest_goes_first_when_full_and_none_are_kept_at_zero() {
        let keys = UnknownKeys::new(3, Duration::from_secs(30));
        for i in 0..5u8 {
            keys.remember([i; 32], at(i.into()));
        }
        let kept: Vec<bool> = (0..5u8).map(|i| keys.is_unknown(&[i; 32], at(5))).collect();
        assert_eq!(kept, [false, false, true, true, true]);
        assert!(keys.lock().until.len() <= 3 && keys.lock().order.len() <= 3);
        let none = UnknownKeys::new(0, Duration::from_secs(30));
        none.remember([1; 32], at(0));
        assert!(!none.is_unknown(&[1; 32], at(0)));
    }

    #[test]
    fn expired_entries_leave_before_new_ones_come() {
        let keys = UnknownKeys::new(100, Duration::from_secs(30));
        for i in 0..50u8 {
            keys.remember([i; 32], at(0));
        }
        keys.remember([200; 32], at(31));
        assert_eq!(keys.lock().order.len(), 1);
        assert_eq!(keys.lock().until.len(), 1);
    }
}
