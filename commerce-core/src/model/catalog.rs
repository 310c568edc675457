//! The catalogue: categories, products, variants, warranties, and the product filter.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use super::*;

/// A category of products.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
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

/// A new category: [`NewCategory::new`] (`parent_id` `None` for a top-level category).
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct NewCategory {
    /// Name.
    pub name: String,
    /// Slug.
    pub slug: String,
    /// Parent, if a subcategory.
    pub parent_id: Option<CategoryId>,
}

/// A product with its variants and warranties.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
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
    /// The supplier account whose goods these are (set by the operator; never rendered to
    /// marketers).
    pub supplier_id: Option<AccountId>,
    /// Sold now (a stopped product is a 404).
    pub active: bool,
    /// Last change of the product or of a variant's price or stock.
    pub updated_at: DateTime<Utc>,
    /// The product's catalogue revision: moved forward (by one) by every change of what an
    /// order takes from the product (its own fields, activity, its variants' prices, labels
    /// and supply prices, a variant or warranty added, its warranties), and by nothing else:
    /// not by stock moves (orders, adjustments, returns, received pieces), which move
    /// `updated_at` only. An order priced from a record of this revision is still priced
    /// right while the revision is the same ([`PricedFrom`](crate::model::PricedFrom)); 0
    /// for a new product.
    #[builder(default)]
    pub revision: i64,
    /// Variants, by id.
    pub variants: Vec<Variant>,
    /// Warranties (active and stopped), by id.
    pub warranties: Vec<Warranty>,
}

/// A product that was stopped (made inactive) and is still stopped, with when: an item of
/// `GET /products/removed` ([`CatalogStore::removed_products`](crate::store::CatalogStore::removed_products)).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct RemovedProduct {
    /// The product.
    pub id: ProductId,
    /// When it was last stopped.
    pub removed_at: DateTime<Utc>,
}

impl RemovedProduct {
    /// Product `id`, last stopped at `removed_at`.
    pub fn new(id: ProductId, removed_at: DateTime<Utc>) -> Self {
        Self { id, removed_at }
    }
}

/// A new product (variants and warranties are added afterwards): `NewProduct::builder()`,
/// with the category, title, slug and public page; what is left out is empty (no
/// description, images, files, video, marketing files or supplier).
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct NewProduct {
    /// Title.
    pub title: String,
    /// Slug.
    pub slug: String,
    /// Category.
    pub category_id: CategoryId,
    /// Description (empty when the builder is not given one).
    #[builder(default)]
    pub description: String,
    /// Image URLs (none when the builder is not given them).
    #[builder(default)]
    pub images: Vec<String>,
    /// File URLs (none when the builder is not given them).
    #[builder(default)]
    pub files: Vec<String>,
    /// Video URL.
    pub video_url: Option<String>,
    /// Marketing files URL.
    pub marketing_files_url: Option<String>,
    /// Public product page.
    pub url: String,
    /// The supplier account whose goods these are.
    pub supplier_id: Option<AccountId>,
}

/// A variant of a product.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
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
    /// Paid to the product's supplier per delivered piece (never rendered to marketers);
    /// `0.00` when the builder is not given one.
    #[builder(default)]
    pub supply_price: Decimal,
}

/// A new variant: `NewVariant::builder()`, with the label, the price (the marketer's cost)
/// and the pieces available; the suggested sale range starts at the price unless given.
#[derive(Debug, Clone, PartialEq, Default, bon::Builder)]
#[non_exhaustive]
pub struct NewVariant {
    /// Label.
    pub label: String,
    /// The marketer's cost.
    pub price: Decimal,
    /// Lower bound of the suggested sale price (the price when the builder is not given one).
    #[builder(default = price)]
    pub suggested_min: Decimal,
    /// Upper bound of the suggested sale price (the price when the builder is not given one).
    #[builder(default = price)]
    pub suggested_max: Decimal,
    /// Pieces available.
    pub available: i64,
    /// Paid to the product's supplier per delivered piece (`0.00` when the builder is not
    /// given one).
    #[builder(default)]
    pub supply_price: Decimal,
}

