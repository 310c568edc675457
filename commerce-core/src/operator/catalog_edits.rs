//! The operator's edits of the catalogue after it is made: products (their supplier
//! included), categories and warranties, with the checks of their fields. Each edit marks the
//! products whose rendering it changes as changed, so that the marketers' sync by
//! `updated_since` sees it; orders keep what they were placed with.

use crate::domain::fields::{MAX_TEXT, TextKind, clean_text, is_web_link};
use crate::limits::{MAX_NOTE, MAX_URL};
use crate::model::Problem;
use crate::model::*;
use crate::money::accepted_amount;
use rust_decimal::Decimal;

use super::{Operator, OperatorError, OperatorResult, check_money};

/// The longest product description or warranty terms, in characters.
const MAX_LONG_TEXT: usize = 10_000;

/// A URL field: an http or https link of at most [`MAX_URL`] characters, trimmed.
fn web_link(field: &str, raw: &str) -> OperatorResult<String> {
    let text = clean_text(raw, MAX_URL, TextKind::SingleLine)
        .map_err(|problem| OperatorError::field(field, problem))?
        .ok_or_else(|| OperatorError::field(field, Problem::Required))?;
    if !is_web_link(&text) {
        return Err(OperatorError::field(field, Problem::InvalidUrl));
    }
    Ok(text)
}

/// An optional URL field: blank removes it.
fn optional_link(field: &str, raw: Option<&str>) -> OperatorResult<Option<String>> {
    match raw.map(str::trim) {
        None | Some("") => Ok(None),
        Some(text) => web_link(field, text).map(Some),
    }
}

/// Multi-line printable text (blank is empty).
fn long_text(field: &str, raw: &str, max: usize) -> OperatorResult<String> {
    Ok(clean_text(raw, max, TextKind::MultiLine)
        .map_err(|problem| OperatorError::field(field, problem))?
        .unwrap_or_default())
}

/// Each URL of a list, checked as `field.N`.
fn links(field: &str, raw: &[String]) -> OperatorResult<Vec<String>> {
    raw.iter()
        .enumerate()
        .map(|(i, url)| web_link(&format!("{field}.{i}"), url))
        .collect()
}

/// A new product as the patch that sets each of its fields (its category aside), for the
/// checks it shares with an edit ([`Operator::checked_product`]).
fn patch_setting(new: NewProduct) -> (CategoryId, ProductPatch) {
    let patch = ProductPatch {
        title: Some(new.title),
        slug: Some(new.slug),
        category_id: None,
        description: Some(new.description),
        images: Some(new.images),
        files: Some(new.files),
        video_url: Some(new.video_url),
        marketing_files_url: Some(new.marketing_files_url),
        url: Some(new.url),
        supplier_id: Some(new.supplier_id),
        active: None,
    };
    (new.category_id, patch)
}

/// The new product that [`patch_setting`] made a patch of, from the patch as checked (the
/// checks keep every field set).
fn new_product(category: CategoryId, patch: ProductPatch) -> NewProduct {
    NewProduct::builder()
        .category_id(category)
        .title(patch.title.unwrap_or_default())
        .slug(patch.slug.unwrap_or_default())
        .url(patch.url.unwrap_or_default())
        .description(patch.description.unwrap_or_default())
        .images(patch.images.unwrap_or_default())
        .files(patch.files.unwrap_or_default())
        .maybe_video_url(patch.video_url.flatten())
        .maybe_marketing_files_url(patch.marketing_files_url.flatten())
        .maybe_supplier_id(patch.supplier_id.flatten())
        .build()
}

impl Operator {
    /// Adds a product (sold at once; add variants next), with the checks of an edit
    /// ([`update_product`](Self::update_product)) on each of its fields: `url` required, the
    /// other links optional (blank is none).
    pub async fn create_product(&self, new: NewProduct) -> OperatorResult<Product> {
        let (category, patch) = patch_setting(new);
        let new = new_product(category, self.checked_product(patch).await?);
        Ok(self.store().insert_product(new, self.now()).await?)
    }

    /// Changes a product's fields ([`ProductPatch`]), with the checks of their kind, the
    /// same as [`create_product`](Self::create_product)'s: `title` and `slug` printable
    /// single-line text of at most [`MAX_TEXT`] characters, not blank; `description` printable
    /// multi-line text; `url`, `video_url`, `marketing_files_url`, and each of `images` and
    /// `files` (`images.N`) an http or https link; `supplier_id` an account of the supplier
    /// side ([`Problem::NotASupplier`]). The product is marked changed, so the marketers' sync
    /// sees the edit; placed orders keep their lines.
    pub async fn update_product(
        &self,
        id: ProductId,
        patch: ProductPatch,
    ) -> OperatorResult<Product> {
        let patch = self.checked_product(patch).await?;
        Ok(self.store().update_product(id, patch, self.now()).await?)
    }

