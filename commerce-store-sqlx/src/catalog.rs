//! The catalogue and shipping: categories, products with their variants and warranties, governorates, shipping options and rates.

use async_trait::async_trait;
use chrono::{DateTime, Utc};
use commerce_core::model::*;
use commerce_core::store::*;
use sqlx::QueryBuilder;

use crate::dialect::*;
use crate::order_reads::*;
use crate::products::*;
use crate::rows::*;
use crate::sql_store::*;

pub(crate) fn push_product_filter<DB: Dialect>(
    q: &mut QueryBuilder<DB>,
    filter: &ProductFilter,
) -> StoreResult<()> {
    q.push(" FROM products WHERE active = TRUE");
    if let Some(ids) = &filter.category_ids {
        if ids.is_empty() {
            q.push(" AND 1 = 0");
        } else {
            q.push(" AND category_id IN (");
            let mut s = q.separated(", ");
            for id in ids {
                s.push_arg(*id);
            }
            q.push(")");
        }
    }
    if let Some(query) = &filter.query {
        q.push(format!(" AND {}(title_lower, ", DB::INSTR))
            .push_arg(query.to_lowercase())
            .push(") > 0");
    }
    if let Some(since) = filter.updated_since {
        push_changed_since(q, "id", since);
    }
    Ok(())
}

#[async_trait]
impl<DB: Dialect> CatalogStore for SqlStore<DB> {
    async fn insert_category(&self, new: NewCategory) -> StoreResult<Category> {
        let mut tx = self.write().await?;
        let result = async {
            if let Some(parent) = new.parent_id
                && !exists(
                    &mut tx.tx,
                    "SELECT id FROM categories WHERE id = $1",
                    parent.into(),
                )
                .await?
            {
                return Err(StoreError::Invalid(format!("no parent category {parent}")));
            }
            query_scalar::<DB, i64>(
                "INSERT INTO categories (name, slug, parent_id, active) \
                 VALUES ($1, $2, $3, TRUE) ON CONFLICT DO NOTHING RETURNING id",
            )
            .bind(&new.name)
            .bind(&new.slug)
            .bind(new.parent_id)
            .fetch_optional(&mut tx.tx)
            .await
            .map_err(backend)?
            .ok_or(StoreError::Duplicate(Unique::CategorySlug))
        }
        .await;
        let id = tx.finish(result).await?;
        Ok(new.into_category(CategoryId::new(id)))
    }

    async fn update_category(
        &self,
        id: CategoryId,
        patch: CategoryPatch,
        now: DateTime<Utc>,
    ) -> StoreResult<Category> {
        let mut tx = self.write().await?;
        let result = crate::catalog_edits::update_category(&mut tx.tx, id, &patch, now).await;
        tx.finish(result).await
    }

    async fn update_product(
        &self,
        id: ProductId,
        patch: ProductPatch,
        now: DateTime<Utc>,
    ) -> StoreResult<Product> {
        let mut tx = self.write().await?;
        let result = crate::catalog_edits::update_product(&mut tx.tx, id, &patch, now).await;
        tx.finish(result).await
    }

    async fn update_warranty(
        &self,
        id: WarrantyId,
        patch: WarrantyPatch,
        now: DateTime<Utc>,
    ) -> StoreResult<Warranty> {
        let mut tx = self.write().await?;
        let result = crate::catalog_edits::update_warranty(&mut tx.tx, id, &patch, now).await;
        tx.finish(result).await
    }

    async fn all_categories(&self) -> StoreResult<Vec<Category>> {
        let rows: Vec<CategoryRow> = query_as::<DB, CategoryRow>(concat!(
            "SELECT ",
            category_cols!(),
            " FROM categories ORDER BY id"
        ))
        .fetch_all(&self.pool)
        .await
        .map_err(backend)?;
        Ok(rows.into_iter().map(CategoryRow::into_domain).collect())
    }

