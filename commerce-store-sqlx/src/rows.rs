//! Row types shared by both backends, decoded by column name ([`FromDbRow`]), and their
//! conversion into domain records.

use chrono::{DateTime, Utc};
use commerce_core::model::*;
use commerce_core::money::{from_piastres, to_piastres};
use commerce_core::store::{IdempotencyRecord, StoreError};
use rust_decimal::Decimal;

use crate::dialect::{Dialect, FromDbRow, col};

/// Data read back from the database that does not fit the domain (a bug or manual edit).
#[derive(Debug, thiserror::Error)]
#[error("corrupt row: {0}")]
pub(crate) struct CorruptRow(pub String);

pub(crate) fn corrupt(what: impl Into<String>) -> StoreError {
    StoreError::backend(CorruptRow(what.into()))
}

pub(crate) fn backend(error: sqlx::Error) -> StoreError {
    StoreError::backend(error)
}

/// An amount with at most two decimals as integer piastres.
pub(crate) fn cents(amount: Decimal) -> Result<i64, StoreError> {
    to_piastres(amount).ok_or_else(|| {
        StoreError::Invalid(format!(
            "amount {amount} has more than two decimals or is out of range"
        ))
    })
}

/// An instant as nanoseconds since the Unix epoch (UTC).
pub(crate) fn nanos(at: DateTime<Utc>) -> Result<i64, StoreError> {
    at.timestamp_nanos_opt()
        .ok_or_else(|| StoreError::Invalid(format!("instant {at} is out of the storable range")))
}

/// A filter bound (`updated_since`) as nanoseconds since the Unix epoch, saturating instead of
/// failing: every valid instant is served (decisions 14). A bound before the storable range
/// (1677-09-21) is `i64::MIN`, at or before every stored instant, so the filter keeps
/// everything; one after it (2262-04-11) is `i64::MAX`, after every stored instant (bar one
/// stored at exactly that nanosecond), so the filter keeps nothing. Values that are stored go
/// through the strict [`nanos`].
pub(crate) fn bound_nanos(at: DateTime<Utc>) -> i64 {
    at.timestamp_nanos_opt()
        .unwrap_or(if at < DateTime::UNIX_EPOCH {
            i64::MIN
        } else {
            i64::MAX
        })
}

pub(crate) fn opt_nanos(at: Option<DateTime<Utc>>) -> Result<Option<i64>, StoreError> {
    at.map(nanos).transpose()
}

pub(crate) fn instant(nanos: i64) -> DateTime<Utc> {
    DateTime::from_timestamp_nanos(nanos)
}

fn parse<T>(text: &str, parse: impl Fn(&str) -> Option<T>, what: &str) -> Result<T, StoreError> {
    parse(text).ok_or_else(|| corrupt(format!("unknown {what} {text:?}")))
}

pub(crate) fn status(text: &str) -> Result<OrderStatus, StoreError> {
    parse(text, OrderStatus::parse, "order status")
}

pub(crate) fn json_list(items: &[String]) -> String {
    serde_json::Value::from(items.to_vec()).to_string()
}

fn parse_json_list(text: &str) -> Result<Vec<String>, StoreError> {
    serde_json::from_str(text).map_err(|e| corrupt(format!("bad JSON list: {e}")))
}

pub(crate) fn abilities_text(abilities: &[Ability]) -> String {
    abilities
        .iter()
        .map(|a| a.as_str())
        .collect::<Vec<_>>()
        .join(" ")
}

pub(crate) fn u32_of(value: i64, what: &str) -> Result<u32, StoreError> {
    u32::try_from(value).map_err(|_| corrupt(format!("{what} {value} out of range")))
}

