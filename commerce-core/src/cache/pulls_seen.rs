//! The products an account was already billed for pulling this month, remembered in process so
//! that a catalogue read whose products are all recorded writes nothing (the meter counts each
//! product once per account and month: docs/billing.md).
//!
//! Only a shortcut: [`MeterStore::record_pulls`](crate::store::MeterStore::record_pulls) is idempotent, so
//! forgetting (a new month, the size cap, another process) only costs a write, and two requests
//! racing past it record the same rows once.

use rustc_hash::FxBuildHasher;
use std::collections::HashSet;
use std::sync::Mutex;

use crate::model::{AccountId, BillingMonth, ProductId};

/// Pairs remembered before the set is emptied and starts again.
const CAPACITY: usize = 200_000;

/// `(account, product)` pairs recorded in one month.
#[derive(Debug, Default)]
pub(crate) struct PullsSeen {
    inner: Mutex<Month>,
}

#[derive(Debug, Default)]
struct Month {
    /// `None` before the first record.
    month: Option<BillingMonth>,
    seen: HashSet<(AccountId, ProductId), FxBuildHasher>,
}

impl PullsSeen {
    /// The products of `products` not known to be recorded for `account` in `month`.
    pub(crate) fn unseen(
        &self,
        account: AccountId,
        month: &BillingMonth,
        products: &[ProductId],
    ) -> Vec<ProductId> {
        let inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.month.as_ref() != Some(month) {
            return products.to_vec();
        }
        products
            .iter()
            .copied()
            .filter(|p| !inner.seen.contains(&(account, *p)))
            .collect()
    }

    /// Remembers that `products` are recorded for `account` in `month`.
    pub(crate) fn remember(
        &self,
        account: AccountId,
        month: &BillingMonth,
        products: &[ProductId],
    ) {
        let mut inner = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        if inner.month.as_ref() != Some(month) || inner.seen.len() + products.len() > CAPACITY {
            inner.seen.clear();
            inner.month = Some(month.clone());
        }
        inner.seen.extend(products.iter().map(|p| (account, *p)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn month(text: &str) -> BillingMonth {
        BillingMonth::parse(text).unwrap()
    }

    #[test]
    fn remembers_per_account_and_month() {
        let (nov, dec) = (month("2026-11"), month("2026-12"));
        use crate::model::ProductId as P;
        let seen = PullsSeen::default();
        assert_eq!(
            seen.unseen(AccountId::new(1), &nov, &[P::new(1), P::new(2)]),
            vec![P::new(1), P::new(2)]
        );
        seen.remember(AccountId::new(1), &nov, &[P::new(1), P::new(2)]);
        assert_eq!(
            seen.unseen(AccountId::new(1), &nov, &[P::new(1), P::new(2), P::new(3)]),
            vec![P::new(3)]
        );
        assert_eq!(
            seen.unseen(AccountId::new(2), &nov, &[P::new(1)]),
            vec![P::new(1)],
            "another account"
        );
        assert_eq!(
            seen.unseen(AccountId::new(1), &dec, &[P::new(1)]),
            vec![P::new(1)],
            "another month"
        );
        seen.remember(AccountId::new(1), &dec, &[ProductId::new(3)]);
        assert_eq!(
            seen.unseen(AccountId::new(1), &nov, &[P::new(1)]),
            vec![P::new(1)],
            "the old month is gone"
        );
        assert_eq!(
            seen.unseen(AccountId::new(1), &dec, &[ProductId::new(3)]),
            Vec::<ProductId>::new()
        );
    }
}
