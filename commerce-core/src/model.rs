//! The domain records the engine and the stores exchange.
//!
//! Ids are `i64` (they map one to one onto SQL `BIGINT`). Money is [`Decimal`] with two decimals.
//! Instants are UTC; they are rendered in Egypt time only on the wire.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

/// Id of an account.
pub type AccountId = i64;
/// Id of an API key.
pub type KeyId = i64;
/// Id of a category.
pub type CategoryId = i64;
/// Id of a product.
pub type ProductId = i64;
/// Id of a variant (the `variant_id` of orders and quotes).
pub type VariantId = i64;
/// Id of a product warranty.
pub type WarrantyId = i64;
/// Id of a governorate.
pub type GovernorateId = i64;
/// Id of a shipping option.
pub type ShippingOptionId = i64;
/// Id of an order.
pub type OrderId = i64;
/// Id of an order line.
pub type LineId = i64;
/// Id of a withdrawal request.
pub type WithdrawalId = i64;

/// Declares a string-backed enum with `as_str` and `parse`.
macro_rules! string_enum {
    ($(#[$meta:meta])* $name:ident { $($(#[$vmeta:meta])* $variant:ident => $text:literal),+ $(,)? }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vmeta])* $variant),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];

            /// The wire and storage spelling.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }

            /// Parses the wire and storage spelling (exact, case-sensitive).
            pub fn parse(text: &str) -> Option<Self> {
                match text {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }
        }

        impl std::fmt::Display for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.as_str())
            }
        }
    };
}
pub(crate) use string_enum;

string_enum! {
    /// Which kind of account owns a key.
    Side {
        /// An online-store owner reselling the platform's products.
        Marketer => "marketer",
        /// A supplier of products.
        Supplier => "supplier",
        /// A shipping company (refused everywhere but `/me`).
        Shipping => "shipping",
    }
}

string_enum! {
    /// The life state of an account.
    AccountState {
        /// Usable.
        Active => "active",
        /// Suspended by the platform: its keys stop at once.
        Suspended => "suspended",
        /// Deleted.
        Deleted => "deleted",
        /// Registration not completed.
        Incomplete => "incomplete",
    }
}

string_enum! {
    /// The API access state of an account; only `approved` passes.
    ApiStatus {
        /// Never requested.
        None => "none",
        /// Requested, awaiting the team.
        Pending => "pending",
        /// Approved: keys work.
        Approved => "approved",
        /// Refused by the team.
        Rejected => "rejected",
        /// Suspended by the team or the owner.
        Suspended => "suspended",
        /// Cancelled.
        Cancelled => "cancelled",
    }
}

string_enum! {
    /// What a key may do.
    Ability {
        /// Categories, products, shipping options, shipping quote.
        CatalogRead => "catalog:read",
        /// List and read orders.
        OrdersRead => "orders:read",
        /// Register and cancel orders.
        OrdersWrite => "orders:write",
        /// Read the wallet.
        WalletRead => "wallet:read",
        /// Supplier quotes (read).
        QuotesRead => "quotes:read",
        /// Supplier quotes (write).
        QuotesWrite => "quotes:write",
        /// Supplier statement.
        StatementRead => "statement:read",
    }
}

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
    /// The detailed status of an order (the complete catalogue of decisions 4).
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

    /// Whether the platform may move an order from `self` to `to`.
    ///
    /// The lifecycle: pending -> confirmed -> preparing -> shipped -> delivered, partially
    /// delivered or returned -> archived. Before shipping, an order can be cancelled (by the
    /// team, or refused by the customer while pending). Cancelled orders can be archived.
    pub fn can_move_to(self, to: OrderStatus) -> bool {
        use OrderStatus::*;
        matches!(
            (self, to),
            (
                Pending,
                Confirmed | RejectedByCustomer | Cancelled | RejectedByMarketer
            ) | (Confirmed, Preparing | Shipped | Cancelled)
                | (Preparing, Shipped | Cancelled)
                | (Shipped, Delivered | PartiallyDelivered | Returned)
                | (
                    Delivered
                        | PartiallyDelivered
                        | Returned
                        | RejectedByMarketer
                        | RejectedByCustomer
                        | Cancelled,
                    Archived
                )
        )
    }
}

string_enum! {
    /// The state of a withdrawal request.
    WithdrawalStatus {
        /// Awaiting the team.
        Pending => "pending",
        /// Paid out.
        Completed => "completed",
        /// Refused.
        Rejected => "rejected",
    }
}