// Column lists, as macros so that `concat!` can build `&'static str` statements.
macro_rules! account_cols {
    () => {
        "id, name, store_name, email, phone, side, state, api_status, created_at"
    };
}
/// The account's columns as `AuthRow` reads them (table alias `a`).
macro_rules! account_aliases {
    () => {
        "a.id AS a_id, a.name AS a_name, a.store_name AS a_store_name, a.email AS a_email, \
         a.phone AS a_phone, a.side AS a_side, a.state AS a_state, \
         a.api_status AS a_api_status, a.created_at AS a_created_at"
    };
}
macro_rules! key_cols {
    () => {
        "id, account_id, name, hash, abilities, expires_at, revoked_at, rate_limit, created_at"
    };
}
macro_rules! category_cols {
    () => {
        "id, name, slug, parent_id, active"
    };
}
macro_rules! product_cols {
    () => {
        "id, title, slug, category_id, description, images, files, video_url, \
         marketing_files_url, url, active, updated_at"
    };
}
macro_rules! variant_cols {
    () => {
        "id, product_id, label, price, suggested_min, suggested_max, available"
    };
}
macro_rules! warranty_cols {
    () => {
        "id, product_id, name, admin_fee, percent, price_from, duration_days, terms, icon_url, \
         active"
    };
}
macro_rules! order_cols {
    () => {
        "id, account_id, number, legacy_number, external_reference, tracking_url, status, \
         customer_name, customer_phone, customer_second_phone, customer_address, \
         governorate_id, governorate_name, shipping_option_id, shipping_option_name, \
         store_name, store_link, note, products, warranties, delivery_charge, customer_total, \
         profit, income_tax, net_profit, income_tax_percent, created_at, updated_at, \
         confirmed_at, delivered_at"
    };
}
/// The lines' columns with their warranties' (`l` and `w` aliases), for `LineAndWarrantyRow`.
macro_rules! line_and_warranty_cols {
    () => {
        "l.id, l.order_id, l.variant_id, l.product_id, l.title, l.variant_label, l.quantity, \
         l.sell_price, l.profit, l.commission_on, l.delivered_quantity, l.returned_quantity, \
         l.damaged_quantity, l.lost_quantity, l.destroyed_quantity, \
         w.warranty_id AS w_warranty_id, w.name AS w_name, w.unit_price AS w_unit_price, \
         w.quantity AS w_quantity, w.total AS w_total, w.duration_days AS w_duration_days, \
         w.terms AS w_terms"
    };
}
macro_rules! withdrawal_cols {
    () => {
        "id, account_id, amount, supply_amount, status, wallet_number, wallet_description, \
         notes, transfer_reference, receipt_url, created_at, decided_at"
    };
}
pub(crate) use {
    account_aliases, account_cols, category_cols, key_cols, line_and_warranty_cols, order_cols,
    product_cols, variant_cols, warranty_cols, withdrawal_cols,
};

pub(crate) struct AccountRow {
    id: i64,
    name: String,
    store_name: Option<String>,
    email: String,
    phone: String,
    side: String,
    state: String,
    api_status: String,
    created_at: i64,
}

impl AccountRow {
    pub(crate) fn into_domain(self) -> Result<Account, StoreError> {
        Ok(Account {
            id: self.id,
            name: self.name,
            store_name: self.store_name,
            email: self.email,
            phone: self.phone,
            side: parse(&self.side, Side::parse, "side")?,
            state: parse(&self.state, AccountState::parse, "account state")?,
            api_status: parse(&self.api_status, ApiStatus::parse, "api status")?,
            created_at: instant(self.created_at),
        })
    }
}

/// A key, its account (columns prefixed `a_`; absent when the account row is missing) and the
/// rate-limit outcome, as the one-statement authentication returns them.
pub(crate) struct AuthRow {
    key: KeyRow,
    a_id: Option<i64>,
    a_name: Option<String>,
    a_store_name: Option<String>,
    a_email: Option<String>,
    a_phone: Option<String>,
    a_side: Option<String>,
    a_state: Option<String>,
    a_api_status: Option<String>,
    a_created_at: Option<i64>,
    /// The window's count after this request, when it was counted.
    counted: Option<i64>,
    /// The window's count before this statement.
    seen: Option<i64>,
}

