//! The catalogue's edits: a product, a category (its products stamped when renamed) and a
//! warranty, each read under its row's lock, changed by the rule of commerce-core
//! (`ProductPatch::apply`, `CategoryPatch::apply`, `WarrantyPatch::apply`) and written whole,
//! in one transaction.

use chrono::{DateTime, Utc};
use commerce_core::model::*;
use commerce_core::money::from_piastres;
use commerce_core::store::*;
use sqlx::AssertSqlSafe;
use sqlx::pool::PoolConnection;

use crate::dialect::*;
use crate::products::{load_product, revise_product, touch_products};
use crate::rows::*;
use crate::sql_store::*;

/// A unique index refused the write: `Duplicate(unique)`; any other failure: the backend's.
fn duplicate_or_backend(error: sqlx::Error, unique: Unique) -> StoreError {
    match error.as_database_error() {
        Some(e) if e.is_unique_violation() => StoreError::Duplicate(unique),
        _ => backend(error),
    }
}

/// [`CatalogStore::update_product`] in the caller's transaction.
pub(crate) async fn update_product<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    id: ProductId,
    patch: &ProductPatch,
    now: DateTime<Utc>,
) -> StoreResult<Product> {
    let at = nanos(now)?;
    if let Some(category) = patch.category_id
        && !exists(
            c,
            "SELECT id FROM categories WHERE id = $1",
            category.into(),
        )
        .await?
    {
        return Err(StoreError::Invalid(format!("no category {category}")));
    }
    // A new supplier ends the old one's pending quotes: their rows are locked first, as a
    // quote's decision locks its row before the variant's product (one order: no deadlock).
    let pending = if patch.supplier_id.is_some() {
        crate::supply::lock_pending_quotes(c, id).await?
    } else {
        Vec::new()
    };
    let locked: Option<i64> = query_scalar::<DB, i64>(AssertSqlSafe(format!(
        "SELECT id FROM products WHERE id = $1{}",
        DB::FOR_UPDATE
    )))
    .bind(id)
    .fetch_optional(&mut *c)
    .await
    .map_err(backend)?;
    let locked = locked.ok_or(StoreError::NotFound)?;
    let mut product = load_product(c, locked).await?;
    let supplier_before = product.supplier_id;
    patch.apply(&mut product);
    if product.supplier_id != supplier_before {
        crate::supply::end_pending_quotes(c, &pending, now).await?;
    }
    // The removal time as `removal_after` says when the patch sets `active` ($15), kept
    // otherwise (every right-hand side reads the row as it was before the update).
    query::<DB>(concat!(
        "UPDATE products SET title = $2, title_lower = $3, slug = $4, category_id = $5, \
         description = $6, images = $7, files = $8, video_url = $9, \
         marketing_files_url = $10, url = $11, supplier_id = $12, revision = revision + 1, \
         removed_at = CASE WHEN NOT $15 THEN removed_at WHEN $14 THEN NULL \
         WHEN active THEN $13 ELSE COALESCE(removed_at, $13) END, active = $14, ",
        updated_at_after!("$13"),
        " WHERE id = $1"
    ))
    .bind(id)
    .bind(&product.title)
    .bind(product.title.to_lowercase())
    .bind(&product.slug)
    .bind(product.category_id)
    .bind(&product.description)
    .bind(json_list(&product.images))
    .bind(json_list(&product.files))
    .bind(&product.video_url)
    .bind(&product.marketing_files_url)
    .bind(&product.url)
    .bind(product.supplier_id)
    .bind(at)
    .bind(product.active)
    .bind(patch.active.is_some())
    .execute(&mut *c)
    .await
    .map_err(|e| duplicate_or_backend(e, Unique::ProductSlug))?;
    load_product(c, id.into()).await
}

