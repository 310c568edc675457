//! The JSON shapes of responses (the objects of docs/catalog.md, docs/orders.md, ...), serialised straight from the domain records.

use bytes::Bytes;
use chrono::{DateTime, Utc};
use http::{HeaderValue, Response, StatusCode, header};
use rust_decimal::Decimal;
use serde::Serialize;
use serde_json::value::RawValue;
use utoipa::ToSchema;
use utoipa::openapi::RefOr;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, Schema, SchemaFormat, Type};

use crate::domain::earnings::PayoutRules;
use crate::domain::pieces;
use crate::model::*;
use crate::money::{money_string, serde_money};
use crate::render::messages;
use crate::time::cairo_timestamp;

mod supply;
mod webhooks;
mod withdrawal;
pub use supply::*;
pub use webhooks::*;
pub use withdrawal::*;

/// A JSON response with the right content type, never cached.
pub fn json_response(status: StatusCode, body: impl Into<Bytes>) -> Response<Bytes> {
    let mut response = Response::new(body.into());
    *response.status_mut() = status;
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json; charset=utf-8"),
    );
    // Every answer is one account's data: never kept by a shared cache.
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    response
}

/// Serialises `{"data": value}`.
pub fn data_body<T: Serialize + ?Sized>(value: &T) -> Vec<u8> {
    #[derive(Serialize)]
    struct Data<'a, T: ?Sized> {
        data: &'a T,
    }
    to_json(&Data { data: value }, 1024)
}

/// Serialises into a buffer sized for the response up front (no regrowth on typical pages).
fn to_json<T: Serialize>(value: &T, capacity: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(capacity);
    serde_json::to_writer(&mut out, value).expect("response types always serialise");
    out
}

/// Serialises `{"data": items, "meta": {...}}`.
pub fn list_body<T: Serialize>(items: &[T], page: PageRequest, total: u64) -> Vec<u8> {
    // About 1.5 KiB per product or order on the wire; at least a small page's worth.
    list_body_within(items, page, total, 256 + 1536 * items.len())
}

/// [`list_body`] of JSON already rendered, in a buffer of exactly its size (no regrowth).
pub fn rendered_list_body(items: &[&RawValue], page: PageRequest, total: u64) -> Vec<u8> {
    let items_len: usize = items.iter().map(|item| item.get().len() + 1).sum();
    list_body_within(items, page, total, 128 + items_len)
}

/// [`list_body`] in a buffer of `capacity` bytes to start with.
fn list_body_within<T: Serialize>(
    items: &[T],
    page: PageRequest,
    total: u64,
    capacity: usize,
) -> Vec<u8> {
    #[derive(Serialize)]
    struct List<'a, T> {
        data: &'a [T],
        meta: ListMeta,
    }
    let last_page = total.div_ceil(u64::from(page.per_page())).max(1);
    to_json(
        &List {
            data: items,
            meta: ListMeta {
                page: page.page(),
                per_page: page.per_page(),
                total,
                last_page,
            },
        },
        capacity,
    )
}

/// The `meta` of a list: the page asked for, the page size, the total and the last page.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct ListMeta {
    #[schema(minimum = 1)]
    page: u32,
    #[schema(minimum = 1, maximum = 100)]
    per_page: u32,
    total: u64,
    #[schema(minimum = 1)]
    last_page: u64,
}

/// The pattern of a timestamp on the wire: Egypt time, whole seconds, `+02:00` or `+03:00`.
pub(crate) const TIMESTAMP_PATTERN: &str =
    r"^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\+0[23]:00$";

/// The pattern of a money string on the wire: exactly two decimals, never negative.
pub(crate) const MONEY_PATTERN: &str = r"^[0-9]+\.[0-9]{2}$";

/// A timestamp rendered in Egypt time.
#[derive(Debug, Clone, Copy)]
pub struct Stamp(pub DateTime<Utc>);

impl Serialize for Stamp {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&cairo_timestamp(self.0))
    }
}

/// A money string.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Money(#[serde(with = "serde_money")] pub Decimal);

impl utoipa::PartialSchema for Stamp {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .pattern(Some(TIMESTAMP_PATTERN))
            .description(Some(
                "An instant in Egypt time (Africa/Cairo), whole seconds.",
            ))
            .examples(["2026-11-22T10:00:00+02:00"])
            .into()
    }
}

impl ToSchema for Stamp {
    fn name() -> std::borrow::Cow<'static, str> {
        "Timestamp".into()
    }
}

