//! `GET /categories`, `GET /products`, `GET /products/removed`, `GET /products/{id}`.

use bytes::Bytes;
use http::{Response, StatusCode};

use super::Ctx;
use crate::error::ApiError;
use crate::model::{BillingMonth, Category, CategoryId, ProductFilter, ProductId};
use crate::render::messages;
use crate::render::wire::{self, CategoryView};
use crate::time::cairo_timestamp;
use crate::web::input::Query;

pub(super) async fn categories(
    ctx: &Ctx<'_>,
    raw_query: Option<&str>,
) -> Result<Response<Bytes>, ApiError> {
    let mut query = Query::parse(raw_query);
    let page = query.page();
    query.finish()?;
    let all = ctx
        .store()
        .all_categories()
        .await
        .map_err(|e| ApiError::from_store(e, "all_categories"))?;
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

    let category_ids = match category_id {
        Some(id) => {
            let categories = ctx
                .store()
                .all_categories()
                .await
                .map_err(|e| ApiError::from_store(e, "all_categories"))?;
            if !categories.iter().any(|c| c.id == id && c.active) {
                return Err(ApiError::field("category_id", messages::CATEGORY_NOT_FOUND));
            }
            Some(category_tree(&categories, CategoryId::new(id)))
        }
        None => None,
    };
    let filter = ProductFilter {
        category_ids,
        query: search,
        updated_since,
    };
    // The engine's caching store answers from the kept JSON of the versions listed.
    let found = ctx
        .shared
        .store
        .product_page(&filter, page)
        .await
        .map_err(|e| ApiError::from_store(e, "product_page"))?;
    bill_pulls(ctx, &found.ids).await?;
    Ok(wire::json_response(StatusCode::OK, found.body))
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
    let id = ProductId::new(id);
    let rendered = ctx
        .shared
        .store
        .active_product(id)
        .await
        .map_err(|e| ApiError::from_store(e, "active_product"))?
        .ok_or_else(ApiError::not_found)?;
    bill_pulls(ctx, &[id]).await?;
    super::ok_data(rendered.json())
}
