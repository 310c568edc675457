//! The keys and accounts this process last read for a key check (PostgreSQL), kept by
//! reference count with their rows' versions: a row's `xmin`, the transaction that wrote its
//! current version, which every `UPDATE` (by any process) replaces. A check of a kept key
//! then reads the two versions alone, and the whole rows only when either changed, when the
//! record is older than [`KEPT_FOR`], or when the key is not kept.
//!
//! `xmin` is the (sub)transaction that wrote the version: a write inside a savepoint carries
//! the subtransaction's own id. Row locks (`FOR UPDATE`, `FOR NO KEY UPDATE`, `FOR SHARE`, the
//! foreign keys' `FOR KEY SHARE`) set `xmax` only and are no change; `VACUUM FREEZE` and
//! `VACUUM FULL` keep `xmin` (and change nothing read). Two committed versions of a row never
//! share an `xmin` (a (sub)transaction's last write of a row is the only version of it others
//! see), except when transaction ids are used again: after the counter wraps around, 2^32
//! transactions later, or after a point-in-time recovery or a failover to a standby that had
//! not received the last transactions (the ids after its last one are handed out again). In
//! both cases [`KEPT_FOR`] bounds how long a kept record can be served.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use commerce_core::model::{Account, ApiKey, KeyHash};

use crate::dialect::*;
use crate::rows::{AuthRow, account_aliases};

/// How long a record is served on its versions before it is read whole again.
pub(crate) const KEPT_FOR: Duration = Duration::from_secs(60);

/// The most keys kept; past it, the kept ones are dropped and read again as they are used.
const MAX_KEPT: usize = 4_096;

/// The versions of a key's row and of its account's row (`None`: no account row).
pub(crate) type Versions = (i64, Option<i64>);

/// A key and its account as one check read them, with their rows' versions.
#[derive(Debug, Clone)]
pub(crate) struct KeptRecords {
    /// The rows' versions when they were read.
    pub(crate) versions: Versions,
    /// The key.
    pub(crate) key: Arc<ApiKey>,
    /// Its account, when its row exists.
    pub(crate) account: Option<Arc<Account>>,
    read_at: Instant,
}

/// The records of the keys this process checked, by key hash.
#[derive(Debug, Default)]
pub(crate) struct AuthRecords(Mutex<HashMap<KeyHash, KeptRecords>>);

impl AuthRecords {
    /// The records kept for `hash`, unless they are older than [`KEPT_FOR`].
    pub(crate) fn get(&self, hash: &KeyHash) -> Option<KeptRecords> {
        let kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        kept.get(hash)
            .filter(|k| k.read_at.elapsed() < KEPT_FOR)
            .cloned()
    }

    /// Keeps `key` and `account` as read at `versions`.
    pub(crate) fn keep(
        &self,
        hash: KeyHash,
        versions: Versions,
        key: Arc<ApiKey>,
        account: Option<Arc<Account>>,
    ) {
        let mut kept = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        if kept.len() >= MAX_KEPT && !kept.contains_key(&hash) {
            kept.clear();
        }
        let read_at = Instant::now();
        kept.insert(
            hash,
            KeptRecords {
                versions,
                key,
                account,
                read_at,
            },
        );
    }

    /// Forgets the records of `hash` (its key is gone).
    pub(crate) fn forget(&self, hash: &KeyHash) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(hash);
    }
}

/// The versions of the key's row and of its account's row, as `k_version` and `a_version`.
macro_rules! versions {
    () => {
        "CAST(CAST(k.xmin AS TEXT) AS BIGINT) AS k_version, \
         CAST(CAST(a.xmin AS TEXT) AS BIGINT) AS a_version"
    };
}

/// The key with the hash `$1` and its account (`AuthRow`'s columns, nothing counted).
pub(crate) const KEY_AND_ACCOUNT: &str = concat!(
    "SELECT k.*, ",
    account_aliases!(),
    ", NULL AS counted, NULL AS seen FROM api_keys k \
     LEFT JOIN accounts a ON a.id = k.account_id WHERE k.hash = $1"
);

/// [`KEY_AND_ACCOUNT`] with the rows' versions after its columns (PostgreSQL).
pub(crate) const KEY_AND_ACCOUNT_VERSIONED: &str = concat!(
    "SELECT k.*, ",
    account_aliases!(),
    ", NULL AS counted, NULL AS seen, ",
    versions!(),
    " FROM api_keys k LEFT JOIN accounts a ON a.id = k.account_id WHERE k.hash = $1"
);

/// The rows' versions alone (PostgreSQL).
pub(crate) const VERSIONS: &str = concat!(
    "SELECT ",
    versions!(),
    " FROM api_keys k LEFT JOIN accounts a ON a.id = k.account_id WHERE k.hash = $1"
);

/// An [`AuthRow`] with the rows' versions after its columns.
pub(crate) struct VersionedAuthRow;

impl<DB: Dialect> FromDbRow<DB> for VersionedAuthRow {
    type Output = (AuthRow, Versions);

    fn from_db_row(row: &DB::Row) -> Result<Self::Output, sqlx::Error> {
        let auth = <AuthRow as FromDbRow<DB>>::from_db_row(row)?;
        // After the key's 9 columns, the account's 11, `counted` and `seen`.
        let key_version = col_at::<DB, i64>(row, 22, "k_version")?;
        let account_version = col_at::<DB, Option<i64>>(row, 23, "a_version")?;
        Ok((auth, (key_version, account_version)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use commerce_core::chrono::{TimeZone, Utc};
    use commerce_core::model::{KeyId, NewKeyRecord};

    fn key(hash: KeyHash) -> Arc<ApiKey> {
        let now = Utc.timestamp_opt(1_800_000_000, 0).unwrap();
        Arc::new(
            NewKeyRecord::builder()
                .account_id(commerce_core::model::AccountId::new(1))
                .name("k".into())
                .hash(hash)
                .abilities(vec![])
                .expires_at(None)
                .rate_limit(1_000_000)
                .build()
                .into_key(KeyId::new(1), now),
        )
    }

    fn hash(i: usize) -> KeyHash {
        let mut h = [0; 32];
        h[..8].copy_from_slice(&(i as u64).to_le_bytes());
        h
    }

    #[test]
    fn records_older_than_kept_for_are_not_served() {
        let records = AuthRecords::default();
        let h = hash(1);
        records.keep(h, (1, Some(2)), key(h), None);
        assert!(records.get(&h).is_some());
        records.0.lock().unwrap().get_mut(&h).unwrap().read_at =
            Instant::now() - KEPT_FOR - Duration::from_millis(1);
        assert!(
            records.get(&h).is_none(),
            "a record past KEPT_FOR is read whole again"
        );
    }

    #[test]
    fn at_most_max_kept_records_are_kept() {
        let records = AuthRecords::default();
        for i in 0..MAX_KEPT * 3 {
            let h = hash(i);
            records.keep(h, (1, None), key(h), None);
            assert!(records.0.lock().unwrap().len() <= MAX_KEPT);
        }
        // A kept key kept again does not clear the others.
        let full = records.0.lock().unwrap().len();
        let last = hash(MAX_KEPT * 3 - 1);
        records.keep(last, (2, None), key(last), None);
        assert_eq!(records.0.lock().unwrap().len(), full);
        records.forget(&last);
        assert!(records.get(&last).is_none());
    }
}