impl utoipa::PartialSchema for Money {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(MONEY_PATTERN))
            .description(Some("An amount in Egyptian pounds, exactly two decimals."))
            .examples(["125.00"])
            .into()
    }
}

impl ToSchema for Money {}

/// `{id, name}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct IdName<'a> {
    /// Id.
    pub id: i64,
    /// Name.
    pub name: &'a str,
}

/// `GET /me`.
#[derive(Debug, Serialize, ToSchema)]
pub struct AccountView<'a> {
    id: AccountId,
    name: &'a str,
    store_name: Option<&'a str>,
    email: &'a str,
    phone: &'a str,
    #[schema(value_type = Side)]
    side: &'static str,
    token: TokenView<'a>,
}

#[derive(Debug, Serialize, ToSchema)]
struct TokenView<'a> {
    name: &'a str,
    #[schema(value_type = Vec<Ability>)]
    abilities: Vec<&'static str>,
    expires_at: Option<Stamp>,
}

impl<'a> AccountView<'a> {
    /// The account as seen through one of its keys.
    pub fn new(account: &'a Account, key: &'a ApiKey) -> Self {
        Self {
            id: account.id,
            name: &account.name,
            store_name: match account.side {
                Side::Marketer => account.store_name.as_deref(),
                _ => None,
            },
            email: &account.email,
            phone: &account.phone,
            side: account.side.as_str(),
            token: TokenView {
                name: &key.name,
                abilities: key.abilities.iter().map(|a| a.as_str()).collect(),
                expires_at: key.expires_at.map(Stamp),
            },
        }
    }
}

/// A category.
#[derive(Debug, Serialize, ToSchema)]
pub struct CategoryView<'a> {
    id: CategoryId,
    name: &'a str,
    slug: &'a str,
    parent_id: Option<CategoryId>,
}

impl<'a> From<&'a Category> for CategoryView<'a> {
    fn from(c: &'a Category) -> Self {
        Self {
            id: c.id,
            name: &c.name,
            slug: &c.slug,
            parent_id: c.parent_id,
        }
    }
}

/// A product with variants and its active warranties.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProductView<'a> {
    id: ProductId,
    title: &'a str,
    slug: &'a str,
    category: IdName<'a>,
    description: &'a str,
    images: &'a [String],
    files: &'a [String],
    video_url: Option<&'a str>,
    marketing_files_url: Option<&'a str>,
    url: &'a str,
    variants: Vec<VariantView<'a>>,
    warranties: Vec<WarrantyView<'a>>,
    updated_at: Stamp,
}

impl<'a> ProductView<'a> {
    /// The product, with its category's name.
    pub fn new(p: &'a Product, category_name: &'a str) -> Self {
        Self {
            id: p.id,
            title: &p.title,
            slug: &p.slug,
            category: IdName {
                id: p.category_id.into(),
                name: category_name,
            },
            description: &p.description,
            images: &p.images,
            files: &p.files,
            video_url: p.video_url.as_deref(),
            marketing_files_url: p.marketing_files_url.as_deref(),
            url: &p.url,
            variants: p.variants.iter().map(VariantView::from).collect(),
            warranties: p
                .warranties
                .iter()
                .filter(|w| w.active)
                .map(WarrantyView::from)
                .collect(),
            updated_at: Stamp(p.updated_at),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
struct VariantView<'a> {
    id: VariantId,
    label: &'a str,
    price: Money,
    suggested_min: Money,
    suggested_max: Money,
    in_stock: bool,
    #[schema(minimum = 0, maximum = 100)]
    stock_hint: i64,
    #[schema(minimum = 0)]
    available: i64,
}

impl<'a> From<&'a Variant> for VariantView<'a> {
    fn from(v: &'a Variant) -> Self {
        let available = v.available.max(0);
        Self {
            id: v.id,
            label: &v.label,
            price: Money(v.price),
            suggested_min: Money(v.suggested_min),
            suggested_max: Money(v.suggested_max),
            in_stock: available > 0,
            stock_hint: available.min(100),
            available,
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
struct WarrantyView<'a> {
    id: WarrantyId,
    name: &'a str,
    #[serde(with = "rust_decimal::serde::float")]
    #[schema(value_type = f64)]
    admin_fee: Decimal,
    #[serde(with = "rust_decimal::serde::float")]
    #[schema(value_type = f64)]
    percent: Decimal,
    price_rule: String,
    #[serde(with = "rust_decimal::serde::float")]
    #[schema(value_type = f64)]
    price_from: Decimal,
    duration_days: i32,
    terms: &'a str,
    icon_url: Option<&'a str>,
}

impl<'a> From<&'a Warranty> for WarrantyView<'a> {
    fn from(w: &'a Warranty) -> Self {
        Self {
            id: w.id,
            name: &w.name,
            admin_fee: w.admin_fee,
            percent: w.percent,
            price_rule: messages::warranty_price_rule(
                &money_string(w.admin_fee),
                &money_string(w.percent),
            ),
            price_from: w.price_from,
            duration_days: w.duration_days,
            terms: &w.terms,
            icon_url: w.icon_url.as_deref(),
        }
    }
}

/// A shipping option with its governorates.
#[derive(Debug, Serialize, ToSchema)]
pub struct ShippingOptionView<'a> {
    id: ShippingOptionId,
    name: &'a str,
    governorates: Vec<GovernorateEntry<'a>>,
}

#[derive(Debug, Serialize, ToSchema)]
struct GovernorateEntry<'a> {
    id: GovernorateId,
    name: &'a str,
    delivery_charge: Money,
    shipping_tax_percent: Money,
    total_due_tax_percent: Money,
    example: Example,
}

