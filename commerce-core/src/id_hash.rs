//! A fast hasher for the in-process sets and caches keyed by ids (integers the store numbers,
//! never chosen by a client, so there is no flooding to guard against): a rotate, a xor and a
//! multiply per word (FxHash, rustc's hasher), where the standard SipHash costs tens of
//! instructions per key. `GET /products` looks up each product of its page twice (the
//! products already billed, the rendered-product cache).

use std::hash::{BuildHasherDefault, Hasher};

/// The [`BuildHasher`](std::hash::BuildHasher) of [`IdHasher`].
pub(crate) type IdHash = BuildHasherDefault<IdHasher>;

/// FxHash over the words of a key.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct IdHasher {
    hash: u64,
}

/// FxHash's multiplier.
const SEED: u64 = 0x51_7c_c1_b7_27_22_0a_95;

impl IdHasher {
    fn add(&mut self, word: u64) {
        self.hash = (self.hash.rotate_left(5) ^ word).wrapping_mul(SEED);
    }
}

impl Hasher for IdHasher {
    fn write(&mut self, bytes: &[u8]) {
        for chunk in bytes.chunks(8) {
            let mut word = [0_u8; 8];
            word[..chunk.len()].copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u32(&mut self, n: u32) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_i64(&mut self, n: i64) {
        self.add(n as u64);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        // The table takes its bucket from the low bits: bring the well-mixed high bits down.
        self.hash.rotate_left(26)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashSet;
    use std::hash::BuildHasher;

    #[test]
    fn spreads_consecutive_ids_and_tells_pairs_apart() {
        let build = IdHash::default();
        let ids = (1_i64..=10_000).map(|id| build.hash_one(id));
        let pairs = (1_i64..=10_000).map(|id| build.hash_one((7_i64, id)));
        for (what, hashes) in [("ids", ids.collect::<Vec<_>>()), ("pairs", pairs.collect())] {
            assert_eq!(
                hashes.iter().collect::<HashSet<_>>().len(),
                10_000,
                "{what}"
            );
            // In a 1,024-bucket table (the low bits) no bucket holds 3 times its share.
            let mut buckets = vec![0_u32; 1_024];
            for hash in &hashes {
                buckets[(hash & 1_023) as usize] += 1;
            }
            let fullest = buckets.iter().max().copied().unwrap_or_default();
            assert!(fullest < 30, "{what}: a bucket of {fullest}");
        }
        assert_ne!(
            build.hash_one((1_i64, 2_i64)),
            build.hash_one((2_i64, 1_i64))
        );
    }
}
