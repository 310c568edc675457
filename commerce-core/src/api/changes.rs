//! `GET /catalog/changes`: the catalogue change feed, read through
//! [`CatalogStore::catalog_changes`](crate::store::CatalogStore::catalog_changes), with its
//! cursors.
//!
//! A cursor is the position of a change in the feed with the time the cursor was handed out,
//! `{high}.{low}.{unix seconds}` in base64url without padding: opaque to clients, and old
//! enough to be refused (410 `cursor_expired`) when it was handed out more than
//! [`CURSOR_DAYS`] days ago. The feed itself keeps one entry per product for ever (nothing is
//! purged), so the bound is a promise to clients, not a loss.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use chrono::{DateTime, TimeDelta, Utc};
use http::{Response, StatusCode};
use serde_json::json;

use super::Ctx;
use crate::error::{ApiError, ErrorCode};
use crate::limits::{CURSOR_DAYS, DEFAULT_CHANGES_LIMIT, MAX_CHANGES_LIMIT, MAX_CURSOR};
use crate::model::ChangePosition;
use crate::render::{messages, wire};
use crate::time::cairo_timestamp;
use crate::web::input::Query;

/// A cursor of the feed: a position and when it was handed out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Cursor {
    pub position: ChangePosition,
    pub issued: i64,
}

impl Cursor {
    /// The cursor of `position` handed out at `now`.
    pub fn at(position: ChangePosition, now: DateTime<Utc>) -> Self {
        Self {
            position,
            issued: now.timestamp(),
        }
    }

    /// Its text.
    pub fn encode(self) -> String {
        let plain = format!(
            "{}.{}.{}",
            self.position.high(),
            self.position.low(),
            self.issued
        );
        URL_SAFE_NO_PAD.encode(plain)
    }

    /// Reads a cursor's text; `None` when it is not one [`encode`](Self::encode) writes.
    pub fn decode(text: &str) -> Option<Self> {
        if text.len() > MAX_CURSOR {
            return None;
        }
        let plain = URL_SAFE_NO_PAD.decode(text).ok()?;
        let plain = std::str::from_utf8(&plain).ok()?;
        let mut parts = plain.split('.');
        let mut number = || -> Option<i64> {
            let part = parts.next()?;
            let plain_digits = !part.is_empty()
                && part.bytes().all(|b| b.is_ascii_digit())
                && (part == "0" || !part.starts_with('0'));
            plain_digits.then(|| part.parse().ok()).flatten()
        };
        let (high, low, issued) = (number()?, number()?, number()?);
        if parts.next().is_some() {
            return None;
        }
        let cursor = Self {
            position: ChangePosition::new(high, low),
            issued,
        };
        // Only the exact text a cursor encodes to is one.
        (cursor.encode() == text).then_some(cursor)
    }

    /// Whether it was handed out more than [`CURSOR_DAYS`] days before `now`.
    pub fn expired(self, now: DateTime<Utc>) -> bool {
        now.timestamp().saturating_sub(self.issued) > TimeDelta::days(CURSOR_DAYS).num_seconds()
    }
}

/// `GET /catalog/changes?after=&limit=`: the changes after the cursor, in feed order; not
/// billed (no product data is returned).
pub(super) async fn catalog_changes(
    ctx: &Ctx<'_>,
    raw_query: Option<&str>,
) -> Result<Response<Bytes>, ApiError> {
    let mut query = Query::parse(raw_query);
    let limit = query
        .integer("limit", 1, i64::from(MAX_CHANGES_LIMIT))
        .unwrap_or(i64::from(DEFAULT_CHANGES_LIMIT));
    let given = query.parsed("after", messages::INVALID_CURSOR, Cursor::decode);
    query.finish()?;
    let after = given.map(|(_, cursor)| cursor);
    if after.is_some_and(|c| c.expired(ctx.now)) {
        return Err(ApiError::new(ErrorCode::CursorExpired));
    }
    let limit = usize::try_from(limit).unwrap_or(1);
    let read = ctx
        .store()
        .catalog_changes(after.map(|c| c.position), limit)
        .await
        .map_err(|e| ApiError::from_store(e, "catalog_changes"))?;
    let data: Vec<serde_json::Value> = read
        .changes
        .iter()
        .map(|c| {
            json!({
                "cursor": Cursor::at(c.position, ctx.now).encode(),
                "product_id": c.product_id,
                "kind": c.kind.as_str(),
                "at": cairo_timestamp(c.at),
            })
        })
        .collect();
    let next_cursor = match (read.changes.is_empty(), after) {
        // An empty page after a cursor hands back its position, handed out now: a follower
        // that reads at least every 30 days keeps a good cursor through a quiet catalogue.
        (true, Some(given)) => Cursor::at(given.position, ctx.now).encode(),
        _ => Cursor::at(read.end, ctx.now).encode(),
    };
    let body = json!({
        "data": data,
        "meta": {"next_cursor": next_cursor, "has_more": read.has_more},
    });
    Ok(wire::json_response(StatusCode::OK, body.to_string()))
}