#[derive(Debug, Serialize, ToSchema)]
struct Example {
    goods: Money,
    delivery_charge: Money,
}

impl<'a> From<&'a ShippingOption> for ShippingOptionView<'a> {
    fn from(o: &'a ShippingOption) -> Self {
        let example_goods = Decimal::new(50_000, 2);
        Self {
            id: o.id,
            name: &o.name,
            governorates: o
                .rates
                .iter()
                .map(|r| GovernorateEntry {
                    id: r.governorate_id,
                    name: &r.governorate_name,
                    delivery_charge: Money(r.delivery_charge),
                    shipping_tax_percent: Money(r.shipping_tax_percent),
                    total_due_tax_percent: Money(r.total_due_tax_percent),
                    example: Example {
                        goods: Money(example_goods),
                        delivery_charge: Money(crate::domain::pricing::delivery_charge(
                            r.into(),
                            example_goods,
                        )),
                    },
                })
                .collect(),
        }
    }
}

/// The money figures shared by a quote and an order's `totals`.
#[derive(Debug, Serialize, ToSchema)]
pub struct Figures {
    products: Money,
    warranties: Money,
    delivery_charge: Money,
    customer_total: Money,
    profit: Money,
    income_tax: Money,
    net_profit: Money,
}

impl From<&Totals> for Figures {
    fn from(t: &Totals) -> Self {
        Self {
            products: Money(t.products),
            warranties: Money(t.warranties),
            delivery_charge: Money(t.delivery_charge),
            customer_total: Money(t.customer_total),
            profit: Money(t.profit),
            income_tax: Money(t.income_tax),
            net_profit: Money(t.net_profit),
        }
    }
}

/// `POST /shipping/quote`.
#[derive(Debug, Serialize, ToSchema)]
pub struct QuoteView {
    /// Option quoted.
    pub shipping_option_id: ShippingOptionId,
    /// Governorate quoted.
    pub governorate_id: GovernorateId,
    /// The figures.
    #[serde(flatten)]
    pub figures: Figures,
}

/// An order.
#[derive(Debug, Serialize, ToSchema)]
pub struct OrderView<'a> {
    id: OrderId,
    number: &'a str,
    external_reference: Option<&'a str>,
    tracking_url: Option<&'a str>,
    status: StatusView,
    #[schema(value_type = Family)]
    family: &'static str,
    customer: CustomerView<'a>,
    shipping_option: IdName<'a>,
    lines: Vec<LineView<'a>>,
    totals: TotalsView,
    payout: PayoutView,
    timeline: Vec<TimelineView<'a>>,
    created_at: Stamp,
    updated_at: Stamp,
    confirmed_at: Option<Stamp>,
    delivered_at: Option<Stamp>,
}

/// `{key, label}` of a status.
#[derive(Debug, Serialize, ToSchema)]
pub(crate) struct StatusView {
    #[schema(value_type = OrderStatus)]
    key: &'static str,
    label: &'static str,
}

impl StatusView {
    /// The status's key and Arabic label.
    pub(crate) fn of(status: OrderStatus) -> Self {
        Self {
            key: status.as_str(),
            label: messages::status_label(status),
        }
    }
}

#[derive(Debug, Serialize, ToSchema)]
struct CustomerView<'a> {
    name: &'a str,
    phone: &'a str,
    second_phone: Option<&'a str>,
    address: &'a str,
    governorate: IdName<'a>,
}

