//! [`CatalogStore`] for [`MemoryStore`]: the catalogue is the state's [`CatalogTables`]; a
//! product moved to another supplier ends its variants' pending quotes here.

use async_trait::async_trait;
use chrono::{DateTime, Utc};

use super::MemoryStore;
use crate::model::*;
use crate::store::*;

#[async_trait]
impl CatalogStore for MemoryStore {
    async fn insert_category(&self, new: NewCategory) -> Result<Category, StoreError> {
        self.lock().catalog.insert_category(new)
    }

    async fn update_category(
        &self,
        id: CategoryId,
        patch: CategoryPatch,
        now: DateTime<Utc>,
    ) -> Result<Category, StoreError> {
        self.lock().catalog.update_category(id, &patch, now)
    }

    async fn update_product(
        &self,
        id: ProductId,
        patch: ProductPatch,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError> {
        let mut s = self.lock();
        let (product, moved) = s.catalog.update_product(id, &patch, now)?;
        for variant in moved {
            s.end_pending_quote(variant, now);
        }
        Ok(product)
    }

    async fn update_warranty(
        &self,
        id: WarrantyId,
        patch: WarrantyPatch,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError> {
        self.lock().catalog.update_warranty(id, &patch, now)
    }

    async fn all_categories(&self) -> Result<Vec<Category>, StoreError> {
        Ok(self.lock().catalog.all_categories())
    }

    async fn insert_product(
        &self,
        new: NewProduct,
        now: DateTime<Utc>,
    ) -> Result<Product, StoreError> {
        self.lock().catalog.insert_product(new, now)
    }

    async fn insert_variant(
        &self,
        product: ProductId,
        new: NewVariant,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError> {
        self.lock().catalog.insert_variant(product, new, now)
    }

    async fn update_variant(
        &self,
        id: VariantId,
        patch: VariantPatch,
        now: DateTime<Utc>,
    ) -> Result<Variant, StoreError> {
        self.lock().catalog.update_variant(id, &patch, now)
    }

    async fn adjust_stock(
        &self,
        new: NewStockAdjustment,
        now: DateTime<Utc>,
    ) -> Result<StockAdjustment, StockError> {
        self.lock().catalog.adjust_stock(new, now)
    }

    async fn stock_adjustments(
        &self,
        variant: VariantId,
        page: PageRequest,
    ) -> Result<Page<StockAdjustment>, StoreError> {
        Ok(self.lock().catalog.stock_adjustments(variant, page))
    }

    async fn insert_warranty(
        &self,
        product: ProductId,
        new: NewWarranty,
        now: DateTime<Utc>,
    ) -> Result<Warranty, StoreError> {
        self.lock().catalog.insert_warranty(product, new, now)
    }

    async fn products(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
    ) -> Result<Page<Product>, StoreError> {
        Ok(self.lock().catalog.products(filter, page, Product::clone))
    }

    async fn product_versions(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
    ) -> Result<Page<ProductVersion>, StoreError> {
        Ok(self
            .lock()
            .catalog
            .products(filter, page, ProductVersion::of))
    }

    async fn removed_products(
        &self,
        since: DateTime<Utc>,
        page: PageRequest,
    ) -> Result<Page<RemovedProduct>, StoreError> {
        Ok(self.lock().catalog.removed_products(since, page))
    }

    async fn product(&self, id: ProductId) -> Result<Option<Product>, StoreError> {
        Ok(self.lock().catalog.product(id).cloned())
    }

    async fn catalog_changes(
        &self,
        after: Option<ChangePosition>,
        limit: usize,
    ) -> Result<CatalogChanges, StoreError> {
        Ok(self.lock().catalog.catalog_changes(after, limit))
    }

    async fn newest_catalog_change(&self) -> Result<Option<ChangePosition>, StoreError> {
        Ok(self.lock().catalog.newest_catalog_change())
    }

    async fn products_of_variants(
        &self,
        variants: &[VariantId],
    ) -> Result<Vec<Product>, StoreError> {
        Ok(self.lock().catalog.products_of_variants(variants))
    }

    async fn insert_governorate(&self, name: String) -> Result<Governorate, StoreError> {
        self.lock().catalog.insert_governorate(name)
    }

    async fn governorates(&self) -> Result<Vec<Governorate>, StoreError> {
        Ok(self.lock().catalog.governorates())
    }

    async fn insert_shipping_option(&self, name: String) -> Result<ShippingOption, StoreError> {
        Ok(self.lock().catalog.insert_shipping_option(name))
    }

    async fn set_shipping_option_active(
        &self,
        id: ShippingOptionId,
        active: bool,
    ) -> Result<ShippingOption, StoreError> {
        self.lock().catalog.set_shipping_option_active(id, active)
    }

    async fn set_shipping_rate(
        &self,
        option: ShippingOptionId,
        rate: ShippingRate,
    ) -> Result<ShippingOption, StoreError> {
        self.lock().catalog.set_shipping_rate(option, rate)
    }

    async fn shipping_options(&self) -> Result<Vec<ShippingOption>, StoreError> {
        Ok(self.lock().catalog.shipping_options())
    }
}