string_enum! {
    /// Payout readiness of an order's profit (decisions 5).
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

/// An account (marketer, supplier or shipping company).
#[derive(Debug, Clone, PartialEq)]
pub struct Account {
    /// Id.
    pub id: AccountId,
    /// Owner's name.
    pub name: String,
    /// Store name (marketers).
    pub store_name: Option<String>,
    /// E-mail.
    pub email: String,
    /// Phone.
    pub phone: String,
    /// Kind of account.
    pub side: Side,
    /// Life state.
    pub state: AccountState,
    /// API access state.
    pub api_status: ApiStatus,
    /// Creation instant.
    pub created_at: DateTime<Utc>,
}

/// A new account, as the platform registers it.
#[derive(Debug, Clone, PartialEq)]
pub struct NewAccount {
    /// Owner's name.
    pub name: String,
    /// Store name (marketers).
    pub store_name: Option<String>,
    /// E-mail.
    pub email: String,
    /// Phone.
    pub phone: String,
    /// Kind of account.
    pub side: Side,
    /// Initial life state.
    pub state: AccountState,
    /// Initial API access state.
    pub api_status: ApiStatus,
}

/// SHA-256 of a key's plaintext.
pub type KeyHash = [u8; 32];

/// An API key as stored: never its plaintext.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiKey {
    /// Id.
    pub id: KeyId,
    /// Owning account.
    pub account_id: AccountId,
    /// Name given by the owner.
    pub name: String,
    /// SHA-256 of the plaintext.
    pub hash: KeyHash,
    /// Abilities granted.
    pub abilities: Vec<Ability>,
    /// Expiry, if any.
    pub expires_at: Option<DateTime<Utc>>,
    /// Revocation instant, if revoked.
    pub revoked_at: Option<DateTime<Utc>>,
    /// Requests allowed per minute.
    pub rate_limit: u32,
    /// Creation instant.
    pub created_at: DateTime<Utc>,
}

impl ApiKey {
    /// Whether the key may be used at `now`: not revoked, not expired.
    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|at| at > now)
    }
}

/// A key record to insert (the engine hashes the plaintext).
#[derive(Debug, Clone, PartialEq)]
pub struct NewKeyRecord {
    /// Owning account.
    pub account_id: AccountId,
    /// Name.
    pub name: String,
    /// SHA-256 of the plaintext.
    pub hash: KeyHash,
    /// Abilities.
    pub abilities: Vec<Ability>,
    /// Expiry.
    pub expires_at: Option<DateTime<Utc>>,
    /// Requests per minute.
    pub rate_limit: u32,
}

/// A category of products.
#[derive(Debug, Clone, PartialEq)]
pub struct Category {
    /// Id.
    pub id: CategoryId,
    /// Name.
    pub name: String,
    /// Slug.
    pub slug: String,
    /// Parent, if a subcategory.
    pub parent_id: Option<CategoryId>,
    /// Listed by the API.
    pub active: bool,
}

/// A new category.
#[derive(Debug, Clone, PartialEq)]
pub struct NewCategory {
    /// Name.
    pub name: String,
    /// Slug.
    pub slug: String,
    /// Parent, if a subcategory.
    pub parent_id: Option<CategoryId>,
}

/// A product with its variants and warranties.
#[derive(Debug, Clone, PartialEq)]
pub struct Product {
    /// Id.
    pub id: ProductId,
    /// Title.
    pub title: String,
    /// Slug.
    pub slug: String,
    /// Category.
    pub category_id: CategoryId,
    /// Description.
    pub description: String,
    /// Image URLs.
    pub images: Vec<String>,
    /// File URLs.
    pub files: Vec<String>,
    /// Video URL.
    pub video_url: Option<String>,
    /// Marketing files URL.
    pub marketing_files_url: Option<String>,
    /// Public product page.
    pub url: String,
    /// Sold now (a stopped product is a 404).
    pub active: bool,
    /// Last change of the product or of a variant's price or stock.
    pub updated_at: DateTime<Utc>,
    /// Variants, by id.
    pub variants: Vec<Variant>,
    /// Warranties (active and stopped), by id.
    pub warranties: Vec<Warranty>,
}

