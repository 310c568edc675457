//! Waiting for the catalogue change feed in a test, without spending a key's rate window.

use std::time::Duration;

use crate::api::changes::Cursor;
use crate::store::Store;

/// Waits, at most 60 s, until a read of `store`'s feed after `cursor` (a `next_cursor` or a
/// change's `cursor` from `GET /catalog/changes`; `None`: from the feed's start) names every
/// product of `wanted` (ids).
///
/// A store with a fence (PostgreSQL) returns a change once every older transaction on the
/// server has ended, and another test's open transaction (another schema, another process)
/// can hold it back for seconds. This polls the store, not the API: polling
/// `GET /catalog/changes` would spend the key's rate window (the test harnesses' clocks
/// stand, so the window never turns) and end the wait in a 429.
///
/// # Panics
/// When `cursor` is not one the API gave, when the store fails, or after 60 s.
pub async fn wait_for_changes(store: &dyn Store, cursor: Option<&str>, wanted: &[i64]) {
    let after = cursor.map(|c| Cursor::decode(c).expect("a cursor the API gave").position);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (mut named, mut from) = (Vec::new(), after);
        loop {
            let read = store.catalog_changes(from, 500).await.expect("the feed");
            named.extend(read.changes.iter().map(|c| c.product_id.get()));
            from = Some(read.end);
            if !read.has_more {
                break;
            }
        }
        if wanted.iter().all(|w| named.contains(w)) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "{wanted:?} never in the feed: {named:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}