    async fn insert_product(&self, new: NewProduct, now: DateTime<Utc>) -> StoreResult<Product> {
        let at = nanos(now)?;
        let mut tx = self.write().await?;
        let result = async {
            if !exists(
                &mut tx.tx,
                "SELECT id FROM categories WHERE id = $1",
                new.category_id.into(),
            )
            .await?
            {
                return Err(StoreError::Invalid(format!(
                    "no category {}",
                    new.category_id
                )));
            }
            query_scalar::<DB, i64>(
                "INSERT INTO products (title, title_lower, slug, category_id, \
                 description, images, files, video_url, marketing_files_url, url, \
                 active, updated_at, supplier_id) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, TRUE, $11, $12) \
                 ON CONFLICT DO NOTHING RETURNING id",
            )
            .bind(&new.title)
            .bind(new.title.to_lowercase())
            .bind(&new.slug)
            .bind(new.category_id)
            .bind(&new.description)
            .bind(json_list(&new.images))
            .bind(json_list(&new.files))
            .bind(&new.video_url)
            .bind(&new.marketing_files_url)
            .bind(&new.url)
            .bind(at)
            .bind(new.supplier_id)
            .fetch_optional(&mut tx.tx)
            .await
            .map_err(backend)?
            .ok_or(StoreError::Duplicate(Unique::ProductSlug))
        }
        .await;
        let id = tx.finish(result).await?;
        Ok(new.into_product(ProductId::new(id), now))
    }

