//! The one implementation of [`Store`](commerce_core::store::Store), expanded for each backend.
//!
//! The SQL is shared text (`$N` placeholders work on both databases); what differs is passed
//! in as literals: the row-lock suffix (`FOR UPDATE` on PostgreSQL, nothing on SQLite, where a
//! write transaction already holds the database's single write lock) and the substring
//! function (`strpos` / `instr`), and whether a write of one statement still needs a
//! transaction (`single_statement_tx`: yes on SQLite, whose writes take the writer lock and
//! `BEGIN IMMEDIATE`; no on PostgreSQL, where the statement is atomic by itself). Each backend type provides `write()` (a transaction that may
//! write) and `read()` (a consistent read-only snapshot).

macro_rules! impl_store {
    (
        $store:ty,
        $db:ty,
        $conn:ty,
        for_update = $for_update:literal,
        instr = $instr:literal,
        single_statement_tx = $single_statement_tx:literal,
        rate_slots = $rate_slots:literal,
        timeline = $timeline:literal
    ) => {
        const _: () = {
            use std::collections::HashMap;

            use async_trait::async_trait;
            use chrono::{DateTime, Utc};
            use commerce_core::earnings::{EarningsTotals, OrderEarnings, WalletTotals};
            use commerce_core::model::*;
            use commerce_core::money::from_piastres;
            use rust_decimal::Decimal;
            use commerce_core::store::*;
            use sqlx::QueryBuilder;

            use crate::rate_slots::{lease_size, RateOutcome, Slots};
            use crate::rows::*;
            use crate::{in_list, MAX_BIND_CHUNK};

            type Conn = $conn;
            type StoreResult<T> = Result<T, StoreError>;

            async fn load_products(c: &mut Conn, ids: &[i64]) -> StoreResult<Vec<Product>> {
                let mut out = Vec::with_capacity(ids.len());
                for chunk in ids.chunks(MAX_BIND_CHUNK) {
                    let mut q = in_list::<$db>(
                        concat!("SELECT ", product_cols!(), " FROM products WHERE id IN ("),
                        chunk,
                        ") ORDER BY id",
                    );
                    let rows: Vec<ProductRow> =
                        q.build_query_as().fetch_all(&mut *c).await.map_err(backend)?;
                    out.extend(with_variants(c, chunk, rows).await?);
                }
                Ok(out)
            }

            /// The products of `rows` (ids `chunk`, in that order) with their variants and
            /// warranties (two statements).
            async fn with_variants(
                c: &mut Conn,
                chunk: &[i64],
                rows: Vec<ProductRow>,
            ) -> StoreResult<Vec<Product>> {
                if chunk.is_empty() {
                    return Ok(Vec::new());
                }
                let mut q = in_list::<$db>(
                    concat!("SELECT ", variant_cols!(), " FROM variants WHERE product_id IN ("),
                    chunk,
                    ") ORDER BY id",
                );
                let variants: Vec<VariantRow> =
                    q.build_query_as().fetch_all(&mut *c).await.map_err(backend)?;
                let mut q = in_list::<$db>(
                    concat!(
                        "SELECT ",
                        warranty_cols!(),
                        " FROM warranties WHERE product_id IN ("
                    ),
                    chunk,
                    ") ORDER BY id",
                );
                let warranties: Vec<WarrantyRow> =
                    q.build_query_as().fetch_all(&mut *c).await.map_err(backend)?;
                let mut by_product: HashMap<i64, (Vec<Variant>, Vec<Warranty>)> =
                    HashMap::new();
                for v in variants {
                    let v = v.into_domain();
                    by_product.entry(v.product_id).or_default().0.push(v);
                }
                for w in warranties {
                    let w = w.into_domain();
                    by_product.entry(w.product_id).or_default().1.push(w);
                }
                let mut found: HashMap<i64, Product> = HashMap::new();
                for row in rows {
                    let (v, w) = by_product.remove(&row.id).unwrap_or_default();
                    let id = row.id;
                    found.insert(id, row.into_domain(v, w)?);
                }
                Ok(chunk.iter().filter_map(|id| found.remove(id)).collect())
            }

            async fn load_product(c: &mut Conn, id: i64) -> StoreResult<Product> {
                load_products(c, &[id])
                    .await?
                    .pop()
                    .ok_or(StoreError::NotFound)
            }

            /// Marks a product changed at `at` (a variant or warranty of it changed);
            /// `NotFound` when there is no such product.
            async fn touch_product(c: &mut Conn, product: i64, at: i64) -> StoreResult<()> {
                let done = sqlx::query("UPDATE products SET updated_at = $2 WHERE id = $1")
                    .bind(product)
                    .bind(at)
                    .execute(&mut *c)
                    .await
                    .map_err(backend)?;
                if done.rows_affected() == 0 {
                    return Err(StoreError::NotFound);
                }
                Ok(())
            }

            async fn load_orders(c: &mut Conn, ids: &[i64]) -> StoreResult<Vec<Order>> {
                let mut out = Vec::with_capacity(ids.len());
                for chunk in ids.chunks(MAX_BIND_CHUNK) {
                    let mut q = in_list::<$db>(
                        concat!("SELECT ", order_cols!(), ", ", $timeline, " FROM orders WHERE id IN ("),
                        chunk,
                        ")",
                    );
                    let rows: Vec<OrderRow> =
                        q.build_query_as().fetch_all(&mut *c).await.map_err(backend)?;
                    out.extend(with_lines(c, chunk, rows).await?);
                }
                Ok(out)
            }

            /// The orders of `rows` (ids `chunk`, in that order) with their lines, the lines'
            /// warranties and their timelines (three statements).
            async fn with_lines(
                c: &mut Conn,
                chunk: &[i64],
                rows: Vec<OrderRow>,
            ) -> StoreResult<Vec<Order>> {
                if chunk.is_empty() {
                    return Ok(Vec::new());
                }
                // The lines with their warranties in one statement (a line appears once per
                // warranty, once with NULLs when it has none), in line order.
                let mut q = in_list::<$db>(
                    concat!(
                        "SELECT ",
                        line_and_warranty_cols!(),
                        " FROM order_lines l LEFT JOIN order_line_warranties w \
                         ON w.line_id = l.id WHERE l.order_id IN ("
                    ),
                    chunk,
                    ") ORDER BY l.order_id, l.position, w.position",
                );
                let rows_with_warranties: Vec<LineAndWarrantyRow> =
                    q.build_query_as().fetch_all(&mut *c).await.map_err(backend)?;
                let mut lines: Vec<(LineRow, Vec<LineWarranty>)> = Vec::new();
                for mut row in rows_with_warranties {
                    let warranty = row.warranty()?;
                    match lines.last_mut() {
                        Some((line, warranties)) if line.id == row.line.id => {
                            warranties.extend(warranty);
                        }
                        _ => lines.push((row.line, warranty.into_iter().collect())),
                    }
                }
                let mut order_lines: HashMap<i64, Vec<OrderLine>> = HashMap::new();
                for (l, w) in lines {
                    order_lines
                        .entry(l.order_id)
                        .or_default()
                        .push(l.into_domain(w));
                }
                let mut found: HashMap<i64, Order> = HashMap::new();
                for row in rows {
                    let id = row.id;
                    let l = order_lines.remove(&id).unwrap_or_default();
                    found.insert(id, row.into_domain(l)?);
                }
                Ok(chunk.iter().filter_map(|id| found.remove(id)).collect())
            }

            async fn load_order(c: &mut Conn, id: i64) -> StoreResult<Order> {
                load_orders(c, &[id]).await?.pop().ok_or(StoreError::NotFound)
            }

            async fn load_option(c: &mut Conn, id: i64) -> StoreResult<ShippingOption> {
                load_options(c, Some(id))
                    .await?
                    .pop()
                    .ok_or(StoreError::NotFound)
            }

            async fn load_options(
                c: &mut Conn,
                only: Option<i64>,
            ) -> StoreResult<Vec<ShippingOption>> {
                let options: Vec<OptionRow> = sqlx::query_as(
                    "SELECT id, name, active FROM shipping_options \
                     WHERE $1 IS NULL OR id = $1 ORDER BY id",
                )
                .bind(only)
                .fetch_all(&mut *c)
                .await
                .map_err(backend)?;
                let rates: Vec<RateRow> = sqlx::query_as(
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
                    by_option.entry(r.option_id).or_default().push(r.into_domain());
                }
                Ok(options
                    .into_iter()
                    .map(|o| {
                        let rates = by_option.remove(&o.id).unwrap_or_default();
                        o.into_domain(rates)
                    })
                    .collect())
            }

            async fn exists(c: &mut Conn, sql: &'static str, id: i64) -> StoreResult<bool> {
                let found: Option<i64> = sqlx::query_scalar(sql)
                    .bind(id)
                    .fetch_optional(&mut *c)
                    .await
                    .map_err(backend)?;
                Ok(found.is_some())
            }

            async fn key_by_id(c: &mut Conn, id: i64) -> StoreResult<Option<ApiKey>> {
                let row: Option<KeyRow> =
                    sqlx::query_as(concat!("SELECT ", key_cols!(), " FROM api_keys WHERE id = $1"))
                        .bind(id)
                        .fetch_optional(&mut *c)
                        .await
                        .map_err(backend)?;
                row.map(KeyRow::into_domain).transpose()
            }

            async fn bill(c: &mut Conn, account: i64, month: Option<&str>) -> StoreResult<()> {
                if let Some(month) = month {
                    sqlx::query(
                        "INSERT INTO meter_order_operations (account_id, month, operations) \
                         VALUES ($1, $2, 1) ON CONFLICT (account_id, month) \
                         DO UPDATE SET operations = meter_order_operations.operations + 1",
                    )
                    .bind(account)
                    .bind(month)
                    .execute(&mut *c)
                    .await
                    .map_err(backend)?;
                }
                Ok(())
            }

            /// Moves stock of variants (sorted by id, so that concurrent transactions lock in
            /// one order) and marks their products changed.
            async fn release_stock(
                c: &mut Conn,
                deltas: &[(i64, i64)],
                now: i64,
            ) -> StoreResult<()> {
                let mut products = Vec::new();
                for (variant, by) in deltas {
                    let product: Option<i64> = sqlx::query_scalar(
                        "UPDATE variants SET available = available + $2 WHERE id = $1 \
                         RETURNING product_id",
                    )
                    .bind(*variant)
                    .bind(*by)
                    .fetch_optional(&mut *c)
                    .await
                    .map_err(backend)?;
                    products.extend(product);
                }
                touch_products(c, products, now).await
            }

            async fn touch_products(
                c: &mut Conn,
                mut products: Vec<i64>,
                now: i64,
            ) -> StoreResult<()> {
                products.sort_unstable();
                products.dedup();
                // Only stamps that move are written (and locked).
                for chunk in products.chunks(MAX_BIND_CHUNK) {
                    let mut q = QueryBuilder::<$db>::new("UPDATE products SET updated_at = ");
                    q.push_bind(now).push(" WHERE updated_at < ").push_bind(now);
                    q.push(" AND id IN (");
                    let mut list = q.separated(", ");
                    for id in chunk {
                        list.push_bind(*id);
                    }
                    q.push(")");
                    q.build().execute(&mut *c).await.map_err(backend)?;
                }
                Ok(())
            }

            fn push_product_filter(q: &mut QueryBuilder<$db>, filter: &ProductFilter) -> StoreResult<()> {
                q.push(" FROM products WHERE active = TRUE");
                if let Some(ids) = &filter.category_ids {
                    if ids.is_empty() {
                        q.push(" AND 1 = 0");
                    } else {
                        q.push(" AND category_id IN (");
                        let mut s = q.separated(", ");
                        for id in ids {
                            s.push_bind(*id);
                        }
                        q.push(")");
                    }
                }
                if let Some(query) = &filter.query {
                    q.push(concat!(" AND ", $instr, "(title_lower, "))
                        .push_bind(query.to_lowercase())
                        .push(") > 0");
                }
                if let Some(since) = filter.updated_since {
                    q.push(" AND updated_at >= ").push_bind(bound_nanos(since));
                }
                Ok(())
            }

            fn push_order_filter(
                q: &mut QueryBuilder<$db>,
                account: i64,
                filter: &OrderFilter,
            ) -> StoreResult<()> {
                q.push(" FROM orders WHERE account_id = ").push_bind(account);
                if let Some(status) = filter.status {
                    q.push(" AND status = ").push_bind(status.as_str());
                }
                if let Some(family) = filter.family {
                    q.push(" AND family = ").push_bind(family.as_str());
                }
                if let Some(reference) = &filter.external_reference {
                    q.push(" AND external_reference = ").push_bind(reference.clone());
                }
                if let Some(number) = &filter.number {
                    q.push(" AND (number_normalized = ")
                        .push_bind(number.clone())
                        .push(" OR legacy_number = ")
                        .push_bind(number.clone())
                        .push(")");
                }
                if let Some(since) = filter.updated_since {
                    q.push(" AND updated_at >= ").push_bind(bound_nanos(since));
                }
                Ok(())
            }

            /// How many of the account's orders match `filter`: from the per-family counters
            /// (`account_order_counts`) when the filter is at most a family, else `COUNT(*)`.
            /// Whether the account's counters answer the filter's total (no filter, or
            /// `family` only).
            fn counts_answer(filter: &OrderFilter) -> bool {
                filter.status.is_none()
                    && filter.external_reference.is_none()
                    && filter.number.is_none()
                    && filter.updated_since.is_none()
            }

            async fn count_orders(
                c: &mut Conn,
                account: i64,
                filter: &OrderFilter,
            ) -> StoreResult<i64> {
                if !counts_answer(filter) {
                    let mut q = QueryBuilder::<$db>::new("SELECT COUNT(*)");
                    push_order_filter(&mut q, account, filter)?;
                    return q.build_query_scalar().fetch_one(&mut *c).await.map_err(backend);
                }
                sqlx::query_scalar(
                    "SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) FROM account_order_counts \
                     WHERE account_id = $1 AND ($2 IS NULL OR family = $2)",
                )
                .bind(account)
                .bind(filter.family.map(|f| f.as_str()))
                .fetch_one(&mut *c)
                .await
                .map_err(backend)
            }

            /// Applies `deltas` to the account's row of each family (in the order given: callers
            /// pass families sorted, so that concurrent transactions lock rows in one order).
            async fn count_families(
                c: &mut Conn,
                account: i64,
                deltas: &[FamilyDelta],
            ) -> StoreResult<()> {
                if deltas.is_empty() {
                    return Ok(());
                }
                let mut q = QueryBuilder::<$db>::new(
                    "INSERT INTO account_order_counts (account_id, family, count, net, commission) ",
                );
                q.push_values(deltas, |mut row, d| {
                    row.push_bind(account)
                        .push_bind(d.family)
                        .push_bind(d.count)
                        .push_bind(d.net)
                        .push_bind(d.commission);
                });
                q.push(
                    " ON CONFLICT (account_id, family) DO UPDATE SET \
                     count = account_order_counts.count + excluded.count, \
                     net = account_order_counts.net + excluded.net, \
                     commission = account_order_counts.commission + excluded.commission",
                );
                q.build().execute(&mut *c).await.map_err(backend)?;
                Ok(())
            }

            /// Books `order`'s earnings as it stands now (it was booked as `was`): writes them on
            /// its row and moves the account's family sums, in the caller's transaction.
            async fn rebook(c: &mut Conn, order: &Order, was: Booked) -> StoreResult<()> {
                let now = Booked::new(order.status.family(), OrderEarnings::of(order))?;
                if (now.net, now.commission) != (was.net, was.commission) {
                    sqlx::query(
                        "UPDATE orders SET earnings_net = $2, earnings_commission = $3 \
                         WHERE id = $1",
                    )
                    .bind(order.id)
                    .bind(now.net)
                    .bind(now.commission)
                    .execute(&mut *c)
                    .await
                    .map_err(backend)?;
                }
                count_families(c, order.account_id, &FamilyDelta::moving(was, now)).await
            }

            fn limit(q: &mut QueryBuilder<$db>, page: PageRequest) -> StoreResult<()> {
                let offset = i64::try_from(page.offset())
                    .map_err(|_| StoreError::Invalid("page out of range".into()))?;
                q.push(" LIMIT ")
                    .push_bind(i64::from(page.per_page))
                    .push(" OFFSET ")
                    .push_bind(offset);
                Ok(())
            }

            async fn place_order_in(c: &mut Conn, new: NewOrder) -> Result<Order, PlaceOrderError> {
                let t = &new.totals;
                let created = nanos(new.created_at)?;
                let booked = Booked::new(
                    new.status.family(),
                    OrderEarnings::undelivered(new.status, t),
                )?;
                let id: Option<i64> = sqlx::query_scalar(
                    "INSERT INTO orders (account_id, number, number_normalized, legacy_number, \
                     external_reference, status, family, customer_name, customer_phone, \
                     customer_second_phone, customer_address, governorate_id, governorate_name, \
                     shipping_option_id, shipping_option_name, store_name, store_link, note, \
                     products, warranties, delivery_charge, customer_total, profit, income_tax, \
                     net_profit, income_tax_percent, created_at, updated_at, earnings_net, \
                     earnings_commission) \
                     VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, \
                     $16, $17, $18, $19, $20, $21, $22, $23, $24, $25, $26, $27, $27, $28, $29) \
                     ON CONFLICT DO NOTHING RETURNING id",
                )
                .bind(new.account_id)
                .bind(&new.number)
                .bind(normalize_order_number(&new.number))
                .bind(&new.legacy_number)
                .bind(&new.external_reference)
                .bind(new.status.as_str())
                .bind(new.status.family().as_str())
                .bind(&new.customer.name)
                .bind(&new.customer.phone)
                .bind(&new.customer.second_phone)
                .bind(&new.customer.address)
                .bind(new.customer.governorate_id)
                .bind(&new.customer.governorate_name)
                .bind(new.shipping_option_id)
                .bind(&new.shipping_option_name)
                .bind(&new.store_name)
                .bind(&new.store_link)
                .bind(&new.note)
                .bind(cents(t.products)?)
                .bind(cents(t.warranties)?)
                .bind(cents(t.delivery_charge)?)
                .bind(cents(t.customer_total)?)
                .bind(cents(t.profit)?)
                .bind(cents(t.income_tax)?)
                .bind(cents(t.net_profit)?)
                .bind(cents(t.income_tax_percent)?)
                .bind(created)
                .bind(booked.net)
                .bind(booked.commission)
                .fetch_optional(&mut *c)
                .await
                .map_err(backend)?;
                let Some(id) = id else {
                    // A unique index refused the row (the conflicting transaction, if any, has
                    // finished by now): say which.
                    if let Some(reference) = &new.external_reference {
                        let existing: Option<(i64, String)> = sqlx::query_as(
                            "SELECT id, number FROM orders \
                             WHERE account_id = $1 AND external_reference = $2",
                        )
                        .bind(new.account_id)
                        .bind(reference)
                        .fetch_optional(&mut *c)
                        .await
                        .map_err(backend)?;
                        if let Some((existing_id, existing_number)) = existing {
                            return Err(PlaceOrderError::DuplicateExternalReference {
                                existing_id,
                                existing_number,
                            });
                        }
                    }
                    return Err(PlaceOrderError::NumberTaken);
                };

                // Lines, their warranties, the first timeline entry and the idempotency link
                // first; the rows other orders contend for (variant stock, product stamps,
                // counters, meter) last, so that their locks are held as briefly as possible.
                let line_ids = insert_lines(c, id, &new.lines).await?;
                sqlx::query(
                    "INSERT INTO order_timeline (order_id, status, at, reason) \
                     VALUES ($1, $2, $3, NULL)",
                )
                .bind(id)
                .bind(new.status.as_str())
                .bind(created)
                .execute(&mut *c)
                .await
                .map_err(backend)?;
                if let Some(scope) = &new.idempotency {
                    sqlx::query(
                        "UPDATE idempotency_records SET order_id = $3 \
                         WHERE account_id = $1 AND idem_key = $2",
                    )
                    .bind(scope.account_id)
                    .bind(&scope.key)
                    .bind(id)
                    .execute(&mut *c)
                    .await
                    .map_err(backend)?;
                }

                // Reserve stock variant by variant in id order (concurrent transactions lock
                // variants in one order: no deadlocks), each with one conditional update that
                // locks the row only when there is enough: never read-then-write. All lines
                // fit exactly when each variant's total fits.
                let mut wanted: std::collections::BTreeMap<i64, i64> =
                    std::collections::BTreeMap::new();
                for line in &new.lines {
                    *wanted.entry(line.variant_id).or_default() += line.quantity;
                }
                let mut products = Vec::with_capacity(wanted.len());
                let mut reserved: Vec<(i64, i64)> = Vec::with_capacity(wanted.len());
                for (&variant, &quantity) in &wanted {
                    let product: Option<i64> = sqlx::query_scalar(
                        "UPDATE variants SET available = available - $2 \
                         WHERE id = $1 AND available >= $2 RETURNING product_id",
                    )
                    .bind(variant)
                    .bind(quantity)
                    .fetch_optional(&mut *c)
                    .await
                    .map_err(backend)?;
                    match product {
                        Some(p) => {
                            products.push(p);
                            reserved.push((variant, quantity));
                        }
                        None => {
                            return Err(short_line(c, &new.lines, &reserved, variant).await?);
                        }
                    }
                }
                touch_products(c, products, created).await?;
                let counted = FamilyDelta {
                    family: booked.family.as_str(),
                    count: 1,
                    net: booked.net,
                    commission: booked.commission,
                };
                count_families(c, new.account_id, &[counted]).await?;
                bill(c, new.account_id, new.bill_month.as_deref()).await?;
                Ok(placed_order(id, new, line_ids, created)?)
            }

            /// Inserts the order's lines and their warranties (multi-row inserts); the lines'
            /// ids in line order.
            async fn insert_lines(
                c: &mut Conn,
                order: i64,
                lines: &[NewOrderLine],
            ) -> StoreResult<Vec<i64>> {
                const ROWS: usize = 100;
                let mut ids = vec![0i64; lines.len()];
                for (chunk_index, chunk) in lines.chunks(ROWS).enumerate() {
                    let first = chunk_index * ROWS;
                    let mut rows = Vec::with_capacity(chunk.len());
                    for (i, line) in chunk.iter().enumerate() {
                        let position = i32::try_from(first + i)
                            .map_err(|_| StoreError::Invalid("too many lines".into()))?;
                        rows.push((position, line, cents(line.sell_price)?, cents(line.profit)?));
                    }
                    let mut q = QueryBuilder::<$db>::new(
                        "INSERT INTO order_lines (order_id, position, variant_id, product_id, \
                         title, variant_label, quantity, sell_price, profit, commission_on, \
                         damaged_quantity, lost_quantity, destroyed_quantity) ",
                    );
                    q.push_values(&rows, |mut row, (position, line, sell, profit)| {
                        row.push_bind(order)
                            .push_bind(*position)
                            .push_bind(line.variant_id)
                            .push_bind(line.product_id)
                            .push_bind(line.title.as_str())
                            .push_bind(line.variant_label.as_str())
                            .push_bind(line.quantity)
                            .push_bind(*sell)
                            .push_bind(*profit)
                            .push_bind(line.commission_on)
                            .push_unseparated(", 0, 0, 0");
                    });
                    q.push(" RETURNING id, position");
                    let returned: Vec<(i64, i32)> =
                        q.build_query_as().fetch_all(&mut *c).await.map_err(backend)?;
                    if returned.len() != chunk.len() {
                        return Err(corrupt("inserted lines not all returned"));
                    }
                    for (line_id, position) in returned {
                        let slot = usize::try_from(position)
                            .ok()
                            .and_then(|p| ids.get_mut(p))
                            .ok_or_else(|| corrupt(format!("line position {position}")))?;
                        *slot = line_id;
                    }
                }
                let mut warranties = Vec::new();
                for (line, line_id) in lines.iter().zip(&ids) {
                    for (wpos, w) in line.warranties.iter().enumerate() {
                        let wpos = i32::try_from(wpos)
                            .map_err(|_| StoreError::Invalid("too many warranties".into()))?;
                        warranties.push((*line_id, wpos, w, cents(w.unit_price)?, cents(w.total)?));
                    }
                }
                for chunk in warranties.chunks(ROWS) {
                    let mut q = QueryBuilder::<$db>::new(
                        "INSERT INTO order_line_warranties (order_id, line_id, position, \
                         warranty_id, name, unit_price, quantity, total, duration_days, terms) ",
                    );
                    q.push_values(chunk, |mut row, (line_id, wpos, w, unit, total)| {
                        row.push_bind(order)
                            .push_bind(*line_id)
                            .push_bind(*wpos)
                            .push_bind(w.warranty_id)
                            .push_bind(w.name.as_str())
                            .push_bind(*unit)
                            .push_bind(w.quantity)
                            .push_bind(*total)
                            .push_bind(w.duration_days)
                            .push_bind(w.terms.as_str());
                    });
                    q.build().execute(&mut *c).await.map_err(backend)?;
                }
                Ok(ids)
            }

            /// The first line (in request order) that does not fit, as reserving line by line
            /// would find it: availability as before this order (the current value plus what
            /// this transaction reserved), taken down line by line.
            async fn short_line(
                c: &mut Conn,
                lines: &[NewOrderLine],
                reserved: &[(i64, i64)],
                short: i64,
            ) -> Result<PlaceOrderError, StoreError> {
                let mut ids: Vec<i64> = lines.iter().map(|l| l.variant_id).collect();
                ids.sort_unstable();
                ids.dedup();
                let mut available: HashMap<i64, i64> = HashMap::new();
                for chunk in ids.chunks(MAX_BIND_CHUNK) {
                    let mut q = in_list::<$db>(
                        "SELECT id, available FROM variants WHERE id IN (",
                        chunk,
                        ")",
                    );
                    let rows: Vec<(i64, i64)> =
                        q.build_query_as().fetch_all(&mut *c).await.map_err(backend)?;
                    available.extend(rows);
                }
                for (variant, quantity) in reserved {
                    if let Some(a) = available.get_mut(variant) {
                        *a += quantity;
                    }
                }
                for (index, line) in lines.iter().enumerate() {
                    match available.get_mut(&line.variant_id) {
                        Some(a) if *a >= line.quantity => *a -= line.quantity,
                        found => {
                            return Ok(PlaceOrderError::InsufficientStock {
                                line_index: index,
                                available: found.map_or(0, |a| (*a).max(0)),
                            });
                        }
                    }
                }
                // Every line fits now: the short variant's stock grew since its update.
                let line_index = lines.iter().position(|l| l.variant_id == short).unwrap_or(0);
                Ok(PlaceOrderError::InsufficientStock {
                    line_index,
                    available: available.get(&short).map_or(0, |a| (*a).max(0)),
                })
            }

            /// The order just inserted, built from what was written (amounts and instants
            /// through their stored forms, exactly as reading it back would give).
            fn placed_order(
                id: i64,
                mut new: NewOrder,
                line_ids: Vec<i64>,
                created: i64,
            ) -> StoreResult<Order> {
                let money = |amount: &mut Decimal| -> StoreResult<()> {
                    *amount = from_piastres(cents(*amount)?);
                    Ok(())
                };
                let t = &mut new.totals;
                for amount in [
                    &mut t.products,
                    &mut t.warranties,
                    &mut t.delivery_charge,
                    &mut t.customer_total,
                    &mut t.profit,
                    &mut t.income_tax,
                    &mut t.net_profit,
                    &mut t.income_tax_percent,
                ] {
                    money(amount)?;
                }
                for line in &mut new.lines {
                    money(&mut line.sell_price)?;
                    money(&mut line.profit)?;
                    for w in &mut line.warranties {
                        money(&mut w.unit_price)?;
                        money(&mut w.total)?;
                    }
                }
                new.created_at = instant(created);
                Ok(new.into_order(id, line_ids))
            }

            async fn change_status_in(
                c: &mut Conn,
                change: StatusChange,
            ) -> Result<Order, StatusChangeError> {
                let current: Option<(i64, String, Option<i64>, Option<i64>)> =
                    sqlx::query_as(concat!(
                        "SELECT account_id, status, earnings_net, earnings_commission \
                         FROM orders WHERE id = $1",
                        $for_update
                    ))
                    .bind(change.order_id)
                    .fetch_optional(&mut *c)
                    .await
                    .map_err(backend)?;
                let (account, current, was) = match current {
                    Some((a, s, net, commission)) if change.account_id.is_none_or(|x| x == a) => {
                        (a, status(&s)?, Booked::from_row(&s, net, commission)?)
                    }
                    _ => return Err(StatusChangeError::NotFound),
                };
                let allowed_from =
                    change.only_from.is_empty() || change.only_from.contains(&current);
                if !allowed_from || !current.can_move_to(change.to) {
                    return Err(StatusChangeError::NotAllowed {
                        current,
                        requested: change.to,
                    });
                }
                let at = nanos(change.at)?;
                if change.to.family() == Family::Cancelled && current.family() != Family::Cancelled
                {
                    let lines: Vec<(i64, i64)> = sqlx::query_as(
                        "SELECT variant_id, CAST(SUM(quantity) AS BIGINT) FROM order_lines WHERE order_id = $1 \
                         GROUP BY variant_id ORDER BY variant_id",
                    )
                    .bind(change.order_id)
                    .fetch_all(&mut *c)
                    .await
                    .map_err(backend)?;
                    release_stock(c, &lines, at).await?;
                }
                let confirmed = (change.to == OrderStatus::Confirmed).then_some(at);
                let delivered = matches!(
                    change.to,
                    OrderStatus::Delivered | OrderStatus::PartiallyDelivered
                )
                .then_some(at);
                sqlx::query(
                    "UPDATE orders SET status = $2, family = $3, updated_at = $4, \
                     confirmed_at = COALESCE($5, confirmed_at), \
                     delivered_at = COALESCE($6, delivered_at) WHERE id = $1",
                )
                .bind(change.order_id)
                .bind(change.to.as_str())
                .bind(change.to.family().as_str())
                .bind(at)
                .bind(confirmed)
                .bind(delivered)
                .execute(&mut *c)
                .await
                .map_err(backend)?;
                sqlx::query(
                    "INSERT INTO order_timeline (order_id, status, at, reason) \
                     VALUES ($1, $2, $3, $4)",
                )
                .bind(change.order_id)
                .bind(change.to.as_str())
                .bind(at)
                .bind(&change.reason)
                .execute(&mut *c)
                .await
                .map_err(backend)?;
                let order = load_order(c, change.order_id).await?;
                // The contended rows in the one order every operation takes them in (variants,
                // products, then the account's counters, then its meter): no deadlocks.
                rebook(c, &order, was).await?;
                bill(c, account, change.bill_month.as_deref()).await?;
                Ok(order)
            }

            async fn begin_idempotent_in(
                c: &mut Conn,
                scope: &IdempotencyScope,
                fingerprint: &str,
                now: i64,
                expires_before: i64,
                stale_before: i64,
            ) -> StoreResult<IdempotencyBegin> {
                // The unique key decides a race between first requests; the row lock decides
                // a race between takeovers. A record deleted between the two is retried.
                for _ in 0..5 {
                    let inserted: Option<i64> = sqlx::query_scalar(
                        "INSERT INTO idempotency_records (account_id, idem_key, fingerprint, \
                         created_at) VALUES ($1, $2, $3, $4) \
                         ON CONFLICT (account_id, idem_key) DO NOTHING RETURNING account_id",
                    )
                    .bind(scope.account_id)
                    .bind(&scope.key)
                    .bind(fingerprint)
                    .bind(now)
                    .fetch_optional(&mut *c)
                    .await
                    .map_err(backend)?;
                    if inserted.is_some() {
                        return Ok(IdempotencyBegin::Started);
                    }
                    let record: Option<IdempotencyRow> = sqlx::query_as(concat!(
                        "SELECT fingerprint, created_at, order_id, response_status, \
                         response_body FROM idempotency_records \
                         WHERE account_id = $1 AND idem_key = $2",
                        $for_update
                    ))
                    .bind(scope.account_id)
                    .bind(&scope.key)
                    .fetch_optional(&mut *c)
                    .await
                    .map_err(backend)?;
                    let Some(record) = record else { continue };
                    if record.created_at >= expires_before {
                        if record.fingerprint != fingerprint {
                            return Ok(IdempotencyBegin::Mismatch);
                        }
                        if let Some(response) = record.response()? {
                            return Ok(IdempotencyBegin::Replay(response));
                        }
                        if record.created_at >= stale_before {
                            return Ok(IdempotencyBegin::InFlight);
                        }
                        if let Some(order) = record.order_id {
                            sqlx::query(
                                "UPDATE idempotency_records SET created_at = $3 \
                                 WHERE account_id = $1 AND idem_key = $2",
                            )
                            .bind(scope.account_id)
                            .bind(&scope.key)
                            .bind(now)
                            .execute(&mut *c)
                            .await
                            .map_err(backend)?;
                            return Ok(IdempotencyBegin::Recovered(order));
                        }
                    }
                    sqlx::query(
                        "UPDATE idempotency_records SET fingerprint = $3, created_at = $4, \
                         order_id = NULL, response_status = NULL, response_body = NULL \
                         WHERE account_id = $1 AND idem_key = $2",
                    )
                    .bind(scope.account_id)
                    .bind(&scope.key)
                    .bind(fingerprint)
                    .bind(now)
                    .execute(&mut *c)
                    .await
                    .map_err(backend)?;
                    return Ok(IdempotencyBegin::Started);
                }
                Err(StoreError::backend(CorruptRow(
                    "idempotency record kept disappearing".into(),
                )))
            }

            /// A new window started: the key's older windows are done with.
            async fn forget_older_windows<'e, E>(executor: E, key: i64, window: i64) -> StoreResult<()>
            where
                E: sqlx::Executor<'e, Database = $db>,
            {
                sqlx::query("DELETE FROM rate_limit_windows WHERE key_id = $1 AND window_minute < $2")
                    .bind(key)
                    .bind(window)
                    .execute(executor)
                    .await
                    .map_err(backend)?;
                Ok(())
            }

            /// Counts a hit in the first slot still under its share, trying the slots from
            /// `start` on (see `rate_slots`); refused when every slot is full. Each try is one
            /// conditional upsert, atomic by itself; the first hit of a slot in a window deletes
            /// the key's older windows.
            async fn rate_limit_in(
                c: &mut Conn,
                key: i64,
                window: i64,
                limit: u32,
                start: u32,
            ) -> StoreResult<RateOutcome> {
                if limit == 0 {
                    return Ok(RateOutcome::Counted(RateLimitHit { allowed: false, used: 0 }));
                }
                let slots = Slots::new(limit, $rate_slots);
                let lease = lease_size(limit);
                if lease > 1 {
                    // A whole lease from the first slot that still holds one.
                    for slot in slots.from(start) {
                        let leased: Option<(i64, i64)> = sqlx::query_as(
                            "INSERT INTO rate_limit_windows (key_id, window_minute, slot, used) \
                             VALUES ($1, $2, $3, $4) ON CONFLICT (key_id, window_minute, slot) \
                             DO UPDATE SET used = rate_limit_windows.used + $4 \
                             WHERE rate_limit_windows.used + $4 <= $5 RETURNING used, \
                             (SELECT CAST(COALESCE(SUM(used), 0) AS BIGINT) FROM rate_limit_windows \
                              WHERE key_id = $1 AND window_minute = $2 AND slot <> $3)",
                        )
                        .bind(key)
                        .bind(window)
                        .bind(i64::from(slot))
                        .bind(i64::from(lease))
                        .bind(i64::from(slots.share(slot)))
                        .fetch_optional(&mut *c)
                        .await
                        .map_err(backend)?;
                        if let Some((used, others)) = leased {
                            if used == i64::from(lease) {
                                forget_older_windows(&mut *c, key, window).await?;
                            }
                            let counted = u32_of(used + others, "rate-limit count")?.min(limit);
                            return Ok(RateOutcome::Leased { tokens: lease, counted });
                        }
                    }
                }
                Ok(RateOutcome::Counted(count_one_in(c, key, window, slots, start).await?))
            }

            /// Counts one request in the first slot still under its share, from `start` on.
            async fn count_one_in(
                c: &mut Conn,
                key: i64,
                window: i64,
                slots: Slots,
                start: u32,
            ) -> StoreResult<RateLimitHit> {
                let limit = slots.limit();
                for slot in slots.from(start) {
                    // With one slot its count is the window's; with several, the other slots'
                    // counts as the statement began are added (for the remaining-requests header).
                    let sql = if slots.count() == 1 {
                        "INSERT INTO rate_limit_windows (key_id, window_minute, slot, used) \
                         VALUES ($1, $2, $3, 1) ON CONFLICT (key_id, window_minute, slot) \
                         DO UPDATE SET used = rate_limit_windows.used + 1 \
                         WHERE rate_limit_windows.used < $4 RETURNING used, used - 1"
                    } else {
                        "INSERT INTO rate_limit_windows (key_id, window_minute, slot, used) \
                         VALUES ($1, $2, $3, 1) ON CONFLICT (key_id, window_minute, slot) \
                         DO UPDATE SET used = rate_limit_windows.used + 1 \
                         WHERE rate_limit_windows.used < $4 RETURNING used, \
                         (SELECT CAST(COALESCE(SUM(used), 0) AS BIGINT) FROM rate_limit_windows \
                          WHERE key_id = $1 AND window_minute = $2)"
                    };
                    let counted: Option<(i64, i64)> = sqlx::query_as(sql)
                        .bind(key)
                        .bind(window)
                        .bind(i64::from(slot))
                        .bind(i64::from(slots.share(slot)))
                        .fetch_optional(&mut *c)
                        .await
                        .map_err(backend)?;
                    if let Some((used, before)) = counted {
                        if used == 1 {
                            forget_older_windows(&mut *c, key, window).await?;
                        }
                        let total = u32_of(before + 1, "rate-limit count")?.min(limit);
                        return Ok(RateLimitHit { allowed: true, used: total });
                    }
                }
                // Every slot is full: the window holds at least the limit (more if the limit
                // was lowered within it).
                let used: i64 = sqlx::query_scalar(
                    "SELECT CAST(COALESCE(SUM(used), 0) AS BIGINT) FROM rate_limit_windows \
                     WHERE key_id = $1 AND window_minute = $2",
                )
                .bind(key)
                .bind(window)
                .fetch_one(&mut *c)
                .await
                .map_err(backend)?;
                Ok(RateLimitHit { allowed: false, used: u32_of(used, "rate-limit count")? })
            }

            impl $store {
                /// Books the earnings of orders stored before the earnings columns existed
                /// (NULL), a batch per transaction; returns how many. Each row is booked once,
                /// also when several instances migrate at the same time.
                pub(crate) async fn book_unbooked_orders(&self) -> StoreResult<u64> {
                    let mut booked = 0;
                    loop {
                        let ids: Vec<i64> = sqlx::query_scalar(
                            "SELECT id FROM orders WHERE earnings_net IS NULL ORDER BY id LIMIT 200",
                        )
                        .fetch_all(&self.pool)
                        .await
                        .map_err(backend)?;
                        if ids.is_empty() {
                            return Ok(booked);
                        }
                        let mut tx = self.write().await?;
                        let result = async {
                            let c = &mut *tx.tx;
                            let mut count = 0;
                            for order in load_orders(c, &ids).await? {
                                let now = Booked::new(order.status.family(), OrderEarnings::of(&order))?;
                                let done = sqlx::query(
                                    "UPDATE orders SET earnings_net = $2, earnings_commission = $3 \
                                     WHERE id = $1 AND earnings_net IS NULL",
                                )
                                .bind(order.id)
                                .bind(now.net)
                                .bind(now.commission)
                                .execute(&mut *c)
                                .await
                                .map_err(backend)?;
                                if done.rows_affected() == 1 {
                                    let delta = FamilyDelta {
                                        family: now.family.as_str(),
                                        count: 0,
                                        net: now.net,
                                        commission: now.commission,
                                    };
                                    count_families(c, order.account_id, &[delta]).await?;
                                    count += 1;
                                }
                            }
                            Ok::<u64, StoreError>(count)
                        }
                        .await;
                        booked += tx.finish(result).await?;
                    }
                }
            }

            #[async_trait]
            impl AccountStore for $store {
                async fn insert_account(
                    &self,
                    new: NewAccount,
                    now: DateTime<Utc>,
                ) -> StoreResult<Account> {
                    let created = nanos(now)?;
                    let tx = self.write().await?;
                    let mut tx = tx;
                    let result = sqlx::query_scalar(
                        "INSERT INTO accounts (name, store_name, email, phone, side, state, \
                         api_status, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) \
                         RETURNING id",
                    )
                    .bind(&new.name)
                    .bind(&new.store_name)
                    .bind(&new.email)
                    .bind(&new.phone)
                    .bind(new.side.as_str())
                    .bind(new.state.as_str())
                    .bind(new.api_status.as_str())
                    .bind(created)
                    .fetch_one(&mut *tx.tx)
                    .await
                    .map_err(backend);
                    let id: i64 = tx.finish(result).await?;
                    Ok(new.into_account(id, now))
                }

                async fn account(&self, id: AccountId) -> StoreResult<Option<Account>> {
                    let row: Option<AccountRow> = sqlx::query_as(concat!(
                        "SELECT ",
                        account_cols!(),
                        " FROM accounts WHERE id = $1"
                    ))
                    .bind(id)
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(backend)?;
                    row.map(AccountRow::into_domain).transpose()
                }

                async fn set_account_state(
                    &self,
                    id: AccountId,
                    state: AccountState,
                    api_status: ApiStatus,
                ) -> StoreResult<Account> {
                    let mut tx = self.write().await?;
                    let result = sqlx::query_as::<_, AccountRow>(concat!(
                        "UPDATE accounts SET state = $2, api_status = $3 WHERE id = $1 RETURNING ",
                        account_cols!()
                    ))
                    .bind(id)
                    .bind(state.as_str())
                    .bind(api_status.as_str())
                    .fetch_optional(&mut *tx.tx)
                    .await
                    .map_err(backend)
                    .and_then(|r| r.ok_or(StoreError::NotFound));
                    tx.finish(result).await?.into_domain()
                }

                async fn insert_key(
                    &self,
                    key: NewKeyRecord,
                    now: DateTime<Utc>,
                ) -> StoreResult<ApiKey> {
                    let created = nanos(now)?;
                    let expires = opt_nanos(key.expires_at)?;
                    let mut tx = self.write().await?;
                    let result = async {
                        if !exists(&mut tx.tx, "SELECT id FROM accounts WHERE id = $1", key.account_id)
                            .await?
                        {
                            return Err(StoreError::NotFound);
                        }
                        let id: Option<i64> = sqlx::query_scalar(
                            "INSERT INTO api_keys (account_id, name, hash, abilities, expires_at, \
                             rate_limit, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7) \
                             ON CONFLICT (hash) DO NOTHING RETURNING id",
                        )
                        .bind(key.account_id)
                        .bind(&key.name)
                        .bind(key.hash.as_slice())
                        .bind(abilities_text(&key.abilities))
                        .bind(expires)
                        .bind(i64::from(key.rate_limit))
                        .bind(created)
                        .fetch_optional(&mut *tx.tx)
                        .await
                        .map_err(backend)?;
                        id.ok_or_else(|| StoreError::Invalid("key hash already stored".into()))
                    }
                    .await;
                    let id = tx.finish(result).await?;
                    Ok(key.into_key(id, now))
                }

                async fn key_by_hash(&self, hash: &KeyHash) -> StoreResult<Option<ApiKey>> {
                    let row: Option<KeyRow> = sqlx::query_as(concat!(
                        "SELECT ",
                        key_cols!(),
                        " FROM api_keys WHERE hash = $1"
                    ))
                    .bind(hash.as_slice())
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(backend)?;
                    row.map(KeyRow::into_domain).transpose()
                }

                async fn key(&self, id: KeyId) -> StoreResult<Option<ApiKey>> {
                    let mut c = self.pool.acquire().await.map_err(backend)?;
                    key_by_id(&mut c, id).await
                }

                async fn revoke_key(&self, id: KeyId, at: DateTime<Utc>) -> StoreResult<ApiKey> {
                    let at = nanos(at)?;
                    let mut tx = self.write().await?;
                    let result = sqlx::query_as::<_, KeyRow>(concat!(
                        "UPDATE api_keys SET revoked_at = COALESCE(revoked_at, $2) \
                         WHERE id = $1 RETURNING ",
                        key_cols!()
                    ))
                    .bind(id)
                    .bind(at)
                    .fetch_optional(&mut *tx.tx)
                    .await
                    .map_err(backend)
                    .and_then(|r| r.ok_or(StoreError::NotFound));
                    tx.finish(result).await?.into_domain()
                }

                async fn set_key_terms(
                    &self,
                    id: KeyId,
                    expires_at: Option<DateTime<Utc>>,
                    rate_limit: u32,
                ) -> StoreResult<ApiKey> {
                    let expires = opt_nanos(expires_at)?;
                    let mut tx = self.write().await?;
                    let result = sqlx::query_as::<_, KeyRow>(concat!(
                        "UPDATE api_keys SET expires_at = $2, rate_limit = $3 \
                         WHERE id = $1 RETURNING ",
                        key_cols!()
                    ))
                    .bind(id)
                    .bind(expires)
                    .bind(i64::from(rate_limit))
                    .fetch_optional(&mut *tx.tx)
                    .await
                    .map_err(backend)
                    .and_then(|r| r.ok_or(StoreError::NotFound));
                    tx.finish(result).await?.into_domain()
                }

                async fn hit_rate_limit(
                    &self,
                    key: KeyId,
                    window: i64,
                    limit: u32,
                ) -> StoreResult<RateLimitHit> {
                    // Each turn either hands out a leased request or visits the database,
                    // which counts one, refuses, or leases more (then the next turn hands one
                    // out, unless other tasks of this process took them all first).
                    loop {
                        if let Some(used) = self.full_windows.full(key, window, limit) {
                            return Ok(RateLimitHit { allowed: false, used });
                        }
                        if let Some(used) = self.leases.take(key, window, limit) {
                            return Ok(RateLimitHit { allowed: true, used });
                        }
                        let start = rand::random::<u32>();
                        let outcome = if $single_statement_tx {
                            let mut tx = self.write().await?;
                            let result = rate_limit_in(&mut tx.tx, key, window, limit, start).await;
                            tx.finish(result).await?
                        } else {
                            // Each statement is atomic on its own: no transaction to open.
                            let mut c = self.pool.acquire().await.map_err(backend)?;
                            rate_limit_in(&mut c, key, window, limit, start).await?
                        };
                        match outcome {
                            RateOutcome::Leased { tokens, counted } => {
                                self.leases.grant(key, window, limit, tokens, counted);
                            }
                            RateOutcome::Counted(hit) => {
                                if !hit.allowed {
                                    self.full_windows.mark_full(key, window, limit, hit.used);
                                }
                                return Ok(hit);
                            }
                        }
                    }
                }

                async fn authenticate(
                    &self,
                    hash: &KeyHash,
                    now: DateTime<Utc>,
                    window: i64,
                ) -> StoreResult<Option<KeyCheck>> {
                    if $single_statement_tx || self.leases.is_high_volume(hash) {
                        // SQLite (no data-modifying CTE), or a key allowed thousands a minute:
                        // read the key and its account in one statement, then count the request
                        // (from this process's lease when the key has one: a statement only
                        // when a new lease is needed).
                        let row: Option<AuthRow> = sqlx::query_as(concat!(
                            "SELECT k.*, ",
                            account_aliases!(),
                            ", NULL AS counted, NULL AS seen FROM api_keys k \
                             LEFT JOIN accounts a ON a.id = k.account_id WHERE k.hash = $1"
                        ))
                        .bind(hash.as_slice())
                        .fetch_optional(&self.pool)
                        .await
                        .map_err(backend)?;
                        let Some(row) = row else {
                            return Ok(None);
                        };
                        let (key, account, _) = row.into_parts()?;
                        if key.rate_limit < crate::rate_slots::PER_SLOT && !$single_statement_tx {
                            self.leases.forget_high_volume(hash);
                        }
                        if !key.is_live(now) {
                            return Ok(Some(KeyCheck::of(key, None, account)));
                        }
                        let hit = self.hit_rate_limit(key.id, window, key.rate_limit).await?;
                        return Ok(Some(KeyCheck::of(key, Some(hit), account)));
                    }
                    // One statement: the key, the rate-limit upsert in one random slot when
                    // the key is live (the same conditional upsert as `rate_limit_in`), and the
                    // account. When that slot is full, the other slots are tried after it.
                    let start = rand::random::<u32>();
                    let row: Option<AuthRow> = sqlx::query_as(concat!(
                        "WITH k AS (SELECT ",
                        key_cols!(),
                        " FROM api_keys WHERE hash = $1), \
                         s AS (SELECT id, rate_limit, \
                         GREATEST(LEAST($5, rate_limit / $6), 1) AS n FROM k), \
                         hit AS (INSERT INTO rate_limit_windows (key_id, window_minute, slot, used) \
                         SELECT id, $2, $4 % n, 1 FROM k JOIN s USING (id, rate_limit) \
                         WHERE revoked_at IS NULL AND (expires_at IS NULL OR expires_at > $3) \
                         AND rate_limit > 0 \
                         ON CONFLICT (key_id, window_minute, slot) \
                         DO UPDATE SET used = rate_limit_windows.used + 1 \
                         WHERE rate_limit_windows.used < (SELECT rate_limit / n + \
                         CASE WHEN $4 % n < rate_limit % n THEN 1 ELSE 0 END FROM s) \
                         RETURNING used) \
                         SELECT k.*, ",
                        account_aliases!(),
                        ", (SELECT used FROM hit) AS counted, \
                         (SELECT CAST(COALESCE(SUM(used), 0) AS BIGINT) FROM rate_limit_windows \
                          WHERE key_id = k.id AND window_minute = $2) AS seen \
                         FROM k LEFT JOIN accounts a ON a.id = k.account_id"
                    ))
                    .bind(hash.as_slice())
                    .bind(window)
                    .bind(bound_nanos(now))
                    .bind(i64::from(start))
                    .bind(i64::from($rate_slots))
                    .bind(i64::from(crate::rate_slots::PER_SLOT))
                    .fetch_optional(&self.pool)
                    .await
                    .map_err(backend)?;
                    let Some(row) = row else {
                        return Ok(None);
                    };
                    let (key, account, counted) = row.into_parts()?;
                    if key.rate_limit >= crate::rate_slots::PER_SLOT {
                        self.leases.mark_high_volume(*hash);
                    }
                    if !key.is_live(now) {
                        return Ok(Some(KeyCheck::of(key, None, account)));
                    }
                    let hit = match counted {
                        Some((used, seen)) => {
                            if used == 1 {
                                forget_older_windows(&self.pool, key.id, window).await?;
                            }
                            // The other slots as the statement began, plus this request.
                            let total = u32_of(seen + 1, "rate-limit count")?;
                            RateLimitHit { allowed: true, used: total.min(key.rate_limit) }
                        }
                        // That slot was full (or the limit is 0): every slot decides.
                        None => self.hit_rate_limit(key.id, window, key.rate_limit).await?,
                    };
                    Ok(Some(KeyCheck::of(key, Some(hit), account)))
                }
            }

            #[async_trait]
            impl CatalogStore for $store {
                async fn insert_category(&self, new: NewCategory) -> StoreResult<Category> {
                    let mut tx = self.write().await?;
                    let result = async {
                        if let Some(parent) = new.parent_id {
                            if !exists(&mut tx.tx, "SELECT id FROM categories WHERE id = $1", parent)
                                .await?
                            {
                                return Err(StoreError::Invalid(format!(
                                    "no parent category {parent}"
                                )));
                            }
                        }
                        sqlx::query_scalar(
                            "INSERT INTO categories (name, slug, parent_id, active) \
                             VALUES ($1, $2, $3, TRUE) RETURNING id",
                        )
                        .bind(&new.name)
                        .bind(&new.slug)
                        .bind(new.parent_id)
                        .fetch_one(&mut *tx.tx)
                        .await
                        .map_err(backend)
                    }
                    .await;
                    let id = tx.finish(result).await?;
                    Ok(new.into_category(id))
                }

                async fn set_category_active(
                    &self,
                    id: CategoryId,
                    active: bool,
                ) -> StoreResult<Category> {
                    let mut tx = self.write().await?;
                    let result = sqlx::query_as::<_, CategoryRow>(concat!(
                        "UPDATE categories SET active = $2 WHERE id = $1 RETURNING ",
                        category_cols!()
                    ))
                    .bind(id)
                    .bind(active)
                    .fetch_optional(&mut *tx.tx)
                    .await
                    .map_err(backend)
                    .and_then(|r| r.ok_or(StoreError::NotFound));
                    Ok(tx.finish(result).await?.into_domain())
                }

                async fn all_categories(&self) -> StoreResult<Vec<Category>> {
                    let rows: Vec<CategoryRow> = sqlx::query_as(concat!(
                        "SELECT ",
                        category_cols!(),
                        " FROM categories ORDER BY id"
                    ))
                    .fetch_all(&self.pool)
                    .await
                    .map_err(backend)?;
                    Ok(rows.into_iter().map(CategoryRow::into_domain).collect())
                }

                async fn insert_product(
                    &self,
                    new: NewProduct,
                    now: DateTime<Utc>,
                ) -> StoreResult<Product> {
                    let at = nanos(now)?;
                    let mut tx = self.write().await?;
                    let result = async {
                        if !exists(
                            &mut tx.tx,
                            "SELECT id FROM categories WHERE id = $1",
                            new.category_id,
                        )
                        .await?
                        {
                            return Err(StoreError::Invalid(format!(
                                "no category {}",
                                new.category_id
                            )));
                        }
                        sqlx::query_scalar(
                            "INSERT INTO products (title, title_lower, slug, category_id, \
                             description, images, files, video_url, marketing_files_url, url, \
                             active, updated_at) \
                             VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, TRUE, $11) \
                             RETURNING id",
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
                        .fetch_one(&mut *tx.tx)
                        .await
                        .map_err(backend)
                    }
                    .await;
                    let id = tx.finish(result).await?;
                    Ok(new.into_product(id, now))
                }

                async fn set_product_active(
                    &self,
                    id: ProductId,
                    active: bool,
                    now: DateTime<Utc>,
                ) -> StoreResult<Product> {
                    let at = nanos(now)?;
                    let mut tx = self.write().await?;
                    let result = async {
                        let c = &mut *tx.tx;
                        let done = sqlx::query(
                            "UPDATE products SET active = $2, updated_at = $3 WHERE id = $1",
                        )
                        .bind(id)
                        .bind(active)
                        .bind(at)
                        .execute(&mut *c)
                        .await
                        .map_err(backend)?;
                        if done.rows_affected() == 0 {
                            return Err(StoreError::NotFound);
                        }
                        load_product(c, id).await
                    }
                    .await;
                    tx.finish(result).await
                }

                async fn insert_variant(
                    &self,
                    product: ProductId,
                    new: NewVariant,
                    now: DateTime<Utc>,
                ) -> StoreResult<Variant> {
                    let at = nanos(now)?;
                    let (price, min, max) =
                        (cents(new.price)?, cents(new.suggested_min)?, cents(new.suggested_max)?);
                    let mut tx = self.write().await?;
                    let result = async {
                        let c = &mut *tx.tx;
                        touch_product(c, product, at).await?;
                        sqlx::query_scalar(
                            "INSERT INTO variants (product_id, label, price, suggested_min, \
                             suggested_max, available) VALUES ($1, $2, $3, $4, $5, $6) \
                             RETURNING id",
                        )
                        .bind(product)
                        .bind(&new.label)
                        .bind(price)
                        .bind(min)
                        .bind(max)
                        .bind(new.available)
                        .fetch_one(&mut *c)
                        .await
                        .map_err(backend)
                    }
                    .await;
                    let id = tx.finish(result).await?;
                    Ok(new.into_variant(id, product))
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
                    let mut tx = self.write().await?;
                    let result = async {
                        let c = &mut *tx.tx;
                        let row: VariantRow = sqlx::query_as(concat!(
                            "UPDATE variants SET price = COALESCE($2, price), \
                             suggested_min = COALESCE($3, suggested_min), \
                             suggested_max = COALESCE($4, suggested_max), \
                             available = COALESCE($5, available) WHERE id = $1 RETURNING ",
                            variant_cols!()
                        ))
                        .bind(id)
                        .bind(price)
                        .bind(min)
                        .bind(max)
                        .bind(patch.available)
                        .fetch_optional(&mut *c)
                        .await
                        .map_err(backend)?
                        .ok_or(StoreError::NotFound)?;
                        let variant = row.into_domain();
                        touch_product(c, variant.product_id, at).await?;
                        Ok(variant)
                    }
                    .await;
                    tx.finish(result).await
                }

                async fn insert_warranty(
                    &self,
                    product: ProductId,
                    new: NewWarranty,
                    now: DateTime<Utc>,
                ) -> StoreResult<Warranty> {
                    let at = nanos(now)?;
                    let (fee, percent, from) =
                        (cents(new.admin_fee)?, cents(new.percent)?, cents(new.price_from)?);
                    let mut tx = self.write().await?;
                    let result = async {
                        let c = &mut *tx.tx;
                        touch_product(c, product, at).await?;
                        sqlx::query_scalar(
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
                    Ok(new.into_warranty(id, product))
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
                        let c = &mut *tx.tx;
                        let row: WarrantyRow = sqlx::query_as(concat!(
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
                        touch_product(c, warranty.product_id, at).await?;
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
                    let mut q = QueryBuilder::<$db>::new(concat!(
                        "SELECT ",
                        product_cols!(),
                        ", COUNT(*) OVER () AS total"
                    ));
                    push_product_filter(&mut q, filter)?;
                    q.push(" ORDER BY id");
                    limit(&mut q, page)?;
                    let rows: Vec<PagedProductRow> =
                        q.build_query_as().fetch_all(&mut *c).await.map_err(backend)?;
                    let total = match rows.first() {
                        Some(first) => first.total,
                        None if page.offset() == 0 => 0,
                        None => {
                            // Past the last page: count on its own.
                            let mut q = QueryBuilder::<$db>::new("SELECT COUNT(*)");
                            push_product_filter(&mut q, filter)?;
                            q.build_query_scalar().fetch_one(&mut *c).await.map_err(backend)?
                        }
                    };
                    let ids: Vec<i64> = rows.iter().map(|r| r.row.id).collect();
                    let rows = rows.into_iter().map(|r| r.row).collect();
                    Ok(Page {
                        items: with_variants(&mut c, &ids, rows).await?,
                        total: total as u64,
                    })
                }

                async fn product(&self, id: ProductId) -> StoreResult<Option<Product>> {
                    let mut tx = self.read().await?;
                    let result = load_products(&mut tx.tx, &[id]).await;
                    Ok(tx.finish(result).await?.pop())
                }

                async fn products_of_variants(
                    &self,
                    variants: &[VariantId],
                ) -> StoreResult<Vec<Product>> {
                    if variants.is_empty() {
                        return Ok(Vec::new());
                    }
                    let mut tx = self.read().await?;
                    let result = async {
                        let c = &mut *tx.tx;
                        let mut ids = Vec::new();
                        for chunk in variants.chunks(MAX_BIND_CHUNK) {
                            let mut q = in_list::<$db>(
                                "SELECT DISTINCT product_id FROM variants WHERE id IN (",
                                chunk,
                                ")",
                            );
                            let found: Vec<i64> = q
                                .build_query_scalar()
                                .fetch_all(&mut *c)
                                .await
                                .map_err(backend)?;
                            ids.extend(found);
                        }
                        ids.sort_unstable();
                        ids.dedup();
                        load_products(c, &ids).await
                    }
                    .await;
                    tx.finish(result).await
                }

                async fn insert_governorate(&self, name: String) -> StoreResult<Governorate> {
                    let mut tx = self.write().await?;
                    let result = sqlx::query_scalar(
                        "INSERT INTO governorates (name) VALUES ($1) RETURNING id",
                    )
                    .bind(&name)
                    .fetch_one(&mut *tx.tx)
                    .await
                    .map_err(backend);
                    let id = tx.finish(result).await?;
                    Ok(Governorate { id, name })
                }

                async fn governorates(&self) -> StoreResult<Vec<Governorate>> {
                    let rows: Vec<GovernorateRow> =
                        sqlx::query_as("SELECT id, name FROM governorates ORDER BY id")
                            .fetch_all(&self.pool)
                            .await
                            .map_err(backend)?;
                    Ok(rows.into_iter().map(GovernorateRow::into_domain).collect())
                }

                async fn insert_shipping_option(&self, name: String) -> StoreResult<ShippingOption> {
                    let mut tx = self.write().await?;
                    let result = sqlx::query_scalar(
                        "INSERT INTO shipping_options (name, active) VALUES ($1, TRUE) \
                         RETURNING id",
                    )
                    .bind(&name)
                    .fetch_one(&mut *tx.tx)
                    .await
                    .map_err(backend);
                    let id = tx.finish(result).await?;
                    Ok(ShippingOption {
                        id,
                        name,
                        active: true,
                        rates: Vec::new(),
                    })
                }

                async fn set_shipping_option_active(
                    &self,
                    id: ShippingOptionId,
                    active: bool,
                ) -> StoreResult<ShippingOption> {
                    let mut tx = self.write().await?;
                    let result = async {
                        let c = &mut *tx.tx;
                        let done =
                            sqlx::query("UPDATE shipping_options SET active = $2 WHERE id = $1")
                                .bind(id)
                                .bind(active)
                                .execute(&mut *c)
                                .await
                                .map_err(backend)?;
                        if done.rows_affected() == 0 {
                            return Err(StoreError::NotFound);
                        }
                        load_option(c, id).await
                    }
                    .await;
                    tx.finish(result).await
                }

                async fn set_shipping_rate(
                    &self,
                    option: ShippingOptionId,
                    rate: ShippingRate,
                ) -> StoreResult<ShippingOption> {
                    let charge = cents(rate.delivery_charge)?;
                    let tax = cents(rate.shipping_tax_percent)?;
                    let due = cents(rate.total_due_tax_percent)?;
                    let mut tx = self.write().await?;
                    let result = async {
                        let c = &mut *tx.tx;
                        if !exists(c, "SELECT id FROM governorates WHERE id = $1", rate.governorate_id)
                            .await?
                        {
                            return Err(StoreError::Invalid(format!(
                                "no governorate {}",
                                rate.governorate_id
                            )));
                        }
                        if !exists(c, "SELECT id FROM shipping_options WHERE id = $1", option).await? {
                            return Err(StoreError::NotFound);
                        }
                        sqlx::query(
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
                        load_option(c, option).await
                    }
                    .await;
                    tx.finish(result).await
                }

                async fn shipping_options(&self) -> StoreResult<Vec<ShippingOption>> {
                    let mut tx = self.read().await?;
                    let result = load_options(&mut tx.tx, None).await;
                    tx.finish(result).await
                }
            }

            #[async_trait]
            impl OrderStore for $store {
                async fn place_order(&self, order: NewOrder) -> Result<Order, PlaceOrderError> {
                    let mut tx = self.write().await?;
                    let result = place_order_in(&mut tx.tx, order).await;
                    tx.finish(result).await
                }

                async fn change_order_status(
                    &self,
                    change: StatusChange,
                ) -> Result<Order, StatusChangeError> {
                    let mut tx = self.write().await?;
                    let result = change_status_in(&mut tx.tx, change).await;
                    tx.finish(result).await
                }

                async fn set_line_outcomes(
                    &self,
                    order: OrderId,
                    outcomes: Vec<(LineId, LineOutcome)>,
                    now: DateTime<Utc>,
                ) -> StoreResult<Order> {
                    let at = nanos(now)?;
                    let mut tx = self.write().await?;
                    let result = async {
                        let c = &mut *tx.tx;
                        let row: Option<(String, Option<i64>, Option<i64>)> = sqlx::query_as(
                            "UPDATE orders SET updated_at = $2 WHERE id = $1 \
                             RETURNING status, earnings_net, earnings_commission",
                        )
                        .bind(order)
                        .bind(at)
                        .fetch_optional(&mut *c)
                        .await
                        .map_err(backend)?;
                        let Some((status_text, net, commission)) = row else {
                            return Err(StoreError::NotFound);
                        };
                        let was = Booked::from_row(&status_text, net, commission)?;
                        for (line, outcome) in &outcomes {
                            let done = sqlx::query(
                                "UPDATE order_lines SET delivered_quantity = $3, \
                                 returned_quantity = $4, damaged_quantity = $5, \
                                 lost_quantity = $6, destroyed_quantity = $7 \
                                 WHERE id = $1 AND order_id = $2",
                            )
                            .bind(*line)
                            .bind(order)
                            .bind(outcome.delivered_quantity)
                            .bind(outcome.returned_quantity)
                            .bind(outcome.damaged_quantity)
                            .bind(outcome.lost_quantity)
                            .bind(outcome.destroyed_quantity)
                            .execute(&mut *c)
                            .await
                            .map_err(backend)?;
                            if done.rows_affected() == 0 {
                                return Err(StoreError::NotFound);
                            }
                        }
                        let order = load_order(c, order).await?;
                        rebook(c, &order, was).await?;
                        Ok(order)
                    }
                    .await;
                    tx.finish(result).await
                }

                async fn set_tracking_url(
                    &self,
                    order: OrderId,
                    url: Option<String>,
                    now: DateTime<Utc>,
                ) -> StoreResult<Order> {
                    let at = nanos(now)?;
                    let mut tx = self.write().await?;
                    let result = async {
                        let c = &mut *tx.tx;
                        let done = sqlx::query(
                            "UPDATE orders SET tracking_url = $2, updated_at = $3 WHERE id = $1",
                        )
                        .bind(order)
                        .bind(&url)
                        .bind(at)
                        .execute(&mut *c)
                        .await
                        .map_err(backend)?;
                        if done.rows_affected() == 0 {
                            return Err(StoreError::NotFound);
                        }
                        load_order(c, order).await
                    }
                    .await;
                    tx.finish(result).await
                }

                async fn order(
                    &self,
                    account: Option<AccountId>,
                    id: OrderId,
                ) -> StoreResult<Option<Order>> {
                    // Two statements, no transaction: the order row carries its status and
                    // timeline together; its lines only change in their outcomes.
                    let mut c = self.pool.acquire().await.map_err(backend)?;
                    let order = load_orders(&mut c, &[id]).await?.pop();
                    Ok(order.filter(|o| account.is_none_or(|a| a == o.account_id)))
                }

                async fn orders(
                    &self,
                    account: AccountId,
                    filter: &OrderFilter,
                    page: PageRequest,
                ) -> StoreResult<Page<Order>> {
                    // The page with its total and each order's timeline in one statement
                    // (the total from the account's counters when the filter allows), then
                    // the lines with their warranties; no transaction: an order's status and
                    // timeline come from the same statement, and its lines only change in
                    // their outcomes.
                    let mut conn = self.pool.acquire().await.map_err(backend)?;
                    async {
                        let c = &mut *conn;
                        let mut q = QueryBuilder::<$db>::new(concat!(
                            "SELECT ",
                            order_cols!(),
                            ", ",
                            $timeline,
                            ", "
                        ));
                        if counts_answer(filter) {
                            q.push(
                                "(SELECT CAST(COALESCE(SUM(count), 0) AS BIGINT) \
                                 FROM account_order_counts WHERE account_id = ",
                            )
                            .push_bind(account);
                            if let Some(family) = filter.family {
                                q.push(" AND family = ").push_bind(family.as_str());
                            }
                            q.push(") AS total");
                        } else {
                            q.push("COUNT(*) OVER () AS total");
                        }
                        push_order_filter(&mut q, account, filter)?;
                        q.push(" ORDER BY created_at DESC, id DESC");
                        limit(&mut q, page)?;
                        let rows: Vec<PagedOrderRow> =
                            q.build_query_as().fetch_all(&mut *c).await.map_err(backend)?;
                        let total = match rows.first() {
                            Some(first) => first.total,
                            None if page.offset() == 0 && !counts_answer(filter) => 0,
                            None => count_orders(c, account, filter).await?,
                        };
                        let ids: Vec<i64> = rows.iter().map(|r| r.row.id).collect();
                        let rows = rows.into_iter().map(|r| r.row).collect();
                        Ok(Page {
                            items: with_lines(c, &ids, rows).await?,
                            total: total as u64,
                        })
                    }
                    .await
                }

                async fn wallet_totals(
                    &self,
                    account: AccountId,
                    held_after: DateTime<Utc>,
                ) -> StoreResult<WalletTotals> {
                    // One statement (one snapshot): the family sums plus the orders delivered
                    // within the hold period (`orders_delivered` index).
                    let (expected, settled, settled_commission, held, earliest): (
                        i64,
                        i64,
                        i64,
                        i64,
                        Option<i64>,
                    ) = sqlx::query_as(
                        "SELECT \
                         (SELECT CAST(COALESCE(SUM(net), 0) AS BIGINT) FROM account_order_counts \
                          WHERE account_id = $1 AND family IN ('pending', 'confirmed', 'shipping')), \
                         (SELECT CAST(COALESCE(SUM(net), 0) AS BIGINT) FROM account_order_counts \
                          WHERE account_id = $1 AND family IN ('delivered', 'archived')), \
                         (SELECT CAST(COALESCE(SUM(commission), 0) AS BIGINT) \
                          FROM account_order_counts \
                          WHERE account_id = $1 AND family IN ('delivered', 'archived')), \
                         CAST(COALESCE(SUM(earnings_net), 0) AS BIGINT), MIN(delivered_at) \
                         FROM orders WHERE account_id = $1 AND delivered_at > $2 \
                         AND family IN ('delivered', 'archived')",
                    )
                    .bind(account)
                    .bind(bound_nanos(held_after))
                    .fetch_one(&self.pool)
                    .await
                    .map_err(backend)?;
                    Ok(WalletTotals {
                        totals: EarningsTotals {
                            expected: from_piastres(expected),
                            settled: from_piastres(settled),
                            settled_commission: from_piastres(settled_commission),
                        },
                        held: from_piastres(held),
                        earliest_held_delivery: earliest.map(instant),
                    })
                }
            }

            #[async_trait]
            impl IdempotencyStore for $store {
                async fn begin_idempotent(
                    &self,
                    scope: &IdempotencyScope,
                    fingerprint: &str,
                    now: DateTime<Utc>,
                    expires_before: DateTime<Utc>,
                    stale_before: DateTime<Utc>,
                ) -> StoreResult<IdempotencyBegin> {
                    let (now, expires, stale) =
                        (nanos(now)?, nanos(expires_before)?, nanos(stale_before)?);
                    let mut tx = self.write().await?;
                    let result =
                        begin_idempotent_in(&mut tx.tx, scope, fingerprint, now, expires, stale)
                            .await;
                    tx.finish(result).await
                }

                async fn finish_idempotent(
                    &self,
                    scope: &IdempotencyScope,
                    response: StoredResponse,
                ) -> StoreResult<()> {
                    let mut tx = self.write().await?;
                    let result = sqlx::query(
                        "UPDATE idempotency_records SET response_status = $3, response_body = $4 \
                         WHERE account_id = $1 AND idem_key = $2",
                    )
                    .bind(scope.account_id)
                    .bind(&scope.key)
                    .bind(i32::from(response.status))
                    .bind(response.body.as_slice())
                    .execute(&mut *tx.tx)
                    .await
                    .map_err(backend)
                    .and_then(|done| {
                        if done.rows_affected() == 0 {
                            Err(StoreError::NotFound)
                        } else {
                            Ok(())
                        }
                    });
                    tx.finish(result).await
                }

                async fn abandon_idempotent(&self, scope: &IdempotencyScope) -> StoreResult<()> {
                    let mut tx = self.write().await?;
                    let result = sqlx::query(
                        "DELETE FROM idempotency_records WHERE account_id = $1 \
                         AND idem_key = $2 AND response_status IS NULL AND order_id IS NULL",
                    )
                    .bind(scope.account_id)
                    .bind(&scope.key)
                    .execute(&mut *tx.tx)
                    .await
                    .map(|_| ())
                    .map_err(backend);
                    tx.finish(result).await
                }

                async fn purge_idempotency(&self, before: DateTime<Utc>) -> StoreResult<u64> {
                    let before = nanos(before)?;
                    let mut tx = self.write().await?;
                    let result =
                        sqlx::query("DELETE FROM idempotency_records WHERE created_at < $1")
                            .bind(before)
                            .execute(&mut *tx.tx)
                            .await
                            .map(|done| done.rows_affected())
                            .map_err(backend);
                    tx.finish(result).await
                }
            }

            #[async_trait]
            impl MeterStore for $store {
                async fn record_pulls(
                    &self,
                    account: AccountId,
                    month: &str,
                    products: &[ProductId],
                ) -> StoreResult<()> {
                    if products.is_empty() {
                        return Ok(());
                    }
                    let mut ids = products.to_vec();
                    ids.sort_unstable();
                    ids.dedup();
                    let insert = |chunk: &[i64]| {
                        let mut q = QueryBuilder::<$db>::new(
                            "INSERT INTO meter_pulls (account_id, month, product_id) ",
                        );
                        q.push_values(chunk, |mut row, product| {
                            row.push_bind(account).push_bind(month).push_bind(*product);
                        });
                        q.push(" ON CONFLICT DO NOTHING");
                        q
                    };
                    if !$single_statement_tx && ids.len() <= MAX_BIND_CHUNK {
                        // One statement, atomic by itself: no transaction to open or commit.
                        insert(&ids).build().execute(&self.pool).await.map_err(backend)?;
                        return Ok(());
                    }
                    let mut tx = self.write().await?;
                    let result = async {
                        for chunk in ids.chunks(MAX_BIND_CHUNK) {
                            insert(chunk).build().execute(&mut *tx.tx).await.map_err(backend)?;
                        }
                        Ok(())
                    }
                    .await;
                    tx.finish(result).await
                }

                async fn meter(&self, account: AccountId, month: &str) -> StoreResult<MeterReading> {
                    let mut tx = self.read().await?;
                    let result = async {
                        let c = &mut *tx.tx;
                        let pulled: i64 = sqlx::query_scalar(
                            "SELECT COUNT(*) FROM meter_pulls WHERE account_id = $1 AND month = $2",
                        )
                        .bind(account)
                        .bind(month)
                        .fetch_one(&mut *c)
                        .await
                        .map_err(backend)?;
                        let operations: Option<i64> = sqlx::query_scalar(
                            "SELECT operations FROM meter_order_operations \
                             WHERE account_id = $1 AND month = $2",
                        )
                        .bind(account)
                        .bind(month)
                        .fetch_optional(&mut *c)
                        .await
                        .map_err(backend)?;
                        Ok(MeterReading {
                            pulled_products: pulled as u64,
                            order_operations: operations.unwrap_or(0) as u64,
                        })
                    }
                    .await;
                    tx.finish(result).await
                }
            }

            #[async_trait]
            impl WithdrawalStore for $store {
                async fn insert_withdrawal(
                    &self,
                    new: NewWithdrawal,
                    now: DateTime<Utc>,
                ) -> StoreResult<Withdrawal> {
                    let at = nanos(now)?;
                    let (amount, supply) = (cents(new.amount)?, cents(new.supply_amount)?);
                    let mut tx = self.write().await?;
                    let result = async {
                        let c = &mut *tx.tx;
                        if !exists(c, "SELECT id FROM accounts WHERE id = $1", new.account_id).await? {
                            return Err(StoreError::NotFound);
                        }
                        sqlx::query_scalar(
                            "INSERT INTO withdrawals (account_id, amount, supply_amount, status, \
                             wallet_number, wallet_description, notes, created_at) \
                             VALUES ($1, $2, $3, 'pending', $4, $5, $6, $7) RETURNING id",
                        )
                        .bind(new.account_id)
                        .bind(amount)
                        .bind(supply)
                        .bind(&new.wallet_number)
                        .bind(&new.wallet_description)
                        .bind(&new.notes)
                        .bind(at)
                        .fetch_one(&mut *c)
                        .await
                        .map_err(backend)
                    }
                    .await;
                    let id = tx.finish(result).await?;
                    Ok(new.into_withdrawal(id, now))
                }

                async fn decide_withdrawal(
                    &self,
                    id: WithdrawalId,
                    decision: WithdrawalDecision,
                    now: DateTime<Utc>,
                ) -> StoreResult<Withdrawal> {
                    let at = nanos(now)?;
                    let mut tx = self.write().await?;
                    let result = async {
                        let c = &mut *tx.tx;
                        // Only a pending request can be decided: the condition is in the update.
                        let row: Option<WithdrawalRow> = match &decision {
                            WithdrawalDecision::Complete {
                                transfer_reference,
                                receipt_url,
                            } => sqlx::query_as(concat!(
                                "UPDATE withdrawals SET status = 'completed', \
                                 transfer_reference = $2, receipt_url = $3, decided_at = $4 \
                                 WHERE id = $1 AND status = 'pending' RETURNING ",
                                withdrawal_cols!()
                            ))
                            .bind(id)
                            .bind(transfer_reference)
                            .bind(receipt_url)
                            .bind(at),
                            WithdrawalDecision::Reject { notes } => sqlx::query_as(concat!(
                                "UPDATE withdrawals SET status = 'rejected', \
                                 notes = COALESCE($2, notes), decided_at = $3 \
                                 WHERE id = $1 AND status = 'pending' RETURNING ",
                                withdrawal_cols!()
                            ))
                            .bind(id)
                            .bind(notes)
                            .bind(at),
                        }
                        .fetch_optional(&mut *c)
                        .await
                        .map_err(backend)?;
                        match row {
                            Some(row) => row.into_domain(),
                            None if exists(c, "SELECT id FROM withdrawals WHERE id = $1", id)
                                .await? =>
                            {
                                Err(StoreError::Invalid(format!(
                                    "withdrawal {id} is already decided"
                                )))
                            }
                            None => Err(StoreError::NotFound),
                        }
                    }
                    .await;
                    tx.finish(result).await
                }

                async fn withdrawals(&self, account: AccountId) -> StoreResult<Vec<Withdrawal>> {
                    let rows: Vec<WithdrawalRow> = sqlx::query_as(concat!(
                        "SELECT ",
                        withdrawal_cols!(),
                        " FROM withdrawals WHERE account_id = $1 ORDER BY created_at, id"
                    ))
                    .bind(account)
                    .fetch_all(&self.pool)
                    .await
                    .map_err(backend)?;
                    rows.into_iter().map(WithdrawalRow::into_domain).collect()
                }
            }
        };
    };
}

pub(crate) use impl_store;