/// A change to a variant; `None` leaves a field as it is. Start from
/// `VariantPatch::default()` and set what changes, e.g.
/// `VariantPatch::default().set_price(price)`. Stock is not set here: it moves by deltas
/// ([`NewStockAdjustment`]), so that a change never undoes orders placed in between.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct VariantPatch {
    /// New label.
    pub label: Option<String>,
    /// New price.
    pub price: Option<Decimal>,
    /// New suggested minimum.
    pub suggested_min: Option<Decimal>,
    /// New suggested maximum.
    pub suggested_max: Option<Decimal>,
    /// New supply price.
    pub supply_price: Option<Decimal>,
}

/// A warranty offered on a product.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
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

/// A new warranty: `NewWarranty::builder()`, with the name and the duration; free unless
/// given an `admin_fee` or a `percent` (its price per piece is the fee plus the percent of
/// the per-piece sale price); no terms or icon unless given.
#[derive(Debug, Clone, PartialEq, Default, bon::Builder)]
#[non_exhaustive]
pub struct NewWarranty {
    /// Name.
    pub name: String,
    /// Fixed fee per piece (`0.00` when the builder is not given one).
    #[builder(default)]
    pub admin_fee: Decimal,
    /// Percent of the per-piece sale price, 0 to 100 (`0` when the builder is not given one).
    #[builder(default)]
    pub percent: Decimal,
    /// Minimum indicative price shown in the catalogue (`0.00` when the builder is not given
    /// one).
    #[builder(default)]
    pub price_from: Decimal,
    /// Duration in days.
    pub duration_days: i32,
    /// Terms, multi-line (empty when the builder is not given them).
    #[builder(default)]
    pub terms: String,
    /// Icon URL.
    pub icon_url: Option<String>,
}

/// Filters of `GET /products`.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ProductFilter {
    /// Products in any of these categories (the category and its subcategories).
    pub category_ids: Option<Vec<CategoryId>>,
    /// Case-insensitive substring of the title.
    pub query: Option<String>,
    /// Changed at or after.
    pub updated_since: Option<DateTime<Utc>>,
}

impl ProductFilter {
    /// A `ProductFilter` of its fields, in their order.
    pub fn new(
        category_ids: Option<Vec<CategoryId>>,
        query: Option<String>,
        updated_since: Option<DateTime<Utc>>,
    ) -> Self {
        Self {
            category_ids,
            query,
            updated_since,
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
            supplier_id: self.supplier_id,
            active: true,
            updated_at: at,
            revision: 0,
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
            supply_price: self.supply_price,
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

impl NewCategory {
    /// A `NewCategory` of its fields, in their order.
    pub fn new(name: String, slug: String, parent_id: Option<CategoryId>) -> Self {
        Self {
            name,
            slug,
            parent_id,
        }
    }
}

impl VariantPatch {
    /// Also sets the price.
    pub fn set_price(mut self, price: Decimal) -> Self {
        self.price = Some(price);
        self
    }

    /// Also sets the suggested sale range.
    pub fn set_suggested_range(mut self, min: Decimal, max: Decimal) -> Self {
        self.suggested_min = Some(min);
        self.suggested_max = Some(max);
        self
    }

    /// Also sets the label.
    pub fn set_label(mut self, label: impl Into<String>) -> Self {
        self.label = Some(label.into());
        self
    }

    /// Also sets the supply price.
    pub fn set_supply_price(mut self, supply_price: Decimal) -> Self {
        self.supply_price = Some(supply_price);
        self
    }
}

#[cfg(test)]
impl Product {
    /// A product of unit tests: `id`, active, with one piece of each of `variants` (ids), every
    /// text empty, every price zero.
    pub(crate) fn bare(id: i64, variants: &[i64]) -> Product {
        let variant = |v: i64| {
            Variant::builder()
                .id(VariantId::new(v))
                .product_id(ProductId::new(id))
                .label(String::new())
                .price(Default::default())
                .suggested_min(Default::default())
                .suggested_max(Default::default())
                .available(1)
                .build()
        };
        Product::builder()
            .id(ProductId::new(id))
            .title(String::new())
            .slug(String::new())
            .category_id(CategoryId::new(1))
            .description(String::new())
            .images(Vec::new())
            .files(Vec::new())
            .url(String::new())
            .active(true)
            .updated_at(chrono::DateTime::UNIX_EPOCH)
            .variants(variants.iter().map(|&v| variant(v)).collect())
            .warranties(Vec::new())
            .build()
    }
}
