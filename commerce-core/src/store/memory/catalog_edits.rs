//! The catalogue's edits on [`MemoryStore`](super::MemoryStore)'s locked state: products,
//! categories (their products marked changed when renamed) and warranties.

use chrono::{DateTime, Utc};

use super::State;
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
        let supplier_before = product.supplier_id;
        patch.apply(product);
        let product = self.stamp_product(id, now)?;
        product.revision += 1;
        let product = product.clone();
        if product.supplier_id != supplier_before {
            self.file_supplier(id, supplier_before, product.supplier_id);
            for variant in &product.variants {
                self.end_pending_quote(variant.id, now);
            }
        }
        Ok(product)
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