/// A new product (variants and warranties are added afterwards).
#[derive(Debug, Clone, PartialEq)]
pub struct NewProduct {
    /// Title.
    pub title: String,
    /// Slug.
    pub slug: String,
    /// Category.
    pub category_id: CategoryId,
    /// Description.
    pub description: String,
    /// Image URLs.
    pub images: Vec<String>,
    /// File URLs.
    pub files: Vec<String>,
    /// Video URL.
    pub video_url: Option<String>,
    /// Marketing files URL.
    pub marketing_files_url: Option<String>,
    /// Public product page.
    pub url: String,
}

/// A variant of a product.
#[derive(Debug, Clone, PartialEq)]
pub struct Variant {
    /// Id.
    pub id: VariantId,
    /// Owning product.
    pub product_id: ProductId,
    /// Label.
    pub label: String,
    /// The marketer's cost.
    pub price: Decimal,
    /// Lower bound of the suggested sale price.
    pub suggested_min: Decimal,
    /// Upper bound of the suggested sale price.
    pub suggested_max: Decimal,
    /// Pieces that can be ordered now.
    pub available: i64,
}

/// A new variant.
#[derive(Debug, Clone, PartialEq)]
pub struct NewVariant {
    /// Label.
    pub label: String,
    /// The marketer's cost.
    pub price: Decimal,
    /// Lower bound of the suggested sale price.
    pub suggested_min: Decimal,
    /// Upper bound of the suggested sale price.
    pub suggested_max: Decimal,
    /// Pieces available.
    pub available: i64,
}

/// A change to a variant; `None` leaves a field as it is.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct VariantPatch {
    /// New price.
    pub price: Option<Decimal>,
    /// New suggested minimum.
    pub suggested_min: Option<Decimal>,
    /// New suggested maximum.
    pub suggested_max: Option<Decimal>,
    /// New available count.
    pub available: Option<i64>,
}

/// A warranty offered on a product.
#[derive(Debug, Clone, PartialEq)]
pub struct Warranty {
    /// Id.
    pub id: WarrantyId,
    /// Owning product.
    pub product_id: ProductId,
    /// Name.
    pub name: String,
    /// Fixed fee.
    pub admin_fee: Decimal,
    /// Percent of the per-piece sale price.
    pub percent: Decimal,
    /// Minimum indicative price.
    pub price_from: Decimal,
    /// Duration in days.
    pub duration_days: i32,
    /// Terms (multi-line).
    pub terms: String,
    /// Icon URL.
    pub icon_url: Option<String>,
    /// Offered now (a stopped warranty is refused on orders).
    pub active: bool,
}

/// A new warranty.
#[derive(Debug, Clone, PartialEq)]
pub struct NewWarranty {
    /// Name.
    pub name: String,
    /// Fixed fee.
    pub admin_fee: Decimal,
    /// Percent of the per-piece sale price.
    pub percent: Decimal,
    /// Minimum indicative price.
    pub price_from: Decimal,
    /// Duration in days.
    pub duration_days: i32,
    /// Terms.
    pub terms: String,
    /// Icon URL.
    pub icon_url: Option<String>,
}

/// An Egyptian governorate.
#[derive(Debug, Clone, PartialEq)]
pub struct Governorate {
    /// Id.
    pub id: GovernorateId,
    /// Arabic name.
    pub name: String,
}

/// What a shipping option charges for one governorate.
#[derive(Debug, Clone, PartialEq)]
pub struct ShippingRate {
    /// Governorate served.
    pub governorate_id: GovernorateId,
    /// Governorate name (filled by the store on reads).
    pub governorate_name: String,
    /// Base delivery charge.
    pub delivery_charge: Decimal,
    /// Tax on the base charge, percent.
    pub shipping_tax_percent: Decimal,
    /// Percent of the goods added to the charge.
    pub total_due_tax_percent: Decimal,
}

/// A delivery type with its governorates.
#[derive(Debug, Clone, PartialEq)]
pub struct ShippingOption {
    /// Id.
    pub id: ShippingOptionId,
    /// Name.
    pub name: String,
    /// Offered now.
    pub active: bool,
    /// Governorates served, by governorate id.
    pub rates: Vec<ShippingRate>,
}

impl ShippingOption {
    /// The rate for one governorate, if served.
    pub fn rate(&self, governorate_id: GovernorateId) -> Option<&ShippingRate> {
        self.rates
            .iter()
            .find(|r| r.governorate_id == governorate_id)
    }
}

