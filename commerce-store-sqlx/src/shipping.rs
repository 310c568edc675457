//! Shipping: governorates, shipping options and what each charges per governorate.
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

/// The shipping options (all, or only the one `only` names) with their rates per governorate,
/// in one statement (one snapshot: no transaction needed), by option id then governorate id.
pub(crate) async fn load_options<DB: Dialect>(
    c: &mut PoolConnection<DB>,
    only: Option<i64>,
) -> StoreResult<Vec<ShippingOption>> {
    let rows: Vec<OptionAndRateRow> = query_as::<DB, OptionAndRateRow>(
        "SELECT o.id, o.name, o.active, r.option_id AS r_option_id, \
         r.governorate_id AS r_governorate_id, g.name AS r_governorate_name, \
         r.delivery_charge AS r_delivery_charge, \
         r.shipping_tax_percent AS r_shipping_tax_percent, \
         r.total_due_tax_percent AS r_total_due_tax_percent \
         FROM shipping_options o \
         LEFT JOIN shipping_rates r ON r.option_id = o.id \
         LEFT JOIN governorates g ON g.id = r.governorate_id \
         WHERE $1 IS NULL OR o.id = $1 \
         ORDER BY o.id, r.governorate_id",
    )
    .bind(only)
    .fetch_all(&mut *c)
    .await
    .map_err(backend)?;
    let mut options: Vec<(OptionRow, Vec<ShippingRate>)> = Vec::new();
    for mut row in rows {
        let rate = row.rate()?;
        match options.last_mut() {
            Some((option, rates)) if option.id == row.option.id => rates.extend(rate),
            _ => options.push((row.option, rate.into_iter().collect())),
        }
    }
    Ok(options
        .into_iter()
        .map(|(option, rates)| option.into_domain(rates))
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
    // One statement: no read transaction around it.
    let mut c = store.pool.acquire().await.map_err(backend)?;
    load_options(&mut c, None).await
}
