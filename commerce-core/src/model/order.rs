//! Orders: statuses and families, lines, outcomes, timeline, the order filter, new orders.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use super::*;

string_enum! {
    /// The group of an order status.
    Family {
        /// Awaiting confirmation.
        Pending => "pending",
        /// Confirmed by the customer.
        Confirmed => "confirmed",
        /// With the courier.
        Shipping => "shipping",
        /// Delivered (in full or in part).
        Delivered => "delivered",
        /// Returned in full.
        Returned => "returned",
        /// Cancelled.
        Cancelled => "cancelled",
        /// Archived.
        Archived => "archived",
    }
}

string_enum! {
    /// The detailed status of an order (the complete catalogue, as docs/orders.md lists it).
    OrderStatus {
        /// First entry of every order.
        Pending => "order_pending",
        /// The customer confirmed.
        Confirmed => "order_confirmed",
        /// Being packed.
        Preparing => "order_preparing",
        /// With the courier.
        Shipped => "order_shipped",
        /// Delivered in full.
        Delivered => "order_delivered",
        /// Some pieces delivered, the rest returned.
        PartiallyDelivered => "order_partially_delivered",
        /// Returned in full.
        Returned => "order_returned",
        /// Cancelled by the marketer (API or cancel button).
        RejectedByMarketer => "rejected_by_Marketer",
        /// The customer refused at confirmation.
        RejectedByCustomer => "rejected_by_customer",
        /// Cancelled by the platform team.
        Cancelled => "order_cancelled",
        /// Archived.
        Archived => "order_archived",
    }
}

impl OrderStatus {
    /// The family this status belongs to.
    pub fn family(self) -> Family {
        match self {
            OrderStatus::Pending => Family::Pending,
            OrderStatus::Confirmed | OrderStatus::Preparing => Family::Confirmed,
            OrderStatus::Shipped => Family::Shipping,
            OrderStatus::Delivered | OrderStatus::PartiallyDelivered => Family::Delivered,
            OrderStatus::Returned => Family::Returned,
            OrderStatus::RejectedByMarketer
            | OrderStatus::RejectedByCustomer
            | OrderStatus::Cancelled => Family::Cancelled,
            OrderStatus::Archived => Family::Archived,
        }
    }
}

string_enum! {
    /// Payout readiness of an order's profit (docs/orders.md, "Payout").
    PayoutState {
        /// Not yet delivered.
        Expected => "expected",
        /// Delivered, inside the hold period.
        Held => "held",
        /// Hold period over.
        Ready => "ready",
        /// Included in a completed withdrawal.
        Paid => "paid",
        /// Cancelled or returned: nothing to pay.
        None => "none",
    }
}

/// The customer of an order.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct Customer {
    /// Name.
    pub name: String,
    /// Normalised mobile (`01` + 9 digits).
    pub phone: String,
    /// Second mobile.
    pub second_phone: Option<String>,
    /// Address.
    pub address: String,
    /// Governorate id.
    pub governorate_id: GovernorateId,
    /// Governorate name at registration.
    pub governorate_name: String,
}

/// The money of an order (the wire's `totals`).
#[derive(Debug, Clone, Default, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct Totals {
    /// Sum of line sale prices times quantities.
    #[builder(default)]
    pub products: Decimal,
    /// Sum of warranty totals.
    #[builder(default)]
    pub warranties: Decimal,
    /// Delivery charge due from the customer.
    #[builder(default)]
    pub delivery_charge: Decimal,
    /// Goods plus delivery.
    #[builder(default)]
    pub customer_total: Decimal,
    /// The marketer's profit.
    #[builder(default)]
    pub profit: Decimal,
    /// The platform commission.
    #[builder(default)]
    pub income_tax: Decimal,
    /// Profit minus commission.
    #[builder(default)]
    pub net_profit: Decimal,
    /// Commission percent the order was registered with.
    #[builder(default)]
    pub income_tax_percent: Decimal,
}

impl Totals {
    /// The eight amounts in their order of declaration (the order the SQL stores keep them
    /// in): products, warranties, delivery charge, customer total, profit, income tax, net
    /// profit, income tax percent.
    pub fn amounts(&self) -> [Decimal; 8] {
        [
            self.products,
            self.warranties,
            self.delivery_charge,
            self.customer_total,
            self.profit,
            self.income_tax,
            self.net_profit,
            self.income_tax_percent,
        ]
    }

