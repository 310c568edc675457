//! Shipping: governorates, shipping options and what each charges per governorate.
use std::collections::HashMap;

use commerce_core::model::*;
use commerce_core::store::*;
use sqlx::pool::PoolConnection;

use crate::dialect::*;
use crate::rows::*;
use crate::sql_store::*;

pub(crate) async fn load_option<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    id: i64,
) -> StoreResult<ShippingOption> {
    load_options(c, Some(id))
        .await?
        .pop()
        .ok_or(StoreError::NotFound)
}

pub(crate) async fn load_options<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    only: Option<i64>,
) -> StoreResult<Vec<ShippingOption>> {
    let options: Vec<OptionRow> = query_as::<DB, OptionRow>(
        "SELECT id, name, active FROM shipping_options \
         WHERE $1 IS NULL OR id = $1 ORDER BY id",
    )
    .bind(only)
    .fetch_all(&mut *c)
    .await
    .map_err(backend)?;
    let rates: Vec<RateRow> = query_as::<DB, RateRow>(
        "SELECT r.option_id, r.governorate_id, g.name AS governorate_name, \
         r.delivery_charge, r.shipping_tax_percent, r.total_due_tax_percent \
         FROM shipping_rates r JOIN governorates g ON g.id = r.governorate_id \
         WHERE $1 IS NULL OR r.option_id = $1 \
         ORDER BY r.option_id, r.governorate_id",
    )
    .bind(only)
    .fetch_all(&mut *c)
    .await
    .map_err(backend)?;
    let mut by_option: HashMap<i64, Vec<ShippingRate>> = HashMap::new();
    for r in rates {
        by_option
            .entry(r.option_id)
            .or_default()
            .push(r.into_domain());
    }
    Ok(options
        .into_iter()
        .map(|o| {
            let rates = by_option.remove(&o.id).unwrap_or_default();
            o.into_domain(rates)
        })
        .collect())
}

pub(crate) async fn insert_governorate<DB: Dialect>(
    store: &SqlStore<DB>,
    name: String,
) -> StoreResult<Governorate> {
    let mut tx = store.write().await?;
    let result = query_scalar::<DB, i64>(
        "INSERT INTO governorates (name) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id",
    )
    .bind(&name)
    .fetch_optional(&mut tx.tx)
    .await
    .map_err(backend)
    .and_then(|id| id.ok_or(StoreError::Duplicate(Unique::GovernorateName)));
    let id = tx.finish(result).await?;
    Ok(Governorate::new(GovernorateId::new(id), name))
}

pub(crate) async fn governorates<DB: Dialect>(
    store: &SqlStore<DB>,
) -> StoreResult<Vec<Governorate>> {
    let rows: Vec<GovernorateRow> =
        query_as::<DB, GovernorateRow>("SELECT id, name FROM governorates ORDER BY id")
            .fetch_all(&store.pool)
            .await
            .map_err(backend)?;
    Ok(rows.into_iter().map(GovernorateRow::into_domain).collect())
}

pub(crate) async fn insert_shipping_option<DB: Dialect>(
    store: &SqlStore<DB>,
    name: String,
) -> StoreResult<ShippingOption> {
    let mut tx = store.write().await?;
    let result = query_scalar::<DB, i64>(
        "INSERT INTO shipping_options (name, active) VALUES ($1, TRUE) \
         RETURNING id",
    )
    .bind(&name)
    .fetch_one(&mut tx.tx)
    .await
    .map_err(backend);
    let id = tx.finish(result).await?;
    Ok(ShippingOption::new(
        ShippingOptionId::new(id),
        name,
        true,
        Vec::new(),
    ))
}

pub(crate) async fn set_shipping_option_active<DB: Dialect>(
    store: &SqlStore<DB>,
    id: ShippingOptionId,
    active: bool,
) -> StoreResult<ShippingOption> {
    let mut tx = store.write().await?;
    let result = async {
        let c = &mut tx.tx;
        let done = query::<DB>("UPDATE shipping_options SET active = $2 WHERE id = $1")
            .bind(id)
            .bind(active)
            .execute(&mut *c)
            .await
            .map_err(backend)?;
        found(done.rows_affected())?;
        load_option(c, id.into()).await
    }
    .await;
    tx.finish(result).await
}

pub(crate) async fn set_shipping_rate<DB: Dialect>(
    store: &SqlStore<DB>,
    option: ShippingOptionId,
    rate: ShippingRate,
) -> StoreResult<ShippingOption> {
    let charge = cents(rate.delivery_charge)?;
    let tax = cents(rate.shipping_tax_percent)?;
    let due = cents(rate.total_due_tax_percent)?;
    let mut tx = store.write().await?;
    let result = async {
        let c = &mut tx.tx;
        if !exists(
            c,
            "SELECT id FROM governorates WHERE id = $1",
            rate.governorate_id.into(),
        )
        .await?
        {
            return Err(StoreError::Invalid(format!(
                "no governorate {}",
                rate.governorate_id
            )));
        }
        if !exists(
            c,
            "SELECT id FROM shipping_options WHERE id = $1",
            option.into(),
        )
        .await?
        {
            return Err(StoreError::NotFound);
        }
        query::<DB>(
            "INSERT INTO shipping_rates (option_id, governorate_id, \
             delivery_charge, shipping_tax_percent, total_due_tax_percent) \
             VALUES ($1, $2, $3, $4, $5) \
             ON CONFLICT (option_id, governorate_id) DO UPDATE SET \
             delivery_charge = excluded.delivery_charge, \
             shipping_tax_percent = excluded.shipping_tax_percent, \
             total_due_tax_percent = excluded.total_due_tax_percent",
        )
        .bind(option)
        .bind(rate.governorate_id)
        .bind(charge)
        .bind(tax)
        .bind(due)
        .execute(&mut *c)
        .await
        .map_err(backend)?;
        load_option(c, option.into()).await
    }
    .await;
    tx.finish(result).await
}

pub(crate) async fn shipping_options<DB: Dialect>(
    store: &SqlStore<DB>,
) -> StoreResult<Vec<ShippingOption>> {
    let mut tx = store.read().await?;
    let result = load_options(&mut tx.tx, None).await;
    tx.finish(result).await
}