    /// The one check of a product's fields, for its creation and its edits (the rules are
    /// listed on [`update_product`](Self::update_product)): each field set in `patch` is
    /// checked, and cleaned as it is stored.
    async fn checked_product(&self, mut patch: ProductPatch) -> OperatorResult<ProductPatch> {
        if let Some(title) = &patch.title {
            patch.title = Some(required_text("title", title, MAX_TEXT)?);
        }
        if let Some(slug) = &patch.slug {
            patch.slug = Some(required_text("slug", slug, MAX_TEXT)?);
        }
        if let Some(description) = &patch.description {
            patch.description = Some(long_text("description", description, MAX_LONG_TEXT)?);
        }
        if let Some(url) = &patch.url {
            patch.url = Some(web_link("url", url)?);
        }
        if let Some(video) = &patch.video_url {
            patch.video_url = Some(optional_link("video_url", video.as_deref())?);
        }
        if let Some(marketing) = &patch.marketing_files_url {
            let checked = optional_link("marketing_files_url", marketing.as_deref())?;
            patch.marketing_files_url = Some(checked);
        }
        if let Some(images) = &patch.images {
            patch.images = Some(links("images", images)?);
        }
        if let Some(files) = &patch.files {
            patch.files = Some(links("files", files)?);
        }
        if let Some(Some(supplier)) = patch.supplier_id {
            let account = self.store().account(supplier).await?;
            if account.is_none_or(|a| a.side != Side::Supplier) {
                return Err(OperatorError::field("supplier_id", Problem::NotASupplier));
            }
        }
        Ok(patch)
    }

    /// Changes a category's fields ([`CategoryPatch`]): `name` and `slug` printable
    /// single-line text of at most [`MAX_TEXT`] characters, not blank; a slug another
    /// category has is [`Conflict::Duplicate`](super::Conflict::Duplicate); a parent that
    /// does not exist, or is the category itself or one of its descendants, is
    /// [`Conflict::Refused`](super::Conflict::Refused). A new name marks the category's
    /// products changed (their view shows it).
    pub async fn update_category(
        &self,
        id: CategoryId,
        patch: CategoryPatch,
    ) -> OperatorResult<Category> {
        let patch = checked_category(patch)?;
        Ok(self.store().update_category(id, patch, self.now()).await?)
    }

    /// Changes a warranty's fields ([`WarrantyPatch`]), with the checks of creation: money in
    /// whole piastres, the percent from 0 to 100, `name` printable single-line text (not
    /// blank), `terms` printable multi-line text, `duration_days` at least 1, `icon_url` an
    /// http or https link (blank removes it). Its product is marked changed; order lines keep
    /// the terms they were placed with.
    pub async fn update_warranty(
        &self,
        id: WarrantyId,
        patch: WarrantyPatch,
    ) -> OperatorResult<Warranty> {
        let patch = checked_warranty(patch)?;
        Ok(self.store().update_warranty(id, patch, self.now()).await?)
    }
}

/// The one check of a category's fields, for its creation and its edits (the rules are
/// listed on [`Operator::update_category`]): each field set in `patch` is checked, and
/// cleaned as it is stored.
pub(super) fn checked_category(mut patch: CategoryPatch) -> OperatorResult<CategoryPatch> {
    if let Some(name) = &patch.name {
        patch.name = Some(required_text("name", name, MAX_TEXT)?);
    }
    if let Some(slug) = &patch.slug {
        patch.slug = Some(required_text("slug", slug, MAX_TEXT)?);
    }
    Ok(patch)
}

/// The one check of a warranty's fields, for its creation and its edits (the rules are
/// listed on [`Operator::update_warranty`]): each field set in `patch` is checked, and
/// cleaned as it is stored.
pub(super) fn checked_warranty(mut patch: WarrantyPatch) -> OperatorResult<WarrantyPatch> {
    if let Some(name) = &patch.name {
        patch.name = Some(required_text("name", name, MAX_TEXT)?);
    }
    if let Some(terms) = &patch.terms {
        patch.terms = Some(long_text("terms", terms, MAX_LONG_TEXT.max(MAX_NOTE))?);
    }
    if let Some(icon) = &patch.icon_url {
        patch.icon_url = Some(optional_link("icon_url", icon.as_deref())?);
    }
    for (field, amount) in [
        ("admin_fee", patch.admin_fee),
        ("price_from", patch.price_from),
    ] {
        if let Some(amount) = amount {
            check_money(field, amount)?;
        }
    }
    if let Some(percent) = patch.percent {
        check_percent("percent", percent)?;
    }
    if let Some(days) = patch.duration_days
        && days < 1
    {
        let range = Problem::OutOfRange {
            min: 1,
            max: i32::MAX.into(),
        };
        return Err(OperatorError::field("duration_days", range));
    }
    Ok(patch)
}

/// A percent from 0 to 100 with at most two decimals.
pub(super) fn check_percent(field: &str, percent: Decimal) -> OperatorResult<()> {
    match accepted_amount(percent) {
        Some(p) if p <= Decimal::ONE_HUNDRED => Ok(()),
        _ => Err(OperatorError::field(field, Problem::InvalidPercent)),
    }
}

/// A required single-line text field as stored: printable, trimmed, at most `max`
/// characters, not blank.
pub(super) fn required_text(field: &str, raw: &str, max: usize) -> OperatorResult<String> {
    clean_text(raw, max, TextKind::SingleLine)
        .map_err(|problem| OperatorError::field(field, problem))?
        .ok_or_else(|| OperatorError::field(field, Problem::Required))
}