/// [`CatalogStore::update_category`] in the caller's transaction: every category's row
/// locked (in id order) and read, so that the parent rule sees the parents as they stand and
/// two concurrent moves cannot make a cycle; then the row, and the category's products when
/// it is renamed.
pub(crate) async fn update_category<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    id: CategoryId,
    patch: &CategoryPatch,
    now: DateTime<Utc>,
) -> StoreResult<Category> {
    let at = nanos(now)?;
    let rows: Vec<CategoryRow> = query_as::<DB, CategoryRow>(AssertSqlSafe(format!(
        concat!(
            "SELECT ",
            category_cols!(),
            " FROM categories ORDER BY id{}"
        ),
        DB::FOR_UPDATE
    )))
    .fetch_all(&mut *c)
    .await
    .map_err(backend)?;
    let all: Vec<Category> = rows.into_iter().map(CategoryRow::into_domain).collect();
    let mut category = all
        .iter()
        .find(|c| c.id == id)
        .cloned()
        .ok_or(StoreError::NotFound)?;
    patch.check_parent(id, |c| all.iter().find(|x| x.id == c).map(|x| x.parent_id))?;
    if let Some(slug) = &patch.slug
        && all.iter().any(|c| c.slug == *slug && c.id != id)
    {
        return Err(StoreError::Duplicate(Unique::CategorySlug));
    }
    let renamed = patch.renames(&category);
    patch.apply(&mut category);
    query::<DB>(
        "UPDATE categories SET name = $2, slug = $3, parent_id = $4, active = $5 WHERE id = $1",
    )
    .bind(id)
    .bind(&category.name)
    .bind(&category.slug)
    .bind(category.parent_id)
    .bind(category.active)
    .execute(&mut *c)
    .await
    .map_err(|e| duplicate_or_backend(e, Unique::CategorySlug))?;
    if renamed {
        // Locked in id order first, the order an order's placement and moves take products
        // in: a rename touching them in the table's order could deadlock with an order of
        // several of them (PostgreSQL; SQLite's write transaction holds the database).
        let shown: Vec<i64> = query_scalar::<DB, i64>(AssertSqlSafe(format!(
            "SELECT id FROM products WHERE category_id = $1 ORDER BY id{}",
            DB::FOR_UPDATE
        )))
        .bind(id)
        .fetch_all(&mut *c)
        .await
        .map_err(backend)?;
        touch_products(c, shown, at).await?;
    }
    Ok(category)
}

/// [`CatalogStore::update_warranty`] in the caller's transaction.
pub(crate) async fn update_warranty<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    id: WarrantyId,
    patch: &WarrantyPatch,
    now: DateTime<Utc>,
) -> StoreResult<Warranty> {
    let at = nanos(now)?;
    let row: WarrantyRow = query_as::<DB, WarrantyRow>(AssertSqlSafe(format!(
        concat!(
            "SELECT ",
            warranty_cols!(),
            " FROM warranties WHERE id = $1{}"
        ),
        DB::FOR_UPDATE
    )))
    .bind(id)
    .fetch_optional(&mut *c)
    .await
    .map_err(backend)?
    .ok_or(StoreError::NotFound)?;
    let mut warranty = row.into_domain();
    patch.apply(&mut warranty);
    // As stored: amounts through their piastres.
    for amount in [
        &mut warranty.admin_fee,
        &mut warranty.percent,
        &mut warranty.price_from,
    ] {
        *amount = from_piastres(cents(*amount)?);
    }
    query::<DB>(
        "UPDATE warranties SET name = $2, admin_fee = $3, percent = $4, price_from = $5, \
         duration_days = $6, terms = $7, icon_url = $8, active = $9 WHERE id = $1",
    )
    .bind(id)
    .bind(&warranty.name)
    .bind(cents(warranty.admin_fee)?)
    .bind(cents(warranty.percent)?)
    .bind(cents(warranty.price_from)?)
    .bind(warranty.duration_days)
    .bind(&warranty.terms)
    .bind(&warranty.icon_url)
    .bind(warranty.active)
    .execute(&mut *c)
    .await
    .map_err(backend)?;
    revise_product(c, warranty.product_id.into(), at).await?;
    Ok(warranty)
}