impl AuthRow {
    /// The key, its account, and the window's count after this request with the other slots'
    /// count before it, when the request was counted.
    #[allow(clippy::type_complexity)]
    pub(crate) fn into_parts(
        mut self,
    ) -> Result<(ApiKey, Option<Account>, Option<(i64, i64)>), StoreError> {
        let account = self.account()?;
        let counted = self.counted.map(|used| (used, self.seen.unwrap_or(0)));
        Ok((self.key.into_domain()?, account, counted))
    }

    /// The account, when the row has one.
    fn account(&mut self) -> Result<Option<Account>, StoreError> {
        let Some(id) = self.a_id else {
            return Ok(None);
        };
        let missing = || corrupt("account row with NULL columns");
        AccountRow {
            id,
            name: self.a_name.take().ok_or_else(missing)?,
            store_name: self.a_store_name.take(),
            email: self.a_email.take().ok_or_else(missing)?,
            phone: self.a_phone.take().ok_or_else(missing)?,
            side: self.a_side.take().ok_or_else(missing)?,
            state: self.a_state.take().ok_or_else(missing)?,
            api_status: self.a_api_status.take().ok_or_else(missing)?,
            created_at: self.a_created_at.ok_or_else(missing)?,
        }
        .into_domain()
        .map(Some)
    }
}

pub(crate) struct KeyRow {
    id: i64,
    account_id: i64,
    name: String,
    hash: Vec<u8>,
    abilities: String,
    expires_at: Option<i64>,
    revoked_at: Option<i64>,
    rate_limit: i64,
    created_at: i64,
}

impl KeyRow {
    pub(crate) fn into_domain(self) -> Result<ApiKey, StoreError> {
        let hash: KeyHash = self
            .hash
            .as_slice()
            .try_into()
            .map_err(|_| corrupt("key hash is not 32 bytes"))?;
        let abilities = self
            .abilities
            .split_whitespace()
            .map(|a| parse(a, Ability::parse, "ability"))
            .collect::<Result<_, _>>()?;
        Ok(ApiKey {
            id: self.id,
            account_id: self.account_id,
            name: self.name,
            hash,
            abilities,
            expires_at: self.expires_at.map(instant),
            revoked_at: self.revoked_at.map(instant),
            rate_limit: u32_of(self.rate_limit, "rate limit")?,
            created_at: instant(self.created_at),
        })
    }
}

pub(crate) struct CategoryRow {
    id: i64,
    name: String,
    slug: String,
    parent_id: Option<i64>,
    active: bool,
}

impl CategoryRow {
    pub(crate) fn into_domain(self) -> Category {
        Category {
            id: self.id,
            name: self.name,
            slug: self.slug,
            parent_id: self.parent_id,
            active: self.active,
        }
    }
}

/// A product of a page, with the number of products matching the page's filter.
pub(crate) struct PagedProductRow {
    pub(crate) row: ProductRow,
    pub(crate) total: i64,
}

pub(crate) struct ProductRow {
    pub(crate) id: i64,
    title: String,
    slug: String,
    category_id: i64,
    description: String,
    images: String,
    files: String,
    video_url: Option<String>,
    marketing_files_url: Option<String>,
    url: String,
    active: bool,
    updated_at: i64,
}

impl ProductRow {
    pub(crate) fn into_domain(
        self,
        variants: Vec<Variant>,
        warranties: Vec<Warranty>,
    ) -> Result<Product, StoreError> {
        Ok(Product {
            id: self.id,
            title: self.title,
            slug: self.slug,
            category_id: self.category_id,
            description: self.description,
            images: parse_json_list(&self.images)?,
            files: parse_json_list(&self.files)?,
            video_url: self.video_url,
            marketing_files_url: self.marketing_files_url,
            url: self.url,
            active: self.active,
            updated_at: instant(self.updated_at),
            variants,
            warranties,
        })
    }
}

pub(crate) struct VariantRow {
    id: i64,
    product_id: i64,
    label: String,
    price: i64,
    suggested_min: i64,
    suggested_max: i64,
    available: i64,
}