    async fn insert_variant(
        &self,
        product: ProductId,
        new: NewVariant,
        now: DateTime<Utc>,
    ) -> StoreResult<Variant> {
        let at = nanos(now)?;
        let (price, min, max, supply) = (
            cents(new.price)?,
            cents(new.suggested_min)?,
            cents(new.suggested_max)?,
            cents(new.supply_price)?,
        );
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            revise_product(c, product.into(), at).await?;
            let id = query_scalar::<DB, i64>(
                "INSERT INTO variants (product_id, label, price, suggested_min, \
                 suggested_max, available, supply_price) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                 RETURNING id",
            )
            .bind(product)
            .bind(&new.label)
            .bind(price)
            .bind(min)
            .bind(max)
            .bind(new.available)
            .bind(supply)
            .fetch_one(&mut *c)
            .await
            .map_err(backend)?;
            // The first stock is the first entry of the variant's history.
            if new.available != 0 {
                query::<DB>(
                    "INSERT INTO stock_adjustments (variant_id, delta, reason, available_after, \
                     at) VALUES ($1, $2, $3, $2, $4)",
                )
                .bind(id)
                .bind(new.available)
                .bind(StockReason::Initial.as_str())
                .bind(at)
                .execute(&mut *c)
                .await
                .map_err(backend)?;
            }
            Ok::<i64, StoreError>(id)
        }
        .await;
        let id = tx.finish(result).await?;
        Ok(new.into_variant(VariantId::new(id), product))
    }

    async fn update_variant(
        &self,
        id: VariantId,
        patch: VariantPatch,
        now: DateTime<Utc>,
    ) -> StoreResult<Variant> {
        let at = nanos(now)?;
        let price = patch.price.map(cents).transpose()?;
        let min = patch.suggested_min.map(cents).transpose()?;
        let max = patch.suggested_max.map(cents).transpose()?;
        let supply = patch.supply_price.map(cents).transpose()?;
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            let row: VariantRow = query_as::<DB, VariantRow>(concat!(
                "UPDATE variants SET price = COALESCE($2, price), \
                 suggested_min = COALESCE($3, suggested_min), \
                 suggested_max = COALESCE($4, suggested_max), \
                 supply_price = COALESCE($5, supply_price), \
                 label = COALESCE($6, label) WHERE id = $1 RETURNING ",
                variant_cols!()
            ))
            .bind(id)
            .bind(price)
            .bind(min)
            .bind(max)
            .bind(supply)
            .bind(&patch.label)
            .fetch_optional(&mut *c)
            .await
            .map_err(backend)?
            .ok_or(StoreError::NotFound)?;
            let variant = row.into_domain();
            revise_product(c, variant.product_id.into(), at).await?;
            Ok(variant)
        }
        .await;
        tx.finish(result).await
    }

    async fn adjust_stock(
        &self,
        new: NewStockAdjustment,
        now: DateTime<Utc>,
    ) -> Result<StockAdjustment, StockError> {
        retrying(|| {
            let new = new.clone();
            async move {
                let mut tx = self.write().await?;
                let result = crate::stock::adjust_stock_in(&mut tx.tx, new, now).await;
                tx.finish(result).await
            }
        })
        .await
    }

    async fn stock_adjustments(
        &self,
        variant: VariantId,
        page: PageRequest,
    ) -> StoreResult<Page<StockAdjustment>> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        crate::stock::stock_adjustments(&mut c, variant, page).await
    }

    async fn insert_warranty(
        &self,
        product: ProductId,
        new: NewWarranty,
        now: DateTime<Utc>,
    ) -> StoreResult<Warranty> {
        let at = nanos(now)?;
        let (fee, percent, from) = (
            cents(new.admin_fee)?,
            cents(new.percent)?,
            cents(new.price_from)?,
        );
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            revise_product(c, product.into(), at).await?;
            query_scalar::<DB, i64>(
                "INSERT INTO warranties (product_id, name, admin_fee, percent, \
                 price_from, duration_days, terms, icon_url, active) \
                 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, TRUE) RETURNING id",
            )
            .bind(product)
            .bind(&new.name)
            .bind(fee)
            .bind(percent)
            .bind(from)
            .bind(new.duration_days)
            .bind(&new.terms)
            .bind(&new.icon_url)
            .fetch_one(&mut *c)
            .await
            .map_err(backend)
        }
        .await;
        let id = tx.finish(result).await?;
        Ok(new.into_warranty(WarrantyId::new(id), product))
    }

    async fn set_warranty_active(
        &self,
        id: WarrantyId,
        active: bool,
        now: DateTime<Utc>,
    ) -> StoreResult<Warranty> {
        let at = nanos(now)?;
        let mut tx = self.write().await?;
        let result = async {
            let c = &mut tx.tx;
            let row: WarrantyRow = query_as::<DB, WarrantyRow>(concat!(
                "UPDATE warranties SET active = $2 WHERE id = $1 RETURNING ",
                warranty_cols!()
            ))
            .bind(id)
            .bind(active)
            .fetch_optional(&mut *c)
            .await
            .map_err(backend)?
            .ok_or(StoreError::NotFound)?;
            let warranty = row.into_domain();
            revise_product(c, warranty.product_id.into(), at).await?;
            Ok(warranty)
        }
        .await;
        tx.finish(result).await
    }

    async fn products(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
    ) -> StoreResult<Page<Product>> {
        // The page with its total in one statement, then its variants and
        // warranties: three statements on one connection, no transaction (each
        // product, variant and warranty is read as last committed; a catalogue edit
        // landing between the statements shows its new variants with the page).
        let mut c = self.pool.acquire().await.map_err(backend)?;
        let c = &mut c;
        let mut q = QueryBuilder::<DB>::new(concat!(
            "SELECT ",
            product_cols!(),
            ", COUNT(*) OVER () AS total"
        ));
        push_product_filter(&mut q, filter)?;
        q.push(" ORDER BY id");
        let mut count = QueryBuilder::<DB>::new("SELECT COUNT(*)");
        push_product_filter(&mut count, filter)?;
        let (rows, total) =
            page_rows::<DB, PagedProductRow>(c, q, count, page, filter.updated_since.is_some())
                .await?;
        let ids: Vec<i64> = rows.iter().map(|r| r.row.id).collect();
        let rows = rows.into_iter().map(|r| r.row).collect();
        Ok(Page::new(with_variants(c, &ids, rows).await?, total))
    }

    async fn product_versions(
        &self,
        filter: &ProductFilter,
        page: PageRequest,
    ) -> StoreResult<Page<ProductVersion>> {
        // The page's ids and stamps with its total: one statement, the products' rows only.
        let mut c = self.pool.acquire().await.map_err(backend)?;
        let mut q = QueryBuilder::<DB>::new(concat!(
            "SELECT id, ",
            product_stamp!(),
            " AS updated_at, COUNT(*) OVER () AS total"
        ));
        push_product_filter(&mut q, filter)?;
        q.push(" ORDER BY id");
        let mut count = QueryBuilder::<DB>::new("SELECT COUNT(*)");
        push_product_filter(&mut count, filter)?;
        let (rows, total) =
            page_rows::<DB, VersionRow>(&mut c, q, count, page, filter.updated_since.is_some())
                .await?;
        let items = rows
            .into_iter()
            .map(|r| ProductVersion::new(ProductId::new(r.id), instant(r.updated_at)))
            .collect();
        Ok(Page::new(items, total))
    }

    async fn product(&self, id: ProductId) -> StoreResult<Option<Product>> {
        let mut tx = self.read().await?;
        let result = load_products(&mut tx.tx, &[id.into()]).await;
        Ok(tx.finish(result).await?.pop())
    }

    async fn removed_products(
        &self,
        since: DateTime<Utc>,
        page: PageRequest,
    ) -> StoreResult<Page<RemovedProduct>> {
        let mut c = self.pool.acquire().await.map_err(backend)?;
        let c = &mut c;
        let since = bound_nanos(since);
        let mut q = QueryBuilder::<DB>::new(
            "SELECT id, removed_at, COUNT(*) OVER () AS total FROM products WHERE removed_at >= ",
        );
        q.push_arg(since);
        q.push(" ORDER BY removed_at DESC, id DESC");
        let mut count =
            QueryBuilder::<DB>::new("SELECT COUNT(*) FROM products WHERE removed_at >= ");
        count.push_arg(since);
        let (rows, total) = page_rows::<DB, RemovedRow>(c, q, count, page, true).await?;
        let items = rows
            .into_iter()
            .map(|r| RemovedProduct::new(ProductId::new(r.id), instant(r.removed_at)))
            .collect();
        Ok(Page::new(items, total))
    }

    async fn catalog_changes(
        &self,
        after: Option<ChangePosition>,
        limit: usize,
    ) -> StoreResult<CatalogChanges> {
        crate::changes::read(self, after, limit).await
    }

    async fn newest_catalog_change(&self) -> StoreResult<Option<ChangePosition>> {
        crate::changes::newest(self).await
    }

    async fn products_of_variants(&self, variants: &[VariantId]) -> StoreResult<Vec<Product>> {
        if variants.is_empty() {
            return Ok(Vec::new());
        }
        let mut tx = self.read().await?;
        let result = async {
            let c = &mut tx.tx;
            // The products' rows found through their variants in the same statement (one
            // round trip fewer than reading the ids first), then their variants and warranties.
            let ids: Vec<i64> = variants.iter().map(|&v| v.into()).collect();
            let head = "id IN (SELECT product_id FROM variants WHERE id";
            let rows = product_rows(c, head, &ids, ")").await?;
            products_of_rows(c, rows).await
        }
        .await;
        tx.finish(result).await
    }

    async fn insert_governorate(&self, name: String) -> StoreResult<Governorate> {
        crate::shipping::insert_governorate(self, name).await
    }

    async fn governorates(&self) -> StoreResult<Vec<Governorate>> {
        crate::shipping::governorates(self).await
    }

    async fn insert_shipping_option(&self, name: String) -> StoreResult<ShippingOption> {
        crate::shipping::insert_shipping_option(self, name).await
    }

    async fn set_shipping_option_active(
        &self,
        id: ShippingOptionId,
        active: bool,
    ) -> StoreResult<ShippingOption> {
        crate::shipping::set_shipping_option_active(self, id, active).await
    }

    async fn set_shipping_rate(
        &self,
        option: ShippingOptionId,
        rate: ShippingRate,
    ) -> StoreResult<ShippingOption> {
        crate::shipping::set_shipping_rate(self, option, rate).await
    }

    async fn shipping_options(&self) -> StoreResult<Vec<ShippingOption>> {
        crate::shipping::shipping_options(self).await
    }
}

impl Totalled for RemovedRow {
    fn total(&self) -> i64 {
        self.total
    }
}

impl Totalled for VersionRow {
    fn total(&self) -> i64 {
        self.total
    }
}

impl Totalled for PagedProductRow {
    fn total(&self) -> i64 {
        self.total
    }
}
