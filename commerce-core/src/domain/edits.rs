//! The rules of edits, decided once for every backend: a patch applied to a product, a
//! category, a warranty, a variant, an account or a webhook endpoint (the `apply` of each
//! `*Patch`), a category's parent ([`parent_allowed`]) and a product's removal time
//! ([`removal_after`]). The patches are records of [`model`](crate::model); a backend that
//! holds whole records applies these rules, the SQL stores write the same columns.

use chrono::{DateTime, Utc};

use crate::model::*;

impl ProductPatch {
    /// The rule of [`CatalogStore::update_product`](crate::store::CatalogStore::update_product): each field given replaces the product's.
    pub fn apply(&self, product: &mut Product) {
        let replace = |to: &mut String, from: &Option<String>| {
            if let Some(from) = from {
                to.clone_from(from);
            }
        };
        replace(&mut product.title, &self.title);
        replace(&mut product.slug, &self.slug);
        replace(&mut product.description, &self.description);
        replace(&mut product.url, &self.url);
        product.category_id = self.category_id.unwrap_or(product.category_id);
        if let Some(images) = &self.images {
            product.images.clone_from(images);
        }
        if let Some(files) = &self.files {
            product.files.clone_from(files);
        }
        if let Some(video) = &self.video_url {
            product.video_url.clone_from(video);
        }
        if let Some(marketing) = &self.marketing_files_url {
            product.marketing_files_url.clone_from(marketing);
        }
        if let Some(supplier) = self.supplier_id {
            product.supplier_id = supplier;
        }
        product.active = self.active.unwrap_or(product.active);
    }
}

impl CategoryPatch {
    /// The rule of [`CatalogStore::update_category`](crate::store::CatalogStore::update_category): each field given replaces the
    /// category's.
    pub fn apply(&self, category: &mut Category) {
        if let Some(name) = &self.name {
            category.name.clone_from(name);
        }
        if let Some(slug) = &self.slug {
            category.slug.clone_from(slug);
        }
        category.parent_id = self.parent_id.unwrap_or(category.parent_id);
        category.active = self.active.unwrap_or(category.active);
    }

    /// Whether the patch changes what a product of the category renders: the product view
    /// shows its category's id and name, so a new name (and only that) marks the category's
    /// products changed.
    pub fn renames(&self, category: &Category) -> bool {
        self.name
            .as_ref()
            .is_some_and(|name| *name != category.name)
    }
}

/// The parent rule of [`CatalogStore::update_category`](crate::store::CatalogStore::update_category): whether `category` may be moved under
/// `parent`, given every category's parent (`parent_of`): never under itself or one of its
/// own descendants (a category is never its own ancestor). `None` (the top level) is always
/// allowed. A parent that does not exist is for the caller to refuse.
pub fn parent_allowed(
    category: CategoryId,
    parent: Option<CategoryId>,
    parent_of: impl Fn(CategoryId) -> Option<CategoryId>,
) -> bool {
    let mut next = parent;
    // A chain longer than the number of ids it could hold is a cycle already stored.
    for _ in 0..10_000 {
        match next {
            None => return true,
            Some(id) if id == category => return false,
            Some(id) => next = parent_of(id),
        }
    }
    false
}

impl WarrantyPatch {
    /// The rule of [`CatalogStore::update_warranty`](crate::store::CatalogStore::update_warranty): each field given replaces the
    /// warranty's.
    pub fn apply(&self, warranty: &mut Warranty) {
        if let Some(name) = &self.name {
            warranty.name.clone_from(name);
        }
        if let Some(terms) = &self.terms {
            warranty.terms.clone_from(terms);
        }
        if let Some(icon) = &self.icon_url {
            warranty.icon_url.clone_from(icon);
        }
        warranty.admin_fee = self.admin_fee.unwrap_or(warranty.admin_fee);
        warranty.percent = self.percent.unwrap_or(warranty.percent);
        warranty.price_from = self.price_from.unwrap_or(warranty.price_from);
        warranty.duration_days = self.duration_days.unwrap_or(warranty.duration_days);
        warranty.active = self.active.unwrap_or(warranty.active);
    }
}

