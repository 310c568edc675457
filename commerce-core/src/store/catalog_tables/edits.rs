//! The catalogue's edits on [`CatalogTables`]: categories (their products marked changed when
//! renamed), products (their removal times and suppliers filed), variants and warranties.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::{CatalogTables, next};
use crate::domain::edits::removal_after;
use crate::model::*;
use crate::store::{StoreError, Unique};

impl CatalogTables {
    /// [`CatalogStore::insert_category`](crate::store::CatalogStore::insert_category): refused
    /// when its parent does not exist, then when its slug is taken.
    pub fn insert_category(&mut self, new: NewCategory) -> Result<Category, StoreError> {
        if let Some(parent) = new.parent_id
            && !self.categories.contains_key(&parent)
        {
            return Err(StoreError::Invalid(format!("no parent category {parent}")));
        }
        self.claim_unique(Unique::CategorySlug, &new.slug)?;
        let category = new.into_category(CategoryId::new(next(&mut self.last.categories)));
        self.categories.insert(category.id, category.clone());
        self.categories_changed();
        Ok(category)
    }

    /// [`CatalogStore::update_category`](crate::store::CatalogStore::update_category): every
    /// check before the first write (no such category, [`CategoryPatch::check_parent`], the
    /// slug taken); a new name marks its products changed.
    pub fn update_category(
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
                self.stamp(product, now)?;
            }
        }
        Ok(category)
    }

    /// [`CatalogStore::insert_product`](crate::store::CatalogStore::insert_product): refused
    /// when its category does not exist, then when its slug is taken; the product is the
    /// feed's newest entry, `created`.
    pub fn insert_product(
        &mut self,
        new: NewProduct,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError> {
        if !self.categories.contains_key(&new.category_id) {
            return Err(StoreError::Invalid(format!(
                "no category {}",
                new.category_id
            )));
        }
        self.claim_unique(Unique::ProductSlug, &new.slug)?;
        let product = new.into_product(ProductId::new(next(&mut self.last.products)), now);
        self.changes.record(&product, true);
        self.file_supplier(product.id, None, product.supplier_id);
        if product.active {
            self.active_products.insert(product.id);
        }
        self.products.insert(product.id, Arc::new(product.clone()));
        Ok(product)
    }

    /// [`CatalogStore::update_product`](crate::store::CatalogStore::update_product): refused
    /// when the patch's category does not exist, then when there is no such product, then
    /// when the new slug is taken (the SQL stores' order). Its `active` set files its removal
    /// time ([`removal_after`]). With the product, the variants whose pending quotes end with
    /// the write, because it moved the product to another supplier (none otherwise): the
    /// caller ends them ([`QuoteBook::end_pending`](crate::store::QuoteBook::end_pending)) and
    /// queues their events.
    pub fn update_product(
        &mut self,
        id: ProductId,
        patch: &ProductPatch,
        now: DateTime<Utc>,
    ) -> Result<(Product, Vec<VariantId>), StoreError> {
        if let Some(category) = patch.category_id
            && !self.categories.contains_key(&category)
        {
            return Err(StoreError::Invalid(format!("no category {category}")));
        }
        let slug_before = self.product(id).ok_or(StoreError::NotFound)?.slug.clone();
        if let Some(slug) = &patch.slug
            && *slug != slug_before
        {
            self.claim_unique(Unique::ProductSlug, slug)?;
            self.unique.remove(&(Unique::ProductSlug, slug_before));
        }
        let product = self.product_mut(id)?;
        let (supplier_before, was_active) = (product.supplier_id, product.active);
        patch.apply(product);
        let product = self.stamp(id, now)?;
        product.revision += 1;
        let product = product.clone();
        if patch.active.is_some() {
            self.file_removal(id, was_active, product.active, now);
        }
        let mut moved = Vec::new();
        if product.supplier_id != supplier_before {
            self.file_supplier(id, supplier_before, product.supplier_id);
            moved = product.variants.iter().map(|v| v.id).collect();
        }
        Ok((product, moved))
    }

    /// [`CatalogStore::insert_variant`](crate::store::CatalogStore::insert_variant): its
    /// first stock opens its history (an `initial` adjustment).
    pub fn insert_variant(
        &mut self,
        product: ProductId,
        new: NewVariant,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError> {
        self.product(product).ok_or(StoreError::NotFound)?;
        let id = VariantId::new(next(&mut self.last.variants));
        let variant = new.into_variant(id, product);
        let owner = self.stamp(product, now)?;
        owner.variants.push(variant.clone());
        owner.revision += 1;
        self.variant_owner.insert(id, product);
        if variant.available != 0 {
            let adjustment = StockAdjustmentId::new(next(&mut self.last.stock_adjustments));
            let initial = NewStockAdjustment::builder()
                .variant_id(id)
                .delta(variant.available)
                .reason(StockReason::Initial)
                .build()
                .into_adjustment(adjustment, variant.available, now);
            self.adjustments.entry(id).or_default().push(initial);
        }
        Ok(variant)
    }

    /// [`CatalogStore::update_variant`](crate::store::CatalogStore::update_variant).
    pub fn update_variant(
        &mut self,
        id: VariantId,
        patch: &VariantPatch,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError> {
        let variant = self.variant_mut(id).ok_or(StoreError::NotFound)?;
        patch.apply(variant);
        let variant = variant.clone();
        let owner = self.stamp(variant.product_id, now)?;
        owner.revision += 1;
        Ok(variant)
    }

    /// [`CatalogStore::insert_warranty`](crate::store::CatalogStore::insert_warranty).
    pub fn insert_warranty(
        &mut self,
        product: ProductId,
        new: NewWarranty,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError> {
        self.product(product).ok_or(StoreError::NotFound)?;
        let id = WarrantyId::new(next(&mut self.last.warranties));
        let warranty = new.into_warranty(id, product);
        let owner = self.stamp(product, now)?;
        owner.warranties.push(warranty.clone());
        owner.revision += 1;
        self.warranty_owner.insert(id, product);
        Ok(warranty)
    }

    /// [`CatalogStore::update_warranty`](crate::store::CatalogStore::update_warranty).
    pub fn update_warranty(
        &mut self,
        id: WarrantyId,
        patch: &WarrantyPatch,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError> {
        let product = *self.warranty_owner.get(&id).ok_or(StoreError::NotFound)?;
        let owner = self.stamp(product, now)?;
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

    /// Makes the list `all_categories` copies again, after a category write.
    fn categories_changed(&mut self) {
        self.category_list = self.categories.values().cloned().collect();
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

    /// Re-files a product under its supplier after its supplier changed from `before` to
    /// `after` (or it was inserted: `before` is `None`).
    fn file_supplier(
        &mut self,
        product: ProductId,
        before: Option<AccountId>,
        after: Option<AccountId>,
    ) {
        if let Some(before) = before
            && let Some(products) = self.products_by_supplier.get_mut(&before)
        {
            products.remove(&product);
        }
        if let Some(after) = after {
            self.products_by_supplier
                .entry(after)
                .or_default()
                .insert(product);
        }
    }
}