/// The customer of an order.
#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Totals {
    /// Sum of line sale prices times quantities.
    pub products: Decimal,
    /// Sum of warranty totals.
    pub warranties: Decimal,
    /// Delivery charge due from the customer.
    pub delivery_charge: Decimal,
    /// Goods plus delivery.
    pub customer_total: Decimal,
    /// The marketer's profit.
    pub profit: Decimal,
    /// The platform commission.
    pub income_tax: Decimal,
    /// Profit minus commission.
    pub net_profit: Decimal,
    /// Commission percent the order was registered with.
    pub income_tax_percent: Decimal,
}

/// A warranty chosen on an order line.
#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LineOutcome {
    /// Pieces delivered.
    pub delivered_quantity: Option<i64>,
    /// Pieces returned.
    pub returned_quantity: Option<i64>,
    /// Pieces damaged.
    pub damaged_quantity: i64,
    /// Pieces lost.
    pub lost_quantity: i64,
    /// Pieces destroyed.
    pub destroyed_quantity: i64,
}

/// A line of an order.
#[derive(Debug, Clone, PartialEq)]
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
}

/// One entry of an order's timeline.
#[derive(Debug, Clone, PartialEq)]
pub struct TimelineEntry {
    /// Status entered.
    pub status: OrderStatus,
    /// When.
    pub at: DateTime<Utc>,
    /// Why, if given.
    pub reason: Option<String>,
}

/// An order as stored.
#[derive(Debug, Clone, PartialEq)]
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
#[derive(Debug, Clone, PartialEq)]
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
}

/// An order to register, fully priced by the engine.
///
/// [`Store::place_order`](crate::store::OrderStore::place_order) writes it atomically: the
/// `external_reference` check, the stock reservation of every line, the order itself, the
/// idempotency link and the billing meter entry all succeed together or not at all.
#[derive(Debug, Clone, PartialEq)]
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
    pub bill_month: Option<String>,
    /// Idempotency record to attach the new order to.
    pub idempotency: Option<IdempotencyScope>,
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

/// A withdrawal request made from the wallet page.
#[derive(Debug, Clone, PartialEq)]
pub struct Withdrawal {
    /// Id.
    pub id: WithdrawalId,
    /// Owning account.
    pub account_id: AccountId,
    /// Amount requested.
    pub amount: Decimal,
    /// Supply amount.
    pub supply_amount: Decimal,
    /// State.
    pub status: WithdrawalStatus,
    /// Wallet number to pay to.
    pub wallet_number: String,
    /// Wallet description.
    pub wallet_description: String,
    /// Notes.
    pub notes: Option<String>,
    /// Transfer reference once paid.
    pub transfer_reference: Option<String>,
    /// Receipt URL once paid.
    pub receipt_url: Option<String>,
    /// Request instant.
    pub created_at: DateTime<Utc>,
    /// Decision instant.
    pub decided_at: Option<DateTime<Utc>>,
}

/// A new withdrawal request.
#[derive(Debug, Clone, PartialEq)]
pub struct NewWithdrawal {
    /// Owning account.
    pub account_id: AccountId,
    /// Amount.
    pub amount: Decimal,
    /// Supply amount.
    pub supply_amount: Decimal,
    /// Wallet number.
    pub wallet_number: String,
    /// Wallet description.
    pub wallet_description: String,
    /// Notes.
    pub notes: Option<String>,
}

/// The team's decision on a withdrawal.
#[derive(Debug, Clone, PartialEq)]
pub enum WithdrawalDecision {
    /// Paid out.
    Complete {
        /// Transfer reference.
        transfer_reference: String,
        /// Receipt URL.
        receipt_url: Option<String>,
    },
    /// Refused.
    Reject {
        /// Why.
        notes: Option<String>,
    },
}

/// The scope of an idempotency key: the account plus the header value.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct IdempotencyScope {
    /// Account.
    pub account_id: AccountId,
    /// `Idempotency-Key` header value.
    pub key: String,
}

/// A response kept for replay.
#[derive(Debug, Clone, PartialEq)]
pub struct StoredResponse {
    /// HTTP status.
    pub status: u16,
    /// Body bytes.
    pub body: Vec<u8>,
}

/// What the billing meter holds for an account and month.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct MeterReading {
    /// Distinct products pulled.
    pub pulled_products: u64,
    /// Order operations executed.
    pub order_operations: u64,
}