impl VariantRow {
    pub(crate) fn into_domain(self) -> Variant {
        Variant {
            id: self.id,
            product_id: self.product_id,
            label: self.label,
            price: from_piastres(self.price),
            suggested_min: from_piastres(self.suggested_min),
            suggested_max: from_piastres(self.suggested_max),
            available: self.available,
        }
    }
}

pub(crate) struct WarrantyRow {
    id: i64,
    product_id: i64,
    name: String,
    admin_fee: i64,
    percent: i64,
    price_from: i64,
    duration_days: i32,
    terms: String,
    icon_url: Option<String>,
    active: bool,
}

impl WarrantyRow {
    pub(crate) fn into_domain(self) -> Warranty {
        Warranty {
            id: self.id,
            product_id: self.product_id,
            name: self.name,
            admin_fee: from_piastres(self.admin_fee),
            percent: from_piastres(self.percent),
            price_from: from_piastres(self.price_from),
            duration_days: self.duration_days,
            terms: self.terms,
            icon_url: self.icon_url,
            active: self.active,
        }
    }
}

pub(crate) struct GovernorateRow {
    id: i64,
    name: String,
}

impl GovernorateRow {
    pub(crate) fn into_domain(self) -> Governorate {
        Governorate {
            id: self.id,
            name: self.name,
        }
    }
}

pub(crate) struct OptionRow {
    pub(crate) id: i64,
    name: String,
    active: bool,
}

impl OptionRow {
    pub(crate) fn into_domain(self, rates: Vec<ShippingRate>) -> ShippingOption {
        ShippingOption {
            id: self.id,
            name: self.name,
            active: self.active,
            rates,
        }
    }
}

pub(crate) struct RateRow {
    pub(crate) option_id: i64,
    governorate_id: i64,
    governorate_name: String,
    delivery_charge: i64,
    shipping_tax_percent: i64,
    total_due_tax_percent: i64,
}

impl RateRow {
    pub(crate) fn into_domain(self) -> ShippingRate {
        ShippingRate {
            governorate_id: self.governorate_id,
            governorate_name: self.governorate_name,
            delivery_charge: from_piastres(self.delivery_charge),
            shipping_tax_percent: from_piastres(self.shipping_tax_percent),
            total_due_tax_percent: from_piastres(self.total_due_tax_percent),
        }
    }
}

/// An order of a page, with the number of orders matching the page's filter.
pub(crate) struct PagedOrderRow {
    pub(crate) row: OrderRow,
    pub(crate) total: i64,
}

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
    /// The order's timeline, read in the same statement as a JSON array of
    /// `[status, at, reason]` in entry order (NULL when it has none).
    timeline: Option<String>,
}

impl OrderRow {
    /// The timeline of the row's JSON column.
    fn timeline(&self) -> Result<Vec<TimelineEntry>, StoreError> {
        let Some(json) = &self.timeline else {
            return Ok(Vec::new());
        };
        let entries: Vec<(String, i64, Option<String>)> = serde_json::from_str(json)
            .map_err(|e| corrupt(format!("timeline of order {}: {e}", self.id)))?;
        entries
            .into_iter()
            .map(|(text, at, reason)| {
                Ok(TimelineEntry {
                    status: status(&text)?,
                    at: instant(at),
                    reason,
                })
            })
            .collect()
    }

