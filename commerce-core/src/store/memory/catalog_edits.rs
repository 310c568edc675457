//! The catalogue's edits on [`MemoryStore`](super::MemoryStore)'s locked state: products,
//! categories (their products marked changed when renamed) and warranties.

use chrono::{DateTime, Utc};

use super::State;
use crate::domain::edits::removal_after;
use crate::model::*;
use crate::store::*;

impl State {
    /// [`CatalogStore::update_product`] on the locked state.
    pub(super) fn update_product(
        &mut self,
        id: ProductId,
        patch: &ProductPatch,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError> {
        let slug_before = self.product_mut(id)?.slug.clone();
        if let Some(category) = patch.category_id
            && !self.categories.contains_key(&category)
        {
            return Err(StoreError::Invalid(format!("no category {category}")));
        }
        if let Some(slug) = &patch.slug
            && *slug != slug_before
        {
            self.claim_unique(Unique::ProductSlug, slug)?;
            self.unique.remove(&(Unique::ProductSlug, slug_before));
        }
        let product = self.product_mut(id)?;
        let (supplier_before, was_active) = (product.supplier_id, product.active);
        patch.apply(product);
        let product = self.stamp_product(id, now)?;
        product.revision += 1;
        let product = product.clone();
        if patch.active.is_some() {
            self.file_removal(id, was_active, product.active, now);
        }
        if product.supplier_id != supplier_before {
            self.file_supplier(id, supplier_before, product.supplier_id);
            for variant in &product.variants {
                self.end_pending_quote(variant.id, now);
            }
        }
        Ok(product)
    }

    /// Files a product's new `active` (a patch set it at `now`; it was `was_active`): the
    /// active products' index and its removal time ([`removal_after`]).
    fn file_removal(&mut self, id: ProductId, was_active: bool, active: bool, now: DateTime<Utc>) {
        if active {
            self.active_products.insert(id);
        } else {
            self.active_products.remove(&id);
        }
        let before = self.removed_at.get(&id).copied();
        let after = removal_after(was_active, before, active, now);
        if before != after {
            if let Some(at) = before {
                self.removals.remove(&(at, id));
                self.removed_at.remove(&id);
            }
            if let Some(at) = after {
                self.removals.insert((at, id));
                self.removed_at.insert(id, at);
            }
        }
    }

    /// [`CatalogStore::update_category`] on the locked state: every check before the first
    /// write.
    pub(super) fn update_category(
        &mut self,
        id: CategoryId,
        patch: &CategoryPatch,
        now: DateTime<Utc>,
    ) -> Result<Category, StoreError> {
        let current = self
            .categories
            .get(&id)
            .ok_or(StoreError::NotFound)?
            .clone();
        patch.check_parent(id, |c| self.categories.get(&c).map(|c| c.parent_id))?;
        if let Some(slug) = &patch.slug
            && *slug != current.slug
        {
            self.claim_unique(Unique::CategorySlug, slug)?;
            self.unique
                .remove(&(Unique::CategorySlug, current.slug.clone()));
        }
        let renamed = patch.renames(&current);
        let mut category = current;
        patch.apply(&mut category);
        self.categories.insert(id, category.clone());
        self.categories_changed();
        if renamed {
            let shown: Vec<ProductId> = self
                .products
                .values()
                .filter(|p| p.category_id == id)
                .map(|p| p.id)
                .collect();
            for product in shown {
                self.stamp_product(product, now)?;
            }
        }
        Ok(category)
    }

    /// [`CatalogStore::update_warranty`] on the locked state.
    pub(super) fn update_warranty(
        &mut self,
        id: WarrantyId,
        patch: &WarrantyPatch,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError> {
        let product = *self.warranty_owner.get(&id).ok_or(StoreError::NotFound)?;
        let owner = self.stamp_product(product, now)?;
        let warranty = owner
            .warranties
            .iter_mut()
            .find(|w| w.id == id)
            .ok_or(StoreError::NotFound)?;
        patch.apply(warranty);
        let warranty = warranty.clone();
        owner.revision += 1;
        Ok(warranty)
    }
}
