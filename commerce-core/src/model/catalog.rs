//! The catalogue: categories, products, variants, warranties, and the product filter.

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use super::*;

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
