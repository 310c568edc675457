//! Rows of orders, their lines, warranties and timeline, and the earnings booked on them.

use commerce_core::model::*;
use commerce_core::money::from_piastres;
use commerce_core::store::StoreError;

use super::*;

/// One entry of an order's `timeline` column: `[status, at, reason]`, `at` in nanoseconds
/// since the Unix epoch.
type StoredEntry<S> = (S, i64, Option<S>);

/// The `timeline` column of an order with `entries` (in order): the JSON array that
/// [`OrderRow`] reads back. An order's timeline lives on its row, so that a page of orders is
/// one plain read of the rows, and a move writes the order's status and its new entry in one
/// statement.
pub(crate) fn timeline_json(entries: &[TimelineEntry]) -> Result<String, StoreError> {
    let stored = entries
        .iter()
        .map(|e| Ok((e.status.as_str(), nanos(e.at)?, e.reason.as_deref())))
        .collect::<Result<Vec<StoredEntry<&str>>, StoreError>>()?;
    serde_json::to_string(&stored).map_err(|e| StoreError::Invalid(format!("timeline: {e}")))
}

/// The entries of order `order`'s `timeline` column `json`.
pub(crate) fn parse_timeline(order: i64, json: &str) -> Result<Vec<TimelineEntry>, StoreError> {
    let entries: Vec<StoredEntry<String>> = serde_json::from_str(json)
        .map_err(|e| corrupt(format!("timeline of order {order}: {e}")))?;
    entries
        .into_iter()
        .map(|(text, at, reason)| Ok(TimelineEntry::new(status(&text)?, instant(at), reason)))
        .collect()
}

db_row! {
    pub(crate) struct OrderRow {
        pub(crate) id: i64,
        account_id: i64,
        number: String,
        legacy_number: Option<String>,
        external_reference: Option<String>,
        tracking_url: Option<String>,
        status: String,
        customer_name: String,
        customer_phone: String,
        customer_second_phone: Option<String>,
        customer_address: String,
        governorate_id: i64,
        governorate_name: String,
        shipping_option_id: i64,
        shipping_option_name: String,
        store_name: Option<String>,
        store_link: Option<String>,
        note: Option<String>,
        products: i64,
        warranties: i64,
        delivery_charge: i64,
        customer_total: i64,
        profit: i64,
        income_tax: i64,
        net_profit: i64,
        income_tax_percent: i64,
        created_at: i64,
        updated_at: i64,
        confirmed_at: Option<i64>,
        delivered_at: Option<i64>,
        /// The order's timeline: the `timeline` column, a JSON array of
        /// `[status, at, reason]` in entry order ([`timeline_json`]).
        timeline: String,
    }
}

impl OrderRow {
    /// The timeline of the row's JSON column.
    fn timeline(&self) -> Result<Vec<TimelineEntry>, StoreError> {
        parse_timeline(self.id, &self.timeline)
    }

    pub(crate) fn into_domain(self, lines: Vec<OrderLine>) -> Result<Order, StoreError> {
        let timeline = self.timeline()?;
        Ok(Order::builder()
            .id(OrderId::new(self.id))
            .account_id(AccountId::new(self.account_id))
            .number(self.number)
            .maybe_legacy_number(self.legacy_number)
            .maybe_external_reference(self.external_reference)
            .maybe_tracking_url(self.tracking_url)
            .status(status(&self.status)?)
            .customer(
                Customer::builder()
                    .name(self.customer_name)
                    .phone(self.customer_phone)
                    .maybe_second_phone(self.customer_second_phone)
                    .address(self.customer_address)
                    .governorate_id(GovernorateId::new(self.governorate_id))
                    .governorate_name(self.governorate_name)
                    .build(),
            )
            .shipping_option_id(ShippingOptionId::new(self.shipping_option_id))
            .shipping_option_name(self.shipping_option_name)
            .maybe_store_name(self.store_name)
            .maybe_store_link(self.store_link)
            .maybe_note(self.note)
            .lines(lines)
            .totals(
                Totals::builder()
                    .products(from_piastres(self.products))
                    .warranties(from_piastres(self.warranties))
                    .delivery_charge(from_piastres(self.delivery_charge))
                    .customer_total(from_piastres(self.customer_total))
                    .profit(from_piastres(self.profit))
                    .income_tax(from_piastres(self.income_tax))
                    .net_profit(from_piastres(self.net_profit))
                    .income_tax_percent(from_piastres(self.income_tax_percent))
                    .build(),
            )
            .timeline(timeline)
            .created_at(instant(self.created_at))
            .updated_at(instant(self.updated_at))
            .maybe_confirmed_at(self.confirmed_at.map(instant))
            .maybe_delivered_at(self.delivered_at.map(instant))
            .build())
    }
}

db_row! {
    pub(crate) struct LineRow {
        pub(crate) id: i64,
        pub(crate) order_id: i64,
        variant_id: i64,
        product_id: i64,
        title: String,
        variant_label: String,
        quantity: i64,
        sell_price: i64,
        profit: i64,
        commission_on: bool,
        delivered_quantity: Option<i64>,
        returned_quantity: Option<i64>,
        damaged_quantity: i64,
        lost_quantity: i64,
        destroyed_quantity: i64,
        supplier_id: Option<i64>,
        supply_price: i64,
    }
}