impl VariantPatch {
    /// The rule of [`CatalogStore::update_variant`](crate::store::CatalogStore::update_variant): each field given replaces the variant's.
    pub fn apply(&self, variant: &mut Variant) {
        if let Some(label) = &self.label {
            variant.label.clone_from(label);
        }
        variant.price = self.price.unwrap_or(variant.price);
        variant.suggested_min = self.suggested_min.unwrap_or(variant.suggested_min);
        variant.suggested_max = self.suggested_max.unwrap_or(variant.suggested_max);
        variant.supply_price = self.supply_price.unwrap_or(variant.supply_price);
    }
}

/// The rule of a product's removal time when an edit sets its `active`
/// ([`CatalogStore::update_product`](crate::store::CatalogStore::update_product) with
/// [`ProductPatch::active`]): `removed_at` (when it was stopped, `None` while sold) after
/// setting `active` at `now` on a product whose `active` was `was_active`. An edit that does
/// not set `active` leaves the removal time as it is.
pub fn removal_after(
    was_active: bool,
    removed_at: Option<DateTime<Utc>>,
    active: bool,
    now: DateTime<Utc>,
) -> Option<DateTime<Utc>> {
    match (active, was_active) {
        (true, _) => None,
        (false, true) => Some(now),
        (false, false) => removed_at.or(Some(now)),
    }
}

impl AccountPatch {
    /// Applies the fields given to `account` at `now`: a new API status (one that differs
    /// from the account's) is dated `now` ([`Account::api_status_at`]); the same status again
    /// keeps its date, so asking twice keeps an account's place in the approval queue. A
    /// status given records who gave it ([`Account::api_status_by`]), also when it is the
    /// same: the team's suspension of an account the owner suspended is the team's.
    pub fn apply(&self, account: &mut Account, now: DateTime<Utc>) {
        account.state = self.state.unwrap_or(account.state);
        if let Some(status) = self.api_status {
            if status != account.api_status {
                account.api_status = status;
                account.api_status_at = now;
            }
            account.api_status_by = self.api_status_by;
        }
    }
}

impl WebhookPatch {
    /// Applies the patch to an endpoint held in memory at `now` (a backend that stores whole
    /// records; SQL backends write the same columns).
    pub fn apply(self, webhook: &mut Webhook, now: DateTime<Utc>) {
        if let Some(url) = self.url {
            webhook.url = url;
        }
        if let Some(events) = self.events {
            webhook.events = EventSelection::Only(events);
        }
        if let Some(description) = self.description {
            webhook.description = description;
        }
        match self.enabled {
            Some(true) => {
                webhook.enabled = true;
                webhook.disabled_reason = None;
                webhook.disabled_at = None;
                webhook.failing_since = None;
                webhook.failed_attempts = 0;
                webhook.breaker = Breaker::CLOSED;
            }
            Some(false) if webhook.enabled => {
                webhook.enabled = false;
                webhook.disabled_reason = Some(DisabledReason::Manual);
                webhook.disabled_at = Some(now);
            }
            _ => {}
        }
        webhook.updated_at = now;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_category_is_never_its_own_ancestor() {
        // 1 <- 2 <- 3 (3's parent is 2, 2's parent is 1).
        let parent_of = |id: CategoryId| match id.get() {
            3 => Some(CategoryId::new(2)),
            2 => Some(CategoryId::new(1)),
            _ => None,
        };
        let id = CategoryId::new;
        assert!(!parent_allowed(id(1), Some(id(1)), parent_of));
        assert!(!parent_allowed(id(1), Some(id(3)), parent_of));
        assert!(parent_allowed(id(3), Some(id(1)), parent_of));
        assert!(parent_allowed(id(2), None, parent_of));
        assert!(parent_allowed(id(4), Some(id(3)), parent_of));
    }
}
