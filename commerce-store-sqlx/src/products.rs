//! Product rows shared by the catalogue, its edits, stock and orders: reading products with
//! their variants and warranties, and stamping a product changed (stock) or revised (an edit).

use std::collections::HashMap;

use chrono::{DateTime, Utc};
use commerce_core::model::*;
use commerce_core::store::*;
use sqlx::QueryBuilder;
use sqlx::pool::PoolConnection;

use crate::dialect::*;
use crate::rows::*;
use crate::sql_store::*;
use crate::{MAX_BIND_CHUNK, in_list, push_list};

/// Pushes ` AND <id> <one of> (...)`: the products (`id`, the column naming them) whose row
/// in the catalogue change feed was stamped at `since` or later, what [`product_stamp!`]
/// reads as their `updated_at` (the feed's index on `at` finds them, then the products' own).
pub(crate) fn push_changed_since<DB: Dialect>(
    q: &mut QueryBuilder<DB>,
    id: &str,
    since: DateTime<Utc>,
) {
    let (open, close) = DB::ONE_OF_SELECT;
    q.push(format_args!(
        " AND {id}{open}SELECT product_id FROM catalog_changes WHERE at >= "
    ))
    .push_arg(bound_nanos(since))
    .push(close);
}

pub(crate) async fn load_products<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    ids: &[i64],
) -> StoreResult<Vec<Product>> {
    let rows = product_rows(c, "id", ids, "").await?;
    products_of_rows(c, rows).await
}

/// The products' rows that `SELECT <product columns> FROM products WHERE <head> <one of ids>
/// <tail>` selects (a statement per chunk of ids), by id, each once.
pub(crate) async fn product_rows<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    head: &str,
    ids: &[i64],
    tail: &str,
) -> StoreResult<Vec<ProductRow>> {
    let head = format!(
        concat!("SELECT ", product_cols!(), " FROM products WHERE {}"),
        head
    );
    let mut rows: Vec<ProductRow> = Vec::new();
    for chunk in ids.chunks(MAX_BIND_CHUNK) {
        let mut q = in_list::<DB, _>(&head, chunk, tail);
        let found: Vec<ProductRow> = q
            .build_as::<ProductRow>()
            .fetch_all(&mut *c)
            .await
            .map_err(backend)?;
        rows.extend(found);
    }
    rows.sort_unstable_by_key(|row| row.id);
    rows.dedup_by_key(|row| row.id);
    Ok(rows)
}

/// The products of `rows` (by id) with their variants and warranties, two statements per
/// chunk of them.
pub(crate) async fn products_of_rows<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    rows: Vec<ProductRow>,
) -> StoreResult<Vec<Product>> {
    let ids: Vec<i64> = rows.iter().map(|row| row.id).collect();
    let mut products = Vec::with_capacity(rows.len());
    let mut rows = rows.into_iter();
    for chunk in ids.chunks(MAX_BIND_CHUNK) {
        let chunk_rows = rows.by_ref().take(chunk.len()).collect();
        products.extend(with_variants(c, chunk, chunk_rows).await?);
    }
    Ok(products)
}

/// The products of `rows` (ids `chunk`, in that order) with their variants and
/// warranties (two statements).
pub(crate) async fn with_variants<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    chunk: &[i64],
    rows: Vec<ProductRow>,
) -> StoreResult<Vec<Product>> {
    if chunk.is_empty() {
        return Ok(Vec::new());
    }
    let mut q = in_list::<DB, _>(
        concat!(
            "SELECT ",
            variant_cols!(),
            " FROM variants WHERE product_id"
        ),
        chunk,
        " ORDER BY id",
    );
    let variants: Vec<VariantRow> = q
        .build_as::<VariantRow>()
        .fetch_all(&mut *c)
        .await
        .map_err(backend)?;
    let mut q = in_list::<DB, _>(
        concat!(
            "SELECT ",
            warranty_cols!(),
            " FROM warranties WHERE product_id"
        ),
        chunk,
        " ORDER BY id",
    );
    let warranties: Vec<WarrantyRow> = q
        .build_as::<WarrantyRow>()
        .fetch_all(&mut *c)
        .await
        .map_err(backend)?;
    let mut by_product: HashMap<i64, (Vec<Variant>, Vec<Warranty>)> = HashMap::new();
    for v in variants {
        let v = v.into_domain();
        by_product.entry(v.product_id.into()).or_default().0.push(v);
    }
    for w in warranties {
        let w = w.into_domain();
        by_product.entry(w.product_id.into()).or_default().1.push(w);
    }
    let mut found: HashMap<i64, Product> = HashMap::new();
    for row in rows {
        let (v, w) = by_product.remove(&row.id).unwrap_or_default();
        let id = row.id;
        found.insert(id, row.into_domain(v, w)?);
    }
    Ok(chunk.iter().filter_map(|id| found.remove(id)).collect())
}

pub(crate) async fn load_product<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    id: i64,
) -> StoreResult<Product> {
    load_products(c, &[id])
        .await?
        .pop()
        .ok_or(StoreError::NotFound)
}

/// Marks a product changed at `at` (a variant's stock changed); `NotFound` when there is no
/// such product.
pub(crate) async fn touch_product<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    product: i64,
    at: i64,
) -> StoreResult<()> {
    stamp_product(c, product, at, false).await
}

/// Marks a product edited at `at` (it, a variant or a warranty of it changed): its
/// `updated_at` and its revision ([`Product::revision`]) move on; `NotFound` when there is no
/// such product.
pub(crate) async fn revise_product<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    product: i64,
    at: i64,
) -> StoreResult<()> {
    stamp_product(c, product, at, true).await
}

async fn stamp_product<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    product: i64,
    at: i64,
    revise: bool,
) -> StoreResult<()> {
    let statement = if revise {
        concat!(
            "UPDATE products SET revision = revision + 1, ",
            updated_at_after!("$2"),
            " WHERE id = $1"
        )
    } else {
        concat!(
            "UPDATE products SET ",
            updated_at_after!("$2"),
            " WHERE id = $1"
        )
    };
    let done = query::<DB>(statement)
        .bind(product)
        .bind(at)
        .execute(&mut *c)
        .await
        .map_err(backend)?;
    found(done.rows_affected())?;
    Ok(())
}

pub(crate) async fn touch_products<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    mut products: Vec<i64>,
    now: i64,
) -> StoreResult<()> {
    products.sort_unstable();
    products.dedup();
    // `updated_at_after!` with the instant bound twice (a builder numbers each argument).
    for chunk in products.chunks(MAX_BIND_CHUNK) {
        let mut q = QueryBuilder::<DB>::new(
            "UPDATE products SET updated_at = CASE WHEN updated_at + 1000 > ",
        );
        q.push_arg(now)
            .push(" THEN updated_at + 1000 ELSE ")
            .push_arg(now);
        q.push(" END WHERE id IN (");
        push_list(&mut q, chunk);
        q.push(")");
        q.build_statement()
            .execute(&mut *c)
            .await
            .map_err(backend)?;
    }
    Ok(())
}
