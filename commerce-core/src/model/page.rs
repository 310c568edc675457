//! Pages of a list: the request and the answer.

use crate::limits::MAX_PER_PAGE;

/// A page request: `page` from 1, `per_page` 1 to 100. Built by
/// [`new`](Self::new), which refuses anything else, so a store never sees an empty or
/// oversized page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    page: u32,
    per_page: u32,
}

impl PageRequest {
    /// Page `page` (from 1) of `per_page` items (1 to 100); `None` when either
    /// is out of its range.
    pub const fn new(page: u32, per_page: u32) -> Option<Self> {
        if page == 0 || per_page == 0 || per_page > MAX_PER_PAGE {
            return None;
        }
        Some(Self { page, per_page })
    }

    /// The page number, from 1.
    pub fn page(self) -> u32 {
        self.page
    }

    /// Items per page, 1 to 100.
    pub fn per_page(self) -> u32 {
        self.per_page
    }

    /// Items to skip.
    pub fn offset(self) -> u64 {
        u64::from(self.page.saturating_sub(1)) * u64::from(self.per_page)
    }
}

impl Default for PageRequest {
    /// The first page of 25.
    fn default() -> Self {
        Self {
            page: 1,
            per_page: 25,
        }
    }
}

/// One page of items and the total count.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Page<T> {
    /// Items of the page.
    pub items: Vec<T>,
    /// Items across all pages.
    pub total: u64,
}

impl<T> Page<T> {
    /// A page of `items` of `total` items.
    pub fn new(items: Vec<T>, total: u64) -> Self {
        Self { items, total }
    }

    /// The page `page` of every matching item, in order, with `total` counting them all: what
    /// a store that reads whole lists (the memory store, a provided method) answers.
    ///
    /// ```
    /// # use commerce_core as commerce;
    /// use commerce::model::{Page, PageRequest};
    ///
    /// let second = Page::of_items(1..=5, PageRequest::new(2, 2).expect("a page"));
    /// assert_eq!((second.items, second.total), (vec![3, 4], 5));
    /// ```
    pub fn of_items(items: impl IntoIterator<Item = T>, page: PageRequest) -> Self {
        let items = items.into_iter();
        let mut total = 0u64;
        let most = items.size_hint().1.unwrap_or(usize::MAX);
        let mut out = Vec::with_capacity((page.per_page() as usize).min(most));
        let offset = page.offset();
        for item in items {
            if total >= offset && out.len() < page.per_page() as usize {
                out.push(item);
            }
            total += 1;
        }
        Self { items: out, total }
    }
}

impl<T: Clone> Page<&T> {
    /// The page with its items cloned (a page read by reference from a store's own records).
    pub fn cloned(self) -> Page<T> {
        Page::new(self.items.into_iter().cloned().collect(), self.total)
    }
}
