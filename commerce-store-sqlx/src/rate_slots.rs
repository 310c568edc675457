//! A key's per-minute count split over a few rows ("slots"), so that the concurrent requests
//! of one key do not all queue on one row lock.
//!
//! The limit is divided between the slots (`limit / n`, the first `limit % n` slots one more);
//! a request counts in a slot only while that slot is under its share, trying the slots from a
//! random one onwards, and is refused only when every slot is full. So the slots together never
//! count more than the limit, and a key sending more than its limit gets exactly the limit:
//! within a window a slot only fills, so "every slot full" means the limit was reached.

use std::collections::{HashMap, HashSet};

use commerce_core::model::KeyHash;
use std::sync::Mutex;

/// Requests a minute per slot: a key gets one more slot per this many, up to the store's
/// maximum. Keys under it (the default limit is 120) count in one row, where `used` is exact
/// for every request; only keys allowed thousands of requests a minute, whose concurrent
/// requests would queue on one row, are split.
pub(crate) const PER_SLOT: u32 = 1_000;

/// The slots of a key whose limit is `limit`, when a store uses up to `max` slots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Slots {
    limit: u32,
    count: u32,
}

impl Slots {
    /// One slot per [`PER_SLOT`] requests a minute, at least one, at most `max`.
    pub(crate) fn new(limit: u32, max: u32) -> Self {
        Self {
            limit,
            count: (limit / PER_SLOT).clamp(1, max.max(1)),
        }
    }

    /// The key's limit.
    pub(crate) fn limit(self) -> u32 {
        self.limit
    }

    /// How many slots the key has.
    pub(crate) fn count(self) -> u32 {
        self.count
    }

    /// How many requests slot `slot` may count.
    pub(crate) fn share(self, slot: u32) -> u32 {
        self.limit / self.count + u32::from(slot < self.limit % self.count)
    }

    /// Every slot once, starting at `start` (any number; reduced modulo the count).
    pub(crate) fn from(self, start: u32) -> impl Iterator<Item = u32> {
        (0..self.count).map(move |i| (start % self.count + i) % self.count)
    }
}

/// The windows this process saw full, per key, with the limit they were full at and the count
/// then: a request of a key whose window is full at that limit or a lower one is refused
/// without a statement (slots only fill within a window, so a full window stays full; a raised
/// limit counts again).
#[derive(Debug, Default)]
pub(crate) struct FullWindows {
    full: Mutex<HashMap<i64, Full>>,
}

#[derive(Debug, Clone, Copy)]
struct Full {
    window: i64,
    limit: u32,
    used: u32,
}

impl FullWindows {
    /// The count `key`'s window `window` had when it was seen full at `limit` or more.
    pub(crate) fn full(&self, key: i64, window: i64, limit: u32) -> Option<u32> {
        self.full
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
            .filter(|f| f.window == window && limit <= f.limit)
            .map(|f| f.used)
    }

    /// Remembers that `key`'s window `window` is full at `limit`, holding `used`.
    pub(crate) fn mark_full(&self, key: i64, window: i64, limit: u32, used: u32) {
        let mut full = self.full.lock().unwrap_or_else(|e| e.into_inner());
        if full.len() > 100_000 {
            full.retain(|_, f| f.window >= window);
        }
        full.insert(
            key,
            Full {
                window,
                limit,
                used,
            },
        );
    }
}

/// What one visit to a key's window in the database did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum RateOutcome {
    /// `tokens` requests were leased; the window then counted `counted`.
    Leased {
        /// Requests leased.
        tokens: u32,
        /// The window's count after the lease.
        counted: u32,
    },
    /// One request was counted, or refused.
    Counted(commerce_core::store::RateLimitHit),
}

/// The most requests leased at once: a lease is at most this share of a minute's limit lost
/// per instance (0.1% at a million a minute), and one write per this many requests. Each write
/// costs more than its own statement on SQLite: every other connection's next read finds the
/// database changed, drops its page cache and unmaps its memory-mapped file (BENCHMARKS.md,
/// `http_sql`), so a key sending thousands of requests a second writes rarely.
pub(crate) const MAX_LEASE: u32 = 1_024;

/// Requests leased at once by a key allowed `limit` a minute: 1 (counted one by one) under
/// [`PER_SLOT`], else one per [`PER_SLOT`] a minute, at most [`MAX_LEASE`].
pub(crate) fn lease_size(limit: u32) -> u32 {
    if limit < PER_SLOT {
        1
    } else {
        (limit / PER_SLOT).clamp(1, MAX_LEASE)
    }
}

/// Requests of high-volume keys this process leased from their window and has not handed out
/// yet. A lease is counted in the database when taken, so the window never allows more than
/// the limit; what a process leased and did not use by the end of the minute (or when it
/// stops) is simply not used, so with several processes a key may get up to one lease per
/// process less than its limit in a minute. One process alone hands out exactly the limit.
#[derive(Debug, Default)]
pub(crate) struct Leases {
    leases: Mutex<HashMap<i64, Lease>>,
    /// Hashes of keys last seen allowed [`PER_SLOT`] or more a minute: which way to count a
    /// request of theirs (never whether it is allowed; the key is read on every request).
    high_volume: Mutex<HashSet<KeyHash>>,
}

#[derive(Debug, Clone, Copy)]
struct Lease {
    window: i64,
    limit: u32,
    /// Requests left to hand out.
    tokens: u32,
    /// The window's count in the database after the last lease.
    counted: u32,
}

