//! What the back office's queries share: a page of results with a count that stops at a limit
//! ([`Listing`], [`Count`]), a range of instants ([`TimeRange`]) and a sort direction
//! ([`SortOrder`]).
//!
//! The queries themselves ([`OrderQuery`], [`AccountQuery`], [`WithdrawalQuery`],
//! [`WebhookQuery`]) are each a filter with public fields, a `Default` that matches everything,
//! and builder methods; each also says, once, which records it matches and in which order
//! (`matches`, `select`): the reference every store follows.

use chrono::{DateTime, Utc};

use super::PageRequest;

/// How many records a back-office query counts, by default, before it stops counting: a total
/// over this many is reported as "at least" ([`Count::exact`] `false`), so that a page costs
/// the same on a million rows as on ten thousand. A query's `count_limit` raises it (an exact
/// count then reads every matching row).
pub const DEFAULT_COUNT_LIMIT: u64 = 1000;

/// How many records match a query, counted up to its `count_limit`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct Count {
    /// Records counted: all that match when [`exact`](Self::exact), else the limit.
    pub value: u64,
    /// Whether `value` is every matching record; `false`: more than `value` match.
    pub exact: bool,
}

impl Count {
    /// A `Count` of its fields, in their order.
    pub fn new(value: u64, exact: bool) -> Self {
        Self { value, exact }
    }
}

impl Count {
    /// `counted` matching records (counted up to `limit + 1`), as reported under `limit`.
    pub fn of(counted: u64, limit: u64) -> Self {
        if counted > limit {
            Self {
                value: limit,
                exact: false,
            }
        } else {
            Self {
                value: counted,
                exact: true,
            }
        }
    }

    /// Rows a store counts to decide a [`Count`] under `limit`: `limit + 1`, at most
    /// `i64::MAX` (SQL's `LIMIT`).
    pub fn rows_to_count(limit: u64) -> i64 {
        i64::try_from(limit.saturating_add(1)).unwrap_or(i64::MAX)
    }
}

/// `1000` when exact, `1000+` when more match.
impl std::fmt::Display for Count {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}{}", self.value, if self.exact { "" } else { "+" })
    }
}

/// One page of a back-office query and how many records match it.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Listing<T> {
    /// The page's records, in the query's order.
    pub items: Vec<T>,
    /// How many match across all pages, counted up to the query's `count_limit`.
    pub total: Count,
}

impl<T> Listing<T> {
    /// A page of `items` of the `total` that match.
    pub fn new(items: Vec<T>, total: Count) -> Self {
        Self { items, total }
    }
}

impl<T: Clone> Listing<T> {
    /// The page `page` of `selected` (every matching record, in the query's order) and their
    /// count under `count_limit`: the reference a store that holds its records in memory
    /// applies to what a query's `select` answers.
    pub fn of_selected(selected: Vec<&T>, page: PageRequest, count_limit: u64) -> Self {
        let total = Count::of(selected.len() as u64, count_limit);
        let offset = usize::try_from(page.offset()).unwrap_or(usize::MAX);
        let items = selected
            .into_iter()
            .skip(offset)
            .take(page.per_page() as usize)
            .cloned()
            .collect();
        Self { items, total }
    }
}

/// Instants from `from` (included) to `until` (excluded); an end left `None` is open.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct TimeRange {
    /// The first instant included.
    pub from: Option<DateTime<Utc>>,
    /// The first instant no longer included.
    pub until: Option<DateTime<Utc>>,
}

impl TimeRange {
    /// From `from` (included) to `until` (excluded).
    pub fn between(from: DateTime<Utc>, until: DateTime<Utc>) -> Self {
        Self {
            from: Some(from),
            until: Some(until),
        }
    }

    /// From `from` (included) on.
    pub fn since(from: DateTime<Utc>) -> Self {
        Self {
            from: Some(from),
            until: None,
        }
    }

    /// Before `until` (excluded).
    pub fn before(until: DateTime<Utc>) -> Self {
        Self {
            from: None,
            until: Some(until),
        }
    }

    /// Whether `at` is in the range.
    pub fn contains(&self, at: DateTime<Utc>) -> bool {
        self.from.is_none_or(|from| at >= from) && self.until.is_none_or(|until| at < until)
    }

    /// Whether both ends are open (the range filters nothing).
    pub fn is_open(&self) -> bool {
        self.from.is_none() && self.until.is_none()
    }
}

/// The direction of a back-office query's order.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash)]
pub enum SortOrder {
    /// The latest first (the default).
    #[default]
    NewestFirst,
    /// The earliest first (queues: the one waiting longest on top).
    OldestFirst,
}

impl SortOrder {
    /// Orders `a` and `b` (each an instant and an id, the tie-break) in this direction.
    pub fn compare<I: Ord>(
        self,
        a: (DateTime<Utc>, I),
        b: (DateTime<Utc>, I),
    ) -> std::cmp::Ordering {
        match self {
            SortOrder::NewestFirst => b.cmp(&a),
            SortOrder::OldestFirst => a.cmp(&b),
        }
    }
}

/// Whether `needle` (already lowered by [`fold_case`]) is in `haystack`, ASCII letters compared
/// case-insensitively: the account search's rule.
pub fn contains_folded(haystack: &str, needle: &str) -> bool {
    fold_case(haystack).contains(needle)
}

/// `text` with its ASCII letters in lower case, every other character as it is: what the
/// account search compares (SQLite's `lower()` does the same, and PostgreSQL's store folds
/// `A`-`Z` only, so that every store matches the same accounts).
pub fn fold_case(text: &str) -> String {
    text.to_ascii_lowercase()
}