/// A page request: `page` from 1, `per_page` 1 to 100.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PageRequest {
    /// Page number, from 1.
    pub page: u32,
    /// Items per page.
    pub per_page: u32,
}

impl PageRequest {
    /// Items to skip.
    pub fn offset(self) -> u64 {
        u64::from(self.page.saturating_sub(1)) * u64::from(self.per_page)
    }
}

impl Default for PageRequest {
    fn default() -> Self {
        Self {
            page: 1,
            per_page: 25,
        }
    }
}

/// One page of items and the total count.
#[derive(Debug, Clone, PartialEq)]
pub struct Page<T> {
    /// Items of the page.
    pub items: Vec<T>,
    /// Items across all pages.
    pub total: u64,
}

/// Filters of `GET /products`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ProductFilter {
    /// Products in any of these categories (the category and its subcategories).
    pub category_ids: Option<Vec<CategoryId>>,
    /// Case-insensitive substring of the title.
    pub query: Option<String>,
    /// Changed at or after.
    pub updated_since: Option<DateTime<Utc>>,
}

/// Filters of `GET /orders`.
#[derive(Debug, Clone, Default, PartialEq)]
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

impl NewAccount {
    /// The account as registered with `id` at `at`.
    pub fn into_account(self, id: AccountId, at: DateTime<Utc>) -> Account {
        Account {
            id,
            name: self.name,
            store_name: self.store_name,
            email: self.email,
            phone: self.phone,
            side: self.side,
            state: self.state,
            api_status: self.api_status,
            created_at: at,
        }
    }
}

impl NewKeyRecord {
    /// The key as stored with `id` at `at` (not revoked).
    pub fn into_key(self, id: KeyId, at: DateTime<Utc>) -> ApiKey {
        ApiKey {
            id,
            account_id: self.account_id,
            name: self.name,
            hash: self.hash,
            abilities: self.abilities,
            expires_at: self.expires_at,
            revoked_at: None,
            rate_limit: self.rate_limit,
            created_at: at,
        }
    }
}

impl NewCategory {
    /// The category as added with `id` (listed).
    pub fn into_category(self, id: CategoryId) -> Category {
        Category {
            id,
            name: self.name,
            slug: self.slug,
            parent_id: self.parent_id,
            active: true,
        }
    }
}

impl NewProduct {
    /// The product as added with `id` at `at` (sold, no variants or warranties yet).
    pub fn into_product(self, id: ProductId, at: DateTime<Utc>) -> Product {
        Product {
            id,
            title: self.title,
            slug: self.slug,
            category_id: self.category_id,
            description: self.description,
            images: self.images,
            files: self.files,
            video_url: self.video_url,
            marketing_files_url: self.marketing_files_url,
            url: self.url,
            active: true,
            updated_at: at,
            variants: Vec::new(),
            warranties: Vec::new(),
        }
    }
}

impl NewVariant {
    /// The variant as added to `product` with `id`.
    pub fn into_variant(self, id: VariantId, product: ProductId) -> Variant {
        Variant {
            id,
            product_id: product,
            label: self.label,
            price: self.price,
            suggested_min: self.suggested_min,
            suggested_max: self.suggested_max,
            available: self.available,
        }
    }
}

impl NewWarranty {
    /// The warranty as added to `product` with `id` (offered).
    pub fn into_warranty(self, id: WarrantyId, product: ProductId) -> Warranty {
        Warranty {
            id,
            product_id: product,
            name: self.name,
            admin_fee: self.admin_fee,
            percent: self.percent,
            price_from: self.price_from,
            duration_days: self.duration_days,
            terms: self.terms,
            icon_url: self.icon_url,
            active: true,
        }
    }
}

impl NewWithdrawal {
    /// The withdrawal as requested with `id` at `at` (pending).
    pub fn into_withdrawal(self, id: WithdrawalId, at: DateTime<Utc>) -> Withdrawal {
        Withdrawal {
            id,
            account_id: self.account_id,
            amount: self.amount,
            supply_amount: self.supply_amount,
            status: WithdrawalStatus::Pending,
            wallet_number: self.wallet_number,
            wallet_description: self.wallet_description,
            notes: self.notes,
            transfer_reference: None,
            receipt_url: None,
            created_at: at,
            decided_at: None,
        }
    }
}
