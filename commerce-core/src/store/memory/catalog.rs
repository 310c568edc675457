//! [`CatalogStore`] for [`MemoryStore`]: categories, products, variants, warranties, governorates, shipping.

use std::collections::BTreeSet;
use std::sync::Arc;

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::MemoryStore;
use crate::model::*;
use crate::store::*;

#[async_trait]
impl CatalogStore for MemoryStore {
    async fn insert_category(&self, new: NewCategory) -> Result<Category, StoreError> {
        let mut s = self.lock();
        if let Some(parent) = new.parent_id
            && !s.categories.contains_key(&parent)
        {
            return Err(StoreError::Invalid(format!("no parent category {parent}")));
        }
        s.claim_unique(Unique::CategorySlug, &new.slug)?;
        let category = new.into_category(CategoryId::new(s.next_id("categories")));
        s.categories.insert(category.id, category.clone());
        s.categories_changed();
        Ok(category)
    }

    async fn update_category(
        &self,
        id: CategoryId,
        patch: CategoryPatch,
        now: DateTime<Utc>,
    ) -> Result<Category, StoreError> {
        self.lock().update_category(id, &patch, now)
    }

    async fn update_product(
        &self,
        id: ProductId,
        patch: ProductPatch,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError> {
        self.lock().update_product(id, &patch, now)
    }

    async fn update_warranty(
        &self,
        id: WarrantyId,
        patch: WarrantyPatch,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError> {
        self.lock().update_warranty(id, &patch, now)
    }

    async fn all_categories(&self) -> Result<Vec<Category>, StoreError> {
        Ok(self.lock().category_list.to_vec())
    }

    async fn insert_product(
        &self,
        new: NewProduct,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError> {
        let mut s = self.lock();
        if !s.categories.contains_key(&new.category_id) {
            return Err(StoreError::Invalid(format!(
                "no category {}",
                new.category_id
            )));
        }
        s.claim_unique(Unique::ProductSlug, &new.slug)?;
        let product = new.into_product(ProductId::new(s.next_id("products")), now);
        s.products.insert(product.id, Arc::new(product.clone()));
        s.record_created(&product);
        s.file_supplier(product.id, None, product.supplier_id);
        if product.active {
            s.active_products.insert(product.id);
        }
        Ok(product)
    }

    async fn insert_variant(
        &self,
        product: ProductId,
        new: NewVariant,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError> {
        let mut s = self.lock();
        s.product_mut(product)?;
        let id = s.next_id("variants");
        let owner = s.stamp_product(product, now)?;
        let variant = new.into_variant(VariantId::new(id), product);
        owner.variants.push(variant.clone());
        owner.revision += 1;
        s.variant_owner.insert(VariantId::new(id), product);
        if variant.available != 0 {
            let adjustment = StockAdjustmentId::new(s.next_id("stock_adjustments"));
            let initial =
                NewStockAdjustment::new(variant.id, variant.available, StockReason::Initial)
                    .into_adjustment(adjustment, variant.available, now);
            s.adjustments.entry(variant.id).or_default().push(initial);
        }
        Ok(variant)
    }

    async fn update_variant(
        &self,
        id: VariantId,
        patch: VariantPatch,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError> {
        let mut s = self.lock();
        let variant = s.variant_mut(id).ok_or(StoreError::NotFound)?;
        patch.apply(variant);
        let variant = variant.clone();
        let owner = s.stamp_product(variant.product_id, now)?;
        owner.revision += 1;
        Ok(variant)
    }

    async fn adjust_stock(
        &self,
        new: NewStockAdjustment,
        now: DateTime<Utc>,
    ) -> Result<StockAdjustment, StockError> {
        self.lock().apply_stock_adjustment(new, now)
    }

    async fn stock_adjustments(
        &self,
        variant: VariantId,
        page: PageRequest,
    ) -> Result<Page<StockAdjustment>, StoreError> {
        Ok(self.lock().stock_adjustments(variant, page))
    }

    async fn insert_warranty(
        &self,
        product: ProductId,
        new: NewWarranty,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError> {
        let mut s = self.lock();
        s.product_mut(product)?;
        let id = s.next_id("warranties");
        let owner = s.stamp_product(product, now)?;
        let warranty = new.into_warranty(WarrantyId::new(id), product);
        owner.warranties.push(warranty.clone());
        owner.revision += 1;
        s.warranty_owner.insert(WarrantyId::new(id), product);
        Ok(warranty)
    }

    async fn products(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
    ) -> Result<Page<Product>, StoreError> {
        Ok(self
            .lock()
            .products_page(filter, page, |p| Product::clone(p)))
    }

    async fn product_versions(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
    ) -> Result<Page<ProductVersion>, StoreError> {
        Ok(self
            .lock()
            .products_page(filter, page, |p| ProductVersion::of(p)))
    }

    async fn removed_products(
        &self,
        since: DateTime<Utc>,
        page: PageRequest,
    ) -> Result<Page<RemovedProduct>, StoreError> {
        let s = self.lock();
        let newest_first = s
            .removals
            .range((since, ProductId::new(i64::MIN))..)
            .rev()
            .map(|(removed_at, id)| RemovedProduct::new(*id, *removed_at))
            .collect::<Vec<_>>();
        Ok(Page::of_items(newest_first.iter(), page).cloned())
    }

    async fn product(&self, id: ProductId) -> Result<Option<Product>, StoreError> {
        Ok(self.lock().products.get(&id).map(|p| Product::clone(p)))
    }

    async fn catalog_changes(
        &self,
        after: Option<ChangePosition>,
        limit: usize,
    ) -> Result<CatalogChanges, StoreError> {
        Ok(self.lock().changes.read(after, limit))
    }

    async fn newest_catalog_change(&self) -> Result<Option<ChangePosition>, StoreError> {
        Ok(self.lock().changes.newest())
    }

    async fn products_of_variants(
        &self,
        variants: &[VariantId],
    ) -> Result<Vec<Product>, StoreError> {
        let s = self.lock();
        let ids: BTreeSet<ProductId> = variants
            .iter()
            .filter_map(|v| s.variant_owner.get(v).copied())
            .collect();
        Ok(ids
            .iter()
            .filter_map(|id| s.products.get(id).map(|p| Product::clone(p)))
            .collect())
    }

    async fn insert_governorate(&self, name: String) -> Result<Governorate, StoreError> {
        let mut s = self.lock();
        s.claim_unique(Unique::GovernorateName, &name)?;
        let governorate = Governorate {
            id: GovernorateId::new(s.next_id("governorates")),
            name,
        };
        s.governorates.insert(governorate.id, governorate.clone());
        Ok(governorate)
    }

    async fn governorates(&self) -> Result<Vec<Governorate>, StoreError> {
        Ok(self.lock().governorates.values().cloned().collect())
    }

    async fn insert_shipping_option(&self, name: String) -> Result<ShippingOption, StoreError> {
        let mut s = self.lock();
        let option = ShippingOption {
            id: ShippingOptionId::new(s.next_id("shipping_options")),
            name,
            active: true,
            rates: Vec::new(),
        };
        s.shipping_options.insert(option.id, option.clone());
        Ok(option)
    }

    async fn set_shipping_option_active(
        &self,
        id: ShippingOptionId,
        active: bool,
    ) -> Result<ShippingOption, StoreError> {
        let mut s = self.lock();
        let option = s.shipping_option_mut(id)?;
        option.active = active;
        Ok(option.clone())
    }

    async fn set_shipping_rate(
        &self,
        option: ShippingOptionId,
        mut rate: ShippingRate,
    ) -> Result<ShippingOption, StoreError> {
        let mut s = self.lock();
        rate.governorate_name = s
            .governorates
            .get(&rate.governorate_id)
            .ok_or_else(|| StoreError::Invalid(format!("no governorate {}", rate.governorate_id)))?
            .name
            .clone();
        let option = s.shipping_option_mut(option)?;
        option
            .rates
            .retain(|r| r.governorate_id != rate.governorate_id);
        option.rates.push(rate);
        option.rates.sort_by_key(|r| r.governorate_id);
        Ok(option.clone())
    }

    async fn shipping_options(&self) -> Result<Vec<ShippingOption>, StoreError> {
        Ok(self.lock().shipping_options.values().cloned().collect())
    }
}

impl super::State {
    /// The page of products `filter` lists, by id, each made into what `make` makes of it
    /// (a clone for [`CatalogStore::products`], a version for
    /// [`CatalogStore::product_versions`]), with the total.
    fn products_page<T>(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
        make: impl Fn(&Arc<Product>) -> T,
    ) -> Page<T> {
        if *filter == ProductFilter::default() {
            // Every active product is listed: the walk stops at the page's end, and the
            // total is the count of active products.
            let items = self
                .products
                .values()
                .filter(|p| p.active)
                .skip(usize::try_from(page.offset()).unwrap_or(usize::MAX))
                .take(page.per_page() as usize)
                .map(make)
                .collect();
            return Page::new(items, self.active_products.len() as u64);
        }
        let listed = filter.listed();
        let found = Page::of_items(self.products.values().filter(|p| listed(p)), page);
        Page::new(found.items.into_iter().map(make).collect(), found.total)
    }
}