    /// The same eight amounts, to change in place (each with the same one rule).
    pub fn amounts_mut(&mut self) -> [&mut Decimal; 8] {
        [
            &mut self.products,
            &mut self.warranties,
            &mut self.delivery_charge,
            &mut self.customer_total,
            &mut self.profit,
            &mut self.income_tax,
            &mut self.net_profit,
            &mut self.income_tax_percent,
        ]
    }
}

/// A warranty chosen on an order line.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct LineWarranty {
    /// Warranty id.
    pub warranty_id: WarrantyId,
    /// Name at registration.
    pub name: String,
    /// Unit price.
    pub unit_price: Decimal,
    /// Pieces covered (the line quantity).
    pub quantity: i64,
    /// Unit price times quantity.
    pub total: Decimal,
    /// Duration in days.
    pub duration_days: i32,
    /// Terms at registration.
    pub terms: String,
}

/// What became of a line's pieces (set by the platform after shipping).
#[derive(Debug, Clone, Default, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct LineOutcome {
    /// Pieces delivered.
    pub delivered_quantity: Option<i64>,
    /// Pieces returned.
    pub returned_quantity: Option<i64>,
    /// Pieces damaged.
    #[builder(default)]
    pub damaged_quantity: i64,
    /// Pieces lost.
    #[builder(default)]
    pub lost_quantity: i64,
    /// Pieces destroyed.
    #[builder(default)]
    pub destroyed_quantity: i64,
}

impl LineOutcome {
    /// All `quantity` pieces delivered, nothing else.
    pub fn delivered(quantity: i64) -> Self {
        Self {
            delivered_quantity: Some(quantity),
            ..Self::default()
        }
    }

    /// `delivered` pieces delivered and `returned` returned.
    pub fn partly_delivered(delivered: i64, returned: i64) -> Self {
        Self {
            delivered_quantity: Some(delivered),
            returned_quantity: Some(returned),
            ..Self::default()
        }
    }
}

/// A line of an order.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct OrderLine {
    /// Id.
    pub id: LineId,
    /// Variant ordered.
    pub variant_id: VariantId,
    /// Its product.
    pub product_id: ProductId,
    /// Product title at registration.
    pub title: String,
    /// Variant label at registration.
    pub variant_label: String,
    /// Pieces.
    pub quantity: i64,
    /// Sale price per piece (variant price plus profit).
    pub sell_price: Decimal,
    /// Profit per piece.
    pub profit: Decimal,
    /// Whether commission applies to this line.
    pub commission_on: bool,
    /// Chosen warranties.
    pub warranties: Vec<LineWarranty>,
    /// Outcome after shipping.
    pub outcome: LineOutcome,
    /// The supplier of the variant's product when the order was placed (never rendered to
    /// marketers).
    pub supplier_id: Option<AccountId>,
    /// The variant's supply price when the order was placed (never rendered to marketers);
    /// `0.00` when the builder is not given one.
    #[builder(default)]
    pub supply_price: Decimal,
}

/// One entry of an order's timeline.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct TimelineEntry {
    /// Status entered.
    pub status: OrderStatus,
    /// When.
    pub at: DateTime<Utc>,
    /// Why, if given.
    pub reason: Option<String>,
}

impl TimelineEntry {
    /// `status` entered `at`, for `reason`.
    pub fn new(status: OrderStatus, at: DateTime<Utc>, reason: Option<String>) -> Self {
        Self { status, at, reason }
    }
}

