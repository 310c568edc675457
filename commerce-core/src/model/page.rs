//! Pages of a list: the request and the answer.

/// A page request: `page` from 1, `per_page` 1 to 100.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    /// Page number, from 1.
    pub page: u32,
    /// Items per page.
    pub per_page: u32,
}

impl PageRequest {
    /// Items to skip.
    pub fn offset(self) -> u64 {
        u64::from(self.page.saturating_sub(1)) * u64::from(self.per_page)
    }
}

impl Default for PageRequest {
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
}