    pub(crate) fn into_domain(self, lines: Vec<OrderLine>) -> Result<Order, StoreError> {
        let timeline = self.timeline()?;
        Ok(Order {
            id: self.id,
            account_id: self.account_id,
            number: self.number,
            legacy_number: self.legacy_number,
            external_reference: self.external_reference,
            tracking_url: self.tracking_url,
            status: status(&self.status)?,
            customer: Customer {
                name: self.customer_name,
                phone: self.customer_phone,
                second_phone: self.customer_second_phone,
                address: self.customer_address,
                governorate_id: self.governorate_id,
                governorate_name: self.governorate_name,
            },
            shipping_option_id: self.shipping_option_id,
            shipping_option_name: self.shipping_option_name,
            store_name: self.store_name,
            store_link: self.store_link,
            note: self.note,
            lines,
            totals: Totals {
                products: from_piastres(self.products),
                warranties: from_piastres(self.warranties),
                delivery_charge: from_piastres(self.delivery_charge),
                customer_total: from_piastres(self.customer_total),
                profit: from_piastres(self.profit),
                income_tax: from_piastres(self.income_tax),
                net_profit: from_piastres(self.net_profit),
                income_tax_percent: from_piastres(self.income_tax_percent),
            },
            timeline,
            created_at: instant(self.created_at),
            updated_at: instant(self.updated_at),
            confirmed_at: self.confirmed_at.map(instant),
            delivered_at: self.delivered_at.map(instant),
        })
    }
}

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
}

impl LineRow {
    pub(crate) fn into_domain(self, warranties: Vec<LineWarranty>) -> OrderLine {
        OrderLine {
            id: self.id,
            variant_id: self.variant_id,
            product_id: self.product_id,
            title: self.title,
            variant_label: self.variant_label,
            quantity: self.quantity,
            sell_price: from_piastres(self.sell_price),
            profit: from_piastres(self.profit),
            commission_on: self.commission_on,
            warranties,
            outcome: LineOutcome {
                delivered_quantity: self.delivered_quantity,
                returned_quantity: self.returned_quantity,
                damaged_quantity: self.damaged_quantity,
                lost_quantity: self.lost_quantity,
                destroyed_quantity: self.destroyed_quantity,
            },
        }
    }
}

/// A line with one of its warranties (the `w_` columns, all NULL for a line without any), as
/// the lines of orders are read in one statement with their warranties.
pub(crate) struct LineAndWarrantyRow {
    pub(crate) line: LineRow,
    w_warranty_id: Option<i64>,
    w_name: Option<String>,
    w_unit_price: Option<i64>,
    w_quantity: Option<i64>,
    w_total: Option<i64>,
    w_duration_days: Option<i32>,
    w_terms: Option<String>,
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

pub(crate) struct LineWarrantyRow {
    warranty_id: i64,
    name: String,
    unit_price: i64,
    quantity: i64,
    total: i64,
    duration_days: i32,
    terms: String,
}

impl LineWarrantyRow {
    pub(crate) fn into_domain(self) -> LineWarranty {
        LineWarranty {
            warranty_id: self.warranty_id,
            name: self.name,
            unit_price: from_piastres(self.unit_price),
            quantity: self.quantity,
            total: from_piastres(self.total),
            duration_days: self.duration_days,
            terms: self.terms,
        }
    }
}

pub(crate) struct IdempotencyRow {
    pub(crate) fingerprint: String,
    pub(crate) created_at: i64,
    pub(crate) order_id: Option<i64>,
    pub(crate) response_status: Option<i32>,
    pub(crate) response_body: Option<Vec<u8>>,
}

impl IdempotencyRow {
    /// The record as commerce-core's idempotency rule reads it.
    pub(crate) fn into_record(self) -> Result<IdempotencyRecord, StoreError> {
        Ok(IdempotencyRecord {
            response: self.response()?,
            fingerprint: self.fingerprint,
            created_at: instant(self.created_at),
            order_id: self.order_id,
        })
    }