#[derive(Debug, Serialize, ToSchema)]
struct LineView<'a> {
    id: LineId,
    variant_id: VariantId,
    product_id: ProductId,
    title: &'a str,
    variant_label: &'a str,
    quantity: i64,
    delivered_quantity: Option<i64>,
    returned_quantity: Option<i64>,
    damaged_quantity: i64,
    lost_quantity: i64,
    destroyed_quantity: i64,
    sell_price: Money,
    profit: Money,
    commission_on: bool,
    warranties: Vec<LineWarrantyView<'a>>,
}

#[derive(Debug, Serialize, ToSchema)]
struct LineWarrantyView<'a> {
    id: WarrantyId,
    name: &'a str,
    unit_price: Money,
    quantity: i64,
    total: Money,
    duration_days: i32,
    terms: &'a str,
}

#[derive(Debug, Serialize, ToSchema)]
struct TotalsView {
    #[serde(flatten)]
    figures: Figures,
    income_tax_percent: Money,
}

#[derive(Debug, Serialize, ToSchema)]
struct PayoutView {
    #[schema(value_type = PayoutState)]
    state: &'static str,
    ready_at: Option<Stamp>,
}

#[derive(Debug, Serialize, ToSchema)]
struct TimelineView<'a> {
    #[schema(value_type = OrderStatus)]
    status: &'static str,
    label: &'static str,
    at: Stamp,
    reason: Option<&'a str>,
}

impl<'a> OrderView<'a> {
    /// The order as the API shows it.
    pub fn new(o: &'a Order, rules: PayoutRules) -> Self {
        let (state, ready_at) = rules.payout(o);
        let t = &o.totals;
        Self {
            id: o.id,
            number: &o.number,
            external_reference: o.external_reference.as_deref(),
            tracking_url: o.tracking_url.as_deref(),
            status: StatusView::of(o.status),
            family: o.status.family().as_str(),
            customer: CustomerView {
                name: &o.customer.name,
                phone: &o.customer.phone,
                second_phone: o.customer.second_phone.as_deref(),
                address: &o.customer.address,
                governorate: IdName {
                    id: o.customer.governorate_id.into(),
                    name: &o.customer.governorate_name,
                },
            },
            shipping_option: IdName {
                id: o.shipping_option_id.into(),
                name: &o.shipping_option_name,
            },
            lines: o
                .lines
                .iter()
                .map(|l| (l, pieces::completed_line(o, l)))
                .map(|(l, completed)| LineView {
                    id: l.id,
                    variant_id: l.variant_id,
                    product_id: l.product_id,
                    title: &l.title,
                    variant_label: &l.variant_label,
                    quantity: l.quantity,
                    // A settled line shows every piece counted (never null).
                    delivered_quantity: completed
                        .map_or(l.outcome.delivered_quantity, |c| Some(c.delivered)),
                    returned_quantity: completed
                        .map_or(l.outcome.returned_quantity, |c| Some(c.returned)),
                    damaged_quantity: l.outcome.damaged_quantity,
                    lost_quantity: l.outcome.lost_quantity,
                    destroyed_quantity: l.outcome.destroyed_quantity,
                    sell_price: Money(l.sell_price),
                    profit: Money(l.profit),
                    commission_on: l.commission_on,
                    warranties: l
                        .warranties
                        .iter()
                        .map(|w| LineWarrantyView {
                            id: w.warranty_id,
                            name: &w.name,
                            unit_price: Money(w.unit_price),
                            quantity: w.quantity,
                            total: Money(w.total),
                            duration_days: w.duration_days,
                            terms: &w.terms,
                        })
                        .collect(),
                })
                .collect(),
            totals: TotalsView {
                figures: t.into(),
                income_tax_percent: Money(t.income_tax_percent),
            },
            payout: PayoutView {
                state: state.as_str(),
                ready_at: ready_at.map(Stamp),
            },
            timeline: o
                .timeline
                .iter()
                .map(|e| TimelineView {
                    status: e.status.as_str(),
                    label: messages::status_label(e.status),
                    at: Stamp(e.at),
                    reason: e.reason.as_deref(),
                })
                .collect(),
            created_at: Stamp(o.created_at),
            updated_at: Stamp(o.updated_at),
            confirmed_at: o.confirmed_at.map(Stamp),
            delivered_at: o.delivered_at.map(Stamp),
        }
    }
}