/// An order as stored.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct Order {
    /// Id.
    pub id: OrderId,
    /// Owning account.
    pub account_id: AccountId,
    /// Reference number (`EG-XXXXXXXX`).
    pub number: String,
    /// Number from before reference numbers (digits), if any.
    pub legacy_number: Option<String>,
    /// The caller's order number.
    pub external_reference: Option<String>,
    /// Courier tracking URL.
    pub tracking_url: Option<String>,
    /// Current status.
    pub status: OrderStatus,
    /// Customer.
    pub customer: Customer,
    /// Shipping option id.
    pub shipping_option_id: ShippingOptionId,
    /// Shipping option name at registration.
    pub shipping_option_name: String,
    /// Store name shown to the customer.
    pub store_name: Option<String>,
    /// Store link.
    pub store_link: Option<String>,
    /// Note for the team.
    pub note: Option<String>,
    /// Lines.
    pub lines: Vec<OrderLine>,
    /// Money.
    pub totals: Totals,
    /// History, oldest first.
    pub timeline: Vec<TimelineEntry>,
    /// Registration instant.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// When the customer confirmed.
    pub confirmed_at: Option<DateTime<Utc>>,
    /// When delivered.
    pub delivered_at: Option<DateTime<Utc>>,
}

/// A priced line to register (ids are assigned by the store).
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct NewOrderLine {
    /// Variant ordered.
    pub variant_id: VariantId,
    /// Its product.
    pub product_id: ProductId,
    /// Product title.
    pub title: String,
    /// Variant label.
    pub variant_label: String,
    /// Pieces.
    pub quantity: i64,
    /// Sale price per piece.
    pub sell_price: Decimal,
    /// Profit per piece.
    pub profit: Decimal,
    /// Whether commission applies.
    pub commission_on: bool,
    /// Chosen warranties.
    pub warranties: Vec<LineWarranty>,
    /// The supplier of the variant's product (the snapshot the order keeps).
    pub supplier_id: Option<AccountId>,
    /// The variant's supply price (the snapshot the order keeps).
    pub supply_price: Decimal,
}

/// An order to register, fully priced by the engine.
///
/// [`Store::place_order`](crate::store::OrderStore::place_order) writes it atomically: the
/// `external_reference` check, the stock reservation of every line, the order itself, the
/// idempotency link and the billing meter entry all succeed together or not at all.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct NewOrder {
    /// Owning account.
    pub account_id: AccountId,
    /// Reference number.
    pub number: String,
    /// Legacy number (imports only).
    pub legacy_number: Option<String>,
    /// The caller's order number.
    pub external_reference: Option<String>,
    /// Initial status (always pending through the API).
    pub status: OrderStatus,
    /// Customer.
    pub customer: Customer,
    /// Shipping option id.
    pub shipping_option_id: ShippingOptionId,
    /// Shipping option name.
    pub shipping_option_name: String,
    /// Store name.
    pub store_name: Option<String>,
    /// Store link.
    pub store_link: Option<String>,
    /// Note.
    pub note: Option<String>,
    /// Lines.
    pub lines: Vec<NewOrderLine>,
    /// Money.
    pub totals: Totals,
    /// Registration instant.
    pub created_at: DateTime<Utc>,
    /// Billing month to record one order operation in (`None`: not billed).
    pub bill_month: Option<BillingMonth>,
    /// Idempotency record to attach the new order to, held by this claim's token (else the
    /// order is not placed: [`PlaceOrderError::IdempotencyLost`]).
    ///
    /// [`PlaceOrderError::IdempotencyLost`]: crate::store::PlaceOrderError::IdempotencyLost
    ///
    /// The builder asks for it (`idempotency(None)` without a key).
    #[builder(required)]
    pub idempotency: Option<IdempotencyClaim>,
    /// What its `order.created` webhook event keeps for its rendering.
    pub events: EventContext,
    /// What the lines were priced from, one entry per variant ordered: the store's stock write
    /// takes the pieces only while each is still current, else it writes nothing
    /// ([`PlaceOrderError::Stale`]). Empty: no such check (an order whose lines the caller
    /// built itself); the engine always fills it.
    ///
    /// [`PlaceOrderError::Stale`]: crate::store::PlaceOrderError::Stale
    pub priced_from: Vec<PricedFrom>,
}