    pub(crate) fn response(&self) -> Result<Option<StoredResponse>, StoreError> {
        match (self.response_status, &self.response_body) {
            (Some(status), Some(body)) => Ok(Some(StoredResponse {
                status: u16::try_from(status)
                    .map_err(|_| corrupt(format!("HTTP status {status}")))?,
                body: body.clone(),
            })),
            (None, _) => Ok(None),
            (Some(_), None) => Err(corrupt("stored response without body")),
        }
    }
}

pub(crate) struct WithdrawalRow {
    id: i64,
    account_id: i64,
    amount: i64,
    supply_amount: i64,
    status: String,
    wallet_number: String,
    wallet_description: String,
    notes: Option<String>,
    transfer_reference: Option<String>,
    receipt_url: Option<String>,
    created_at: i64,
    decided_at: Option<i64>,
}

impl WithdrawalRow {
    pub(crate) fn into_domain(self) -> Result<Withdrawal, StoreError> {
        Ok(Withdrawal {
            id: self.id,
            account_id: self.account_id,
            amount: from_piastres(self.amount),
            supply_amount: from_piastres(self.supply_amount),
            status: parse(&self.status, WithdrawalStatus::parse, "withdrawal status")?,
            wallet_number: self.wallet_number,
            wallet_description: self.wallet_description,
            notes: self.notes,
            transfer_reference: self.transfer_reference,
            receipt_url: self.receipt_url,
            created_at: instant(self.created_at),
            decided_at: self.decided_at.map(instant),
        })
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
        earnings: commerce_core::earnings::OrderEarnings,
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

// ---- decoding, by column name ----

impl<DB: Dialect> FromDbRow<DB> for AccountRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: col::<DB, _>(row, "id")?,
            name: col::<DB, _>(row, "name")?,
            store_name: col::<DB, _>(row, "store_name")?,
            email: col::<DB, _>(row, "email")?,
            phone: col::<DB, _>(row, "phone")?,
            side: col::<DB, _>(row, "side")?,
            state: col::<DB, _>(row, "state")?,
            api_status: col::<DB, _>(row, "api_status")?,
            created_at: col::<DB, _>(row, "created_at")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for AuthRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            key: <KeyRow as FromDbRow<DB>>::from_db_row(row)?,
            a_id: col::<DB, _>(row, "a_id")?,
            a_name: col::<DB, _>(row, "a_name")?,
            a_store_name: col::<DB, _>(row, "a_store_name")?,
            a_email: col::<DB, _>(row, "a_email")?,
            a_phone: col::<DB, _>(row, "a_phone")?,
            a_side: col::<DB, _>(row, "a_side")?,
            a_state: col::<DB, _>(row, "a_state")?,
            a_api_status: col::<DB, _>(row, "a_api_status")?,
            a_created_at: col::<DB, _>(row, "a_created_at")?,
            counted: col::<DB, _>(row, "counted")?,
            seen: col::<DB, _>(row, "seen")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for KeyRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: col::<DB, _>(row, "id")?,
            account_id: col::<DB, _>(row, "account_id")?,
            name: col::<DB, _>(row, "name")?,
            hash: col::<DB, _>(row, "hash")?,
            abilities: col::<DB, _>(row, "abilities")?,
            expires_at: col::<DB, _>(row, "expires_at")?,
            revoked_at: col::<DB, _>(row, "revoked_at")?,
            rate_limit: col::<DB, _>(row, "rate_limit")?,
            created_at: col::<DB, _>(row, "created_at")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for CategoryRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: col::<DB, _>(row, "id")?,
            name: col::<DB, _>(row, "name")?,
            slug: col::<DB, _>(row, "slug")?,
            parent_id: col::<DB, _>(row, "parent_id")?,
            active: col::<DB, _>(row, "active")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for PagedProductRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            row: <ProductRow as FromDbRow<DB>>::from_db_row(row)?,
            total: col::<DB, _>(row, "total")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for ProductRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: col::<DB, _>(row, "id")?,
            title: col::<DB, _>(row, "title")?,
            slug: col::<DB, _>(row, "slug")?,
            category_id: col::<DB, _>(row, "category_id")?,
            description: col::<DB, _>(row, "description")?,
            images: col::<DB, _>(row, "images")?,
            files: col::<DB, _>(row, "files")?,
            video_url: col::<DB, _>(row, "video_url")?,
            marketing_files_url: col::<DB, _>(row, "marketing_files_url")?,
            url: col::<DB, _>(row, "url")?,
            active: col::<DB, _>(row, "active")?,
            updated_at: col::<DB, _>(row, "updated_at")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for VariantRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: col::<DB, _>(row, "id")?,
            product_id: col::<DB, _>(row, "product_id")?,
            label: col::<DB, _>(row, "label")?,
            price: col::<DB, _>(row, "price")?,
            suggested_min: col::<DB, _>(row, "suggested_min")?,
            suggested_max: col::<DB, _>(row, "suggested_max")?,
            available: col::<DB, _>(row, "available")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for WarrantyRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: col::<DB, _>(row, "id")?,
            product_id: col::<DB, _>(row, "product_id")?,
            name: col::<DB, _>(row, "name")?,
            admin_fee: col::<DB, _>(row, "admin_fee")?,
            percent: col::<DB, _>(row, "percent")?,
            price_from: col::<DB, _>(row, "price_from")?,
            duration_days: col::<DB, _>(row, "duration_days")?,
            terms: col::<DB, _>(row, "terms")?,
            icon_url: col::<DB, _>(row, "icon_url")?,
            active: col::<DB, _>(row, "active")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for GovernorateRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: col::<DB, _>(row, "id")?,
            name: col::<DB, _>(row, "name")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for OptionRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: col::<DB, _>(row, "id")?,
            name: col::<DB, _>(row, "name")?,
            active: col::<DB, _>(row, "active")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for RateRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            option_id: col::<DB, _>(row, "option_id")?,
            governorate_id: col::<DB, _>(row, "governorate_id")?,
            governorate_name: col::<DB, _>(row, "governorate_name")?,
            delivery_charge: col::<DB, _>(row, "delivery_charge")?,
            shipping_tax_percent: col::<DB, _>(row, "shipping_tax_percent")?,
            total_due_tax_percent: col::<DB, _>(row, "total_due_tax_percent")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for PagedOrderRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            row: <OrderRow as FromDbRow<DB>>::from_db_row(row)?,
            total: col::<DB, _>(row, "total")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for OrderRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: col::<DB, _>(row, "id")?,
            account_id: col::<DB, _>(row, "account_id")?,
            number: col::<DB, _>(row, "number")?,
            legacy_number: col::<DB, _>(row, "legacy_number")?,
            external_reference: col::<DB, _>(row, "external_reference")?,
            tracking_url: col::<DB, _>(row, "tracking_url")?,
            status: col::<DB, _>(row, "status")?,
            customer_name: col::<DB, _>(row, "customer_name")?,
            customer_phone: col::<DB, _>(row, "customer_phone")?,
            customer_second_phone: col::<DB, _>(row, "customer_second_phone")?,
            customer_address: col::<DB, _>(row, "customer_address")?,
            governorate_id: col::<DB, _>(row, "governorate_id")?,
            governorate_name: col::<DB, _>(row, "governorate_name")?,
            shipping_option_id: col::<DB, _>(row, "shipping_option_id")?,
            shipping_option_name: col::<DB, _>(row, "shipping_option_name")?,
            store_name: col::<DB, _>(row, "store_name")?,
            store_link: col::<DB, _>(row, "store_link")?,
            note: col::<DB, _>(row, "note")?,
            products: col::<DB, _>(row, "products")?,
            warranties: col::<DB, _>(row, "warranties")?,
            delivery_charge: col::<DB, _>(row, "delivery_charge")?,
            customer_total: col::<DB, _>(row, "customer_total")?,
            profit: col::<DB, _>(row, "profit")?,
            income_tax: col::<DB, _>(row, "income_tax")?,
            net_profit: col::<DB, _>(row, "net_profit")?,
            income_tax_percent: col::<DB, _>(row, "income_tax_percent")?,
            created_at: col::<DB, _>(row, "created_at")?,
            updated_at: col::<DB, _>(row, "updated_at")?,
            confirmed_at: col::<DB, _>(row, "confirmed_at")?,
            delivered_at: col::<DB, _>(row, "delivered_at")?,
            timeline: col::<DB, _>(row, "timeline")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for LineRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: col::<DB, _>(row, "id")?,
            order_id: col::<DB, _>(row, "order_id")?,
            variant_id: col::<DB, _>(row, "variant_id")?,
            product_id: col::<DB, _>(row, "product_id")?,
            title: col::<DB, _>(row, "title")?,
            variant_label: col::<DB, _>(row, "variant_label")?,
            quantity: col::<DB, _>(row, "quantity")?,
            sell_price: col::<DB, _>(row, "sell_price")?,
            profit: col::<DB, _>(row, "profit")?,
            commission_on: col::<DB, _>(row, "commission_on")?,
            delivered_quantity: col::<DB, _>(row, "delivered_quantity")?,
            returned_quantity: col::<DB, _>(row, "returned_quantity")?,
            damaged_quantity: col::<DB, _>(row, "damaged_quantity")?,
            lost_quantity: col::<DB, _>(row, "lost_quantity")?,
            destroyed_quantity: col::<DB, _>(row, "destroyed_quantity")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for LineAndWarrantyRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            line: <LineRow as FromDbRow<DB>>::from_db_row(row)?,
            w_warranty_id: col::<DB, _>(row, "w_warranty_id")?,
            w_name: col::<DB, _>(row, "w_name")?,
            w_unit_price: col::<DB, _>(row, "w_unit_price")?,
            w_quantity: col::<DB, _>(row, "w_quantity")?,
            w_total: col::<DB, _>(row, "w_total")?,
            w_duration_days: col::<DB, _>(row, "w_duration_days")?,
            w_terms: col::<DB, _>(row, "w_terms")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for LineWarrantyRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            warranty_id: col::<DB, _>(row, "warranty_id")?,
            name: col::<DB, _>(row, "name")?,
            unit_price: col::<DB, _>(row, "unit_price")?,
            quantity: col::<DB, _>(row, "quantity")?,
            total: col::<DB, _>(row, "total")?,
            duration_days: col::<DB, _>(row, "duration_days")?,
            terms: col::<DB, _>(row, "terms")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for IdempotencyRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            fingerprint: col::<DB, _>(row, "fingerprint")?,
            created_at: col::<DB, _>(row, "created_at")?,
            order_id: col::<DB, _>(row, "order_id")?,
            response_status: col::<DB, _>(row, "response_status")?,
            response_body: col::<DB, _>(row, "response_body")?,
        })
    }
}