impl LineRow {
    pub(crate) fn into_domain(self, warranties: Vec<LineWarranty>) -> OrderLine {
        OrderLine::builder()
            .id(LineId::new(self.id))
            .variant_id(VariantId::new(self.variant_id))
            .product_id(ProductId::new(self.product_id))
            .title(self.title)
            .variant_label(self.variant_label)
            .quantity(self.quantity)
            .sell_price(from_piastres(self.sell_price))
            .profit(from_piastres(self.profit))
            .commission_on(self.commission_on)
            .warranties(warranties)
            .outcome(
                LineOutcome::builder()
                    .maybe_delivered_quantity(self.delivered_quantity)
                    .maybe_returned_quantity(self.returned_quantity)
                    .damaged_quantity(self.damaged_quantity)
                    .lost_quantity(self.lost_quantity)
                    .destroyed_quantity(self.destroyed_quantity)
                    .build(),
            )
            .maybe_supplier_id(self.supplier_id.map(AccountId::new))
            .supply_price(from_piastres(self.supply_price))
            .build()
    }
}

db_row! {
    /// A line with one of its warranties (the `w_` columns, all NULL for a line without any), as
    /// the lines of orders are read in one statement with their warranties.
    pub(crate) struct LineAndWarrantyRow {
        @flatten pub(crate) line: LineRow,
        w_warranty_id: Option<i64>,
        w_name: Option<String>,
        w_unit_price: Option<i64>,
        w_quantity: Option<i64>,
        w_total: Option<i64>,
        w_duration_days: Option<i32>,
        w_terms: Option<String>,
    }
}

impl LineAndWarrantyRow {
    /// The warranty of this row, if the line has one here.
    pub(crate) fn warranty(&mut self) -> Result<Option<LineWarranty>, StoreError> {
        let Some(warranty_id) = self.w_warranty_id else {
            return Ok(None);
        };
        let missing = || corrupt("line warranty row with NULL columns");
        Ok(Some(
            LineWarrantyRow {
                warranty_id,
                name: self.w_name.take().ok_or_else(missing)?,
                unit_price: self.w_unit_price.ok_or_else(missing)?,
                quantity: self.w_quantity.ok_or_else(missing)?,
                total: self.w_total.ok_or_else(missing)?,
                duration_days: self.w_duration_days.ok_or_else(missing)?,
                terms: self.w_terms.take().ok_or_else(missing)?,
            }
            .into_domain(),
        ))
    }
}

db_row! {
    pub(crate) struct LineWarrantyRow {
        warranty_id: i64,
        name: String,
        unit_price: i64,
        quantity: i64,
        total: i64,
        duration_days: i32,
        terms: String,
    }
}

impl LineWarrantyRow {
    pub(crate) fn into_domain(self) -> LineWarranty {
        LineWarranty::builder()
            .warranty_id(WarrantyId::new(self.warranty_id))
            .name(self.name)
            .unit_price(from_piastres(self.unit_price))
            .quantity(self.quantity)
            .total(from_piastres(self.total))
            .duration_days(self.duration_days)
            .terms(self.terms)
            .build()
    }
}

/// An order's earnings as booked on its row and in its account's family sums (piastres).

#[derive(Debug, Clone, Copy, PartialEq, Eq)]

pub(crate) struct Booked {
    /// The family whose sums hold them.
    pub(crate) family: commerce_core::model::Family,
    /// Net of commission.
    pub(crate) net: i64,
    /// Commission.
    pub(crate) commission: i64,
}

impl Booked {
    /// `earnings` of an order in `family`.
    pub(crate) fn new(
        family: commerce_core::model::Family,
        earnings: commerce_core::domain::earnings::OrderEarnings,
    ) -> Result<Self, StoreError> {
        Ok(Self {
            family,
            net: cents(earnings.net)?,
            commission: cents(earnings.commission)?,
        })
    }

    /// What a row holds: its status and its booked columns (NULL before the backfill: 0).
    pub(crate) fn from_row(
        status_text: &str,
        net: Option<i64>,
        commission: Option<i64>,
    ) -> Result<Self, StoreError> {
        Ok(Self {
            family: status(status_text)?.family(),
            net: net.unwrap_or(0),
            commission: commission.unwrap_or(0),
        })
    }
}

/// One change to an account's row of a family in `account_order_counts`.

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]

pub(crate) struct FamilyDelta {
    /// The family (rows are written in family order: one lock order).
    pub(crate) family: &'static str,
    /// Orders added (negative: removed).
    pub(crate) count: i64,
    /// Booked net added.
    pub(crate) net: i64,
    /// Booked commission added.
    pub(crate) commission: i64,
}

impl FamilyDelta {
    /// The changes that move an order's booking from `was` to `now`, in family order; empty
    /// when nothing changes.
    pub(crate) fn moving(was: Booked, now: Booked) -> Vec<FamilyDelta> {
        if was.family == now.family {
            if was == now {
                return Vec::new();
            }
            return vec![FamilyDelta {
                family: now.family.as_str(),
                count: 0,
                net: now.net - was.net,
                commission: now.commission - was.commission,
            }];
        }
        let mut deltas = vec![
            FamilyDelta {
                family: was.family.as_str(),
                count: -1,
                net: -was.net,
                commission: -was.commission,
            },
            FamilyDelta {
                family: now.family.as_str(),
                count: 1,
                net: now.net,
                commission: now.commission,
            },
        ];
        deltas.sort_unstable();
        deltas
    }
}
