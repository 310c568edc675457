//! `GET /categories`, `GET /products`, `GET /products/removed`, `GET /products/{id}`.

use std::sync::Arc;

use bytes::Bytes;
use http::{Response, StatusCode};

use super::Ctx;
use crate::error::ApiError;
use crate::model::{BillingMonth, Category, CategoryId, Product, ProductFilter, ProductId};
use crate::rendered_products::Rendered;
use crate::time::cairo_timestamp;
use crate::web::input::Query;
use crate::web::messages;
use crate::web::wire::{self, CategoryView};

pub(super) async fn categories(
    ctx: &Ctx<'_>,
    raw_query: Option<&str>,
) -> Result<Response<Bytes>, ApiError> {
    let mut query = Query::parse(raw_query);
    let page = query.page();
    query.finish()?;
    let all = ctx
        .store()
        .shared_categories()
        .await
        .map_err(|e| ApiError::from_store(e, "shared_categories"))?;
    let active: Vec<CategoryView> = all
        .iter()
        .filter(|c| c.active)
        .map(CategoryView::from)
        .collect();
    let start = usize::try_from(page.offset())
        .unwrap_or(usize::MAX)
        .min(active.len());
    let end = (start + page.per_page() as usize).min(active.len());
    super::ok_list(&active[start..end], page, active.len() as u64)
}

/// The ids of a category and all its active descendants.
fn category_tree(all: &[Category], root: CategoryId) -> Vec<CategoryId> {
    let mut ids = vec![root];
    let mut index = 0;
    while index < ids.len() {
        let parent = ids[index];
        ids.extend(
            all.iter()
                .filter(|c| c.active && c.parent_id == Some(parent))
                .map(|c| c.id),
        );
        index += 1;
    }
    ids
}

/// The name of a category of `all` (by id, as the store lists them); empty for an unknown id.
fn category_name(all: &[Category], id: CategoryId) -> &str {
    all.binary_search_by_key(&id, |c| c.id)
        .map_or("", |at| all[at].name.as_str())
}

/// The JSON of a product (kept by the engine's rendered-product cache).
fn render(ctx: &Ctx<'_>, product: Arc<Product>, categories: &[Category]) -> Arc<Rendered> {
    let name = category_name(categories, product.category_id);
    ctx.shared.rendered_products.render(product, name)
}

/// Records the products a billed catalogue call returned (docs/billing.md).
pub(super) async fn bill_pulls(ctx: &Ctx<'_>, products: &[ProductId]) -> Result<(), ApiError> {
    let (account, month) = (ctx.caller.account.id, BillingMonth::of(ctx.now));
    let pulls_seen = &ctx.shared.pulls_seen;
    let unseen = pulls_seen.unseen(account, &month, products);
    if unseen.is_empty() {
        return Ok(());
    }
    ctx.store()
        .record_pulls(account, &month, &unseen)
        .await
        .map_err(|e| ApiError::from_store(e, "record_pulls"))?;
    pulls_seen.remember(account, &month, &unseen);
    Ok(())
}

pub(super) async fn products(
    ctx: &Ctx<'_>,
    raw_query: Option<&str>,
) -> Result<Response<Bytes>, ApiError> {
    let mut query = Query::parse(raw_query);
    let page = query.page();
    let category_id = query.integer("category_id", 1, i64::MAX);
    let updated_since = query.timestamp("updated_since");
    let search = query.string("q");
    query.finish()?;

    let categories = ctx
        .store()
        .shared_categories()
        .await
        .map_err(|e| ApiError::from_store(e, "shared_categories"))?;
    let category_ids = match category_id {
        Some(id) if categories.iter().any(|c| c.id == id && c.active) => Some(category_tree(
            &categories,
            crate::model::CategoryId::new(id),
        )),
        Some(_) => return Err(ApiError::field("category_id", messages::CATEGORY_NOT_FOUND)),
        None => None,
    };
    let filter = ProductFilter {
        category_ids,
        query: search,
        updated_since,
    };
    let found = ctx
        .store()
        .shared_products(&filter, page)
        .await
        .map_err(|e| ApiError::from_store(e, "shared_products"))?;
    let ids: Vec<ProductId> = found.items.iter().map(|p| p.id).collect();
    bill_pulls(ctx, &ids).await?;
    let pages = &ctx.shared.rendered_pages;
    if let Some(body) = pages.kept(&found.items, &categories, page, found.total) {
        return Ok(wire::json_response(StatusCode::OK, body));
    }
    let rendered: Vec<Arc<Rendered>> = found
        .items
        .iter()
        .map(|p| render(ctx, p.clone(), &categories))
        .collect();
    let body = pages.body(found.items, &categories, rendered, page, found.total);
    Ok(wire::json_response(StatusCode::OK, body))
}

/// `GET /products/removed?since=`: the products stopped at or after `since`, newest first;
/// not billed (no product data is returned).
pub(super) async fn removed_products(
    ctx: &Ctx<'_>,
    raw_query: Option<&str>,
) -> Result<Response<Bytes>, ApiError> {
    let mut query = Query::parse(raw_query);
    let page = query.page();
    let since = query.required_timestamp("since");
    query.finish()?;
    let Some(since) = since else {
        return Err(ApiError::server());
    };
    let found = ctx
        .store()
        .removed_products(since, page)
        .await
        .map_err(|e| ApiError::from_store(e, "removed_products"))?;
    let items: Vec<serde_json::Value> = found
        .items
        .iter()
        .map(|r| serde_json::json!({"id": r.id, "removed_at": cairo_timestamp(r.removed_at)}))
        .collect();
    super::ok_list(&items, page, found.total)
}

pub(super) async fn product(ctx: &Ctx<'_>, id: i64) -> Result<Response<Bytes>, ApiError> {
    let product = ctx
        .store()
        .shared_product(crate::model::ProductId::new(id))
        .await
        .map_err(|e| ApiError::from_store(e, "shared_product"))?
        .filter(|p| p.active)
        .ok_or_else(ApiError::not_found)?;
    let categories = ctx
        .store()
        .shared_categories()
        .await
        .map_err(|e| ApiError::from_store(e, "shared_categories"))?;
    bill_pulls(ctx, &[product.id]).await?;
    let rendered = render(ctx, product, &categories);
    super::ok_data(rendered.json())
}