impl<DB: Dialect> FromDbRow<DB> for WithdrawalRow {
    type Output = Self;
    fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
        Ok(Self {
            id: col::<DB, _>(row, "id")?,
            account_id: col::<DB, _>(row, "account_id")?,
            amount: col::<DB, _>(row, "amount")?,
            supply_amount: col::<DB, _>(row, "supply_amount")?,
            status: col::<DB, _>(row, "status")?,
            wallet_number: col::<DB, _>(row, "wallet_number")?,
            wallet_description: col::<DB, _>(row, "wallet_description")?,
            notes: col::<DB, _>(row, "notes")?,
            transfer_reference: col::<DB, _>(row, "transfer_reference")?,
            receipt_url: col::<DB, _>(row, "receipt_url")?,
            created_at: col::<DB, _>(row, "created_at")?,
            decided_at: col::<DB, _>(row, "decided_at")?,
        })
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    #[test]
    fn filter_bounds_saturate_where_stored_instants_fail() {
        let early = Utc.with_ymd_and_hms(1500, 1, 1, 0, 0, 0).unwrap();
        let late = Utc.with_ymd_and_hms(9999, 12, 31, 23, 59, 59).unwrap();
        assert_eq!(bound_nanos(early), i64::MIN);
        assert_eq!(bound_nanos(late), i64::MAX);
        assert!(nanos(early).is_err() && nanos(late).is_err());
        for at in [
            DateTime::UNIX_EPOCH,
            Utc.with_ymd_and_hms(2026, 11, 22, 8, 0, 0).unwrap(),
            instant(i64::MIN),
            instant(i64::MAX),
        ] {
            assert_eq!(Some(bound_nanos(at)), nanos(at).ok(), "{at}");
        }
    }
}