impl Leases {
    /// Whether the key with this hash was last seen as a high-volume key.
    pub(crate) fn is_high_volume(&self, hash: &KeyHash) -> bool {
        self.high_volume
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .contains(hash)
    }

    /// Remembers the key with this hash as a high-volume key.
    pub(crate) fn mark_high_volume(&self, hash: KeyHash) {
        let mut keys = self.high_volume.lock().unwrap_or_else(|e| e.into_inner());
        if keys.len() > 100_000 {
            keys.clear();
        }
        keys.insert(hash);
    }

    /// Forgets the key with this hash as a high-volume key (its limit was lowered).
    pub(crate) fn forget_high_volume(&self, hash: &KeyHash) {
        self.high_volume
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(hash);
    }

    /// Hands out one leased request of `key`'s window `window` at `limit`: the window's count
    /// with it (the database's count less what is still leased here), or `None`.
    pub(crate) fn take(&self, key: i64, window: i64, limit: u32) -> Option<u32> {
        let mut leases = self.leases.lock().unwrap_or_else(|e| e.into_inner());
        let lease = leases.get_mut(&key)?;
        if lease.window != window || lease.limit != limit || lease.tokens == 0 {
            return None;
        }
        lease.tokens -= 1;
        Some(lease.counted.saturating_sub(lease.tokens))
    }

    /// Adds `tokens` leased in `key`'s window `window` at `limit`, after which the database
    /// counted `counted` in the window.
    pub(crate) fn grant(&self, key: i64, window: i64, limit: u32, tokens: u32, counted: u32) {
        let mut leases = self.leases.lock().unwrap_or_else(|e| e.into_inner());
        if leases.len() > 100_000 {
            leases.retain(|_, l| l.window >= window);
        }
        let lease = leases.entry(key).or_insert(Lease {
            window,
            limit,
            tokens: 0,
            counted: 0,
        });
        if lease.window != window || lease.limit != limit {
            *lease = Lease {
                window,
                limit,
                tokens: 0,
                counted: 0,
            };
        }
        lease.tokens += tokens;
        // Concurrent leases may land in any order; each count includes its own lease.
        lease.counted = lease.counted.max(counted);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shares_add_up_to_the_limit() {
        for limit in [1, 2, 7, 120, 999, 1_000, 2_500, 7_999, 8_000, 1_000_000] {
            for max in [1, 4, 8] {
                let slots = Slots::new(limit, max);
                let total: u32 = slots.from(0).map(|s| slots.share(s)).sum();
                assert_eq!(total, limit, "{limit} over {max}");
                assert!(slots.from(0).all(|s| slots.share(s) >= 1));
            }
        }
    }

    #[test]
    fn one_slot_per_thousand_a_minute() {
        assert_eq!(Slots::new(120, 8).from(0).count(), 1);
        assert_eq!(Slots::new(0, 8).from(0).count(), 1);
        assert_eq!(Slots::new(2_500, 8).from(0).count(), 2);
        assert_eq!(Slots::new(1_000_000, 8).from(0).count(), 8);
        assert_eq!(Slots::new(1_000_000, 1).from(0).count(), 1);
    }

    #[test]
    fn every_slot_is_tried_once_from_any_start() {
        let slots = Slots::new(20_000, 8);
        for start in [0, 5, 13, u32::MAX] {
            let mut seen: Vec<u32> = slots.from(start).collect();
            seen.sort_unstable();
            assert_eq!(seen, (0..8).collect::<Vec<_>>());
        }
    }

    #[test]
    fn leases_hand_out_what_was_leased_and_no_more() {
        assert_eq!(lease_size(120), 1);
        assert_eq!(lease_size(3_000), 3);
        assert_eq!(lease_size(1_000_000), 1_000);
        assert_eq!(lease_size(u32::MAX), MAX_LEASE);
        let leases = Leases::default();
        assert_eq!(leases.take(1, 100, 3_000), None);
        leases.grant(1, 100, 3_000, 3, 3);
        assert_eq!(leases.take(1, 100, 3_000), Some(1));
        assert_eq!(leases.take(1, 100, 2_000), None, "another limit");
        assert_eq!(leases.take(1, 101, 3_000), None, "another window");
        assert_eq!(leases.take(1, 100, 3_000), Some(2));
        assert_eq!(leases.take(1, 100, 3_000), Some(3));
        assert_eq!(leases.take(1, 100, 3_000), None, "used up");
        // Another process leased 10 meanwhile: this lease of 3 leaves the window at 16.
        leases.grant(1, 100, 3_000, 3, 16);
        assert_eq!(leases.take(1, 100, 3_000), Some(14));
        leases.grant(1, 101, 3_000, 3, 3);
        assert_eq!(
            leases.take(1, 100, 3_000),
            None,
            "a new window drops the old lease"
        );
    }

    #[test]
    fn full_windows_are_per_key_window_and_limit() {
        let full = FullWindows::default();
        full.mark_full(1, 100, 20, 20);
        assert_eq!(full.full(1, 100, 20), Some(20));
        assert_eq!(full.full(1, 100, 10), Some(20), "a lower limit is full too");
        assert_eq!(full.full(1, 100, 21), None, "a raised limit counts again");
        assert_eq!(full.full(1, 101, 20), None);
        assert_eq!(full.full(2, 100, 20), None);
    }
}
