//! Edits of the catalogue after it is made: a product's, a category's and a warranty's
//! fields. Each patch is `Default` (nothing changes) and set field by field with its `set_*`
//! methods; `None` leaves a field as it is.

use rust_decimal::Decimal;

use super::*;

/// A change to a product: start from `ProductPatch::default()`, e.g.
/// `ProductPatch::default().set_title("...")`.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct ProductPatch {
    /// New title.
    pub title: Option<String>,
    /// New slug.
    pub slug: Option<String>,
    /// New category.
    pub category_id: Option<CategoryId>,
    /// New description.
    pub description: Option<String>,
    /// New image URLs (the whole list).
    pub images: Option<Vec<String>>,
    /// New file URLs (the whole list).
    pub files: Option<Vec<String>>,
    /// New video URL (`Some(None)` removes it).
    pub video_url: Option<Option<String>>,
    /// New marketing files URL (`Some(None)` removes it).
    pub marketing_files_url: Option<Option<String>>,
    /// New public page.
    pub url: Option<String>,
    /// New supplier (`Some(None)`: the platform's own goods).
    pub supplier_id: Option<Option<AccountId>>,
    /// Sold (`Some(true)`) or stopped (`Some(false)`): its removal time follows
    /// [`removal_after`](crate::domain::edits::removal_after).
    pub active: Option<bool>,
}

impl ProductPatch {
    /// Also sets the title.
    pub fn set_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Also sets the slug.
    pub fn set_slug(mut self, slug: impl Into<String>) -> Self {
        self.slug = Some(slug.into());
        self
    }

    /// Also moves the product to another category.
    pub fn set_category(mut self, category: CategoryId) -> Self {
        self.category_id = Some(category);
        self
    }

    /// Also sets the description.
    pub fn set_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Also replaces the image URLs.
    pub fn set_images(mut self, images: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.images = Some(images.into_iter().map(Into::into).collect());
        self
    }

    /// Also replaces the file URLs.
    pub fn set_files(mut self, files: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.files = Some(files.into_iter().map(Into::into).collect());
        self
    }

    /// Also sets (`Some`) or removes (`None`) the video.
    pub fn set_video_url(mut self, url: Option<String>) -> Self {
        self.video_url = Some(url);
        self
    }

    /// Also sets (`Some`) or removes (`None`) the marketing files.
    pub fn set_marketing_files_url(mut self, url: Option<String>) -> Self {
        self.marketing_files_url = Some(url);
        self
    }

    /// Also sets the public page.
    pub fn set_url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// Also sets (`Some`) or removes (`None`) the supplier.
    pub fn set_supplier(mut self, supplier: Option<AccountId>) -> Self {
        self.supplier_id = Some(supplier);
        self
    }

    /// Also starts (`true`) or stops (`false`) selling the product.
    pub fn set_active(mut self, active: bool) -> Self {
        self.active = Some(active);
        self
    }
}

/// A change to a category: start from `CategoryPatch::default()`.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct CategoryPatch {
    /// New name.
    pub name: Option<String>,
    /// New slug.
    pub slug: Option<String>,
    /// New parent (`Some(None)`: a top-level category).
    pub parent_id: Option<Option<CategoryId>>,
    /// Listed or hidden.
    pub active: Option<bool>,
}

impl CategoryPatch {
    /// Also sets the name.
    pub fn set_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Also sets the slug.
    pub fn set_slug(mut self, slug: impl Into<String>) -> Self {
        self.slug = Some(slug.into());
        self
    }

    /// Also moves the category under `parent` (`None`: to the top level).
    pub fn set_parent(mut self, parent: Option<CategoryId>) -> Self {
        self.parent_id = Some(parent);
        self
    }

    /// Also lists or hides it.
    pub fn set_active(mut self, active: bool) -> Self {
        self.active = Some(active);
        self
    }
}

/// A change to a warranty: start from `WarrantyPatch::default()`.
#[derive(Debug, Clone, Default, PartialEq)]
#[non_exhaustive]
pub struct WarrantyPatch {
    /// New name.
    pub name: Option<String>,
    /// New fixed fee.
    pub admin_fee: Option<Decimal>,
    /// New percent of the per-piece sale price.
    pub percent: Option<Decimal>,
    /// New indicative "from" price.
    pub price_from: Option<Decimal>,
    /// New duration in days.
    pub duration_days: Option<i32>,
    /// New terms.
    pub terms: Option<String>,
    /// New icon (`Some(None)` removes it).
    pub icon_url: Option<Option<String>>,
    /// Offered or stopped.
    pub active: Option<bool>,
}

impl WarrantyPatch {
    /// Also sets the name.
    pub fn set_name(mut self, name: impl Into<String>) -> Self {
        self.name = Some(name.into());
        self
    }

    /// Also sets the price: the fixed fee and the percent.
    pub fn set_price(mut self, admin_fee: Decimal, percent: Decimal) -> Self {
        self.admin_fee = Some(admin_fee);
        self.percent = Some(percent);
        self
    }

    /// Also sets the indicative "from" price.
    pub fn set_price_from(mut self, price_from: Decimal) -> Self {
        self.price_from = Some(price_from);
        self
    }

    /// Also sets the duration.
    pub fn set_duration_days(mut self, days: i32) -> Self {
        self.duration_days = Some(days);
        self
    }

    /// Also sets the terms.
    pub fn set_terms(mut self, terms: impl Into<String>) -> Self {
        self.terms = Some(terms.into());
        self
    }

    /// Also sets (`Some`) or removes (`None`) the icon.
    pub fn set_icon_url(mut self, url: Option<String>) -> Self {
        self.icon_url = Some(url);
        self
    }

    /// Also offers or stops it.
    pub fn set_active(mut self, active: bool) -> Self {
        self.active = Some(active);
        self
    }
}