/// What one variant of an order was priced from: the variant's price and its product's
/// [`revision`](Product::revision), as read from a product record. The order's stock write
/// compares both with the stored ones in the statement (or under the lock) that takes the
/// variant's pieces, so that an order priced from a kept record that has since changed is
/// refused rather than registered at a stale price.
///
/// The revision, not the product's `updated_at`, is compared because every order's stock
/// write moves `updated_at`: comparing it would make concurrent orders of one product refuse
/// each other. The revision moves only with what an order takes from the product (prices,
/// labels, supply prices, titles, activity, warranties).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct PricedFrom {
    /// The variant ordered.
    pub variant_id: VariantId,
    /// Its product.
    pub product_id: ProductId,
    /// The variant's price the lines were priced with.
    pub price: Decimal,
    /// The product's revision the lines were priced from.
    pub revision: i64,
}

impl PricedFrom {
    /// What an order of `variant` (a variant of `product`) is priced from.
    pub fn of(product: &Product, variant: &Variant) -> Self {
        Self {
            variant_id: variant.id,
            product_id: product.id,
            price: variant.price,
            revision: product.revision,
        }
    }

    /// Whether `product` (the stored record, with `variant` its variant of this entry's id)
    /// is still what the entry was priced from.
    pub fn is_current(&self, product: &Product, variant: &Variant) -> bool {
        variant.id == self.variant_id
            && variant.product_id == self.product_id
            && product.id == self.product_id
            && variant.price == self.price
            && product.revision == self.revision
    }
}

impl NewOrder {
    /// The order as a store registers it: ids assigned (`line_ids` in line order), the
    /// timeline opened with the initial status, nothing confirmed or delivered yet.
    pub fn into_order(self, id: OrderId, line_ids: impl IntoIterator<Item = LineId>) -> Order {
        let lines = self
            .lines
            .into_iter()
            .zip(line_ids)
            .map(|(line, line_id)| OrderLine {
                id: line_id,
                variant_id: line.variant_id,
                product_id: line.product_id,
                title: line.title,
                variant_label: line.variant_label,
                quantity: line.quantity,
                sell_price: line.sell_price,
                profit: line.profit,
                commission_on: line.commission_on,
                warranties: line.warranties,
                outcome: LineOutcome::default(),
                supplier_id: line.supplier_id,
                supply_price: line.supply_price,
            })
            .collect();
        Order {
            id,
            account_id: self.account_id,
            number: self.number,
            legacy_number: self.legacy_number,
            external_reference: self.external_reference,
            tracking_url: None,
            status: self.status,
            customer: self.customer,
            shipping_option_id: self.shipping_option_id,
            shipping_option_name: self.shipping_option_name,
            store_name: self.store_name,
            store_link: self.store_link,
            note: self.note,
            lines,
            totals: self.totals,
            timeline: vec![TimelineEntry {
                status: self.status,
                at: self.created_at,
                reason: None,
            }],
            created_at: self.created_at,
            updated_at: self.created_at,
            confirmed_at: None,
            delivered_at: None,
        }
    }
}

/// Filters of `GET /orders`.
#[derive(Debug, Clone, Default, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct OrderFilter {
    /// Exact status.
    pub status: Option<OrderStatus>,
    /// Family.
    pub family: Option<Family>,
    /// Exact external reference.
    pub external_reference: Option<String>,
    /// Number, normalised by [`normalize_order_number`]: matches the `EG-` number or the
    /// legacy number.
    pub number: Option<String>,
    /// Changed at or after.
    pub updated_since: Option<DateTime<Utc>>,
}

/// Normalises an order number for matching: uppercase, dashes and spaces removed.
pub fn normalize_order_number(number: &str) -> String {
    number
        .chars()
        .filter(|c| *c != '-' && !c.is_whitespace())
        .flat_map(char::to_uppercase)
        .collect()
}

impl Order {
    /// Whether this order matches a filter (the reference semantics every store follows).
    pub fn matches(&self, filter: &OrderFilter) -> bool {
        filter.status.is_none_or(|s| s == self.status)
            && filter.family.is_none_or(|f| f == self.status.family())
            && filter
                .external_reference
                .as_deref()
                .is_none_or(|r| self.external_reference.as_deref() == Some(r))
            && filter.number.as_deref().is_none_or(|n| {
                normalize_order_number(&self.number) == n
                    || self.legacy_number.as_deref() == Some(n)
            })
            && filter.updated_since.is_none_or(|t| self.updated_at >= t)
    }
}

// ---- what a store registers from each new record (one mapping for every store) ----
