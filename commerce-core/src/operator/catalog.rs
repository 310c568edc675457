//! The operator's catalogue and shipping: categories, products, variants, warranties,
//! governorates, shipping options and their rates, with the checks of their figures.

use crate::domain::fields::MAX_TEXT;
use crate::domain::pieces::MAX_AVAILABLE;
use crate::model::Problem;
use crate::model::*;
use rust_decimal::Decimal;

use super::catalog_edits::{check_percent, checked_category, checked_warranty, required_text};
use super::{Operator, OperatorError, OperatorResult, check_money};

impl Operator {
    // ---- catalogue ----

    /// Adds a category, with the checks of an edit
    /// ([`update_category`](Self::update_category)): `name` and `slug` printable single-line
    /// text of at most [`MAX_TEXT`] characters, not blank.
    pub async fn create_category(&self, mut new: NewCategory) -> OperatorResult<Category> {
        let patch = CategoryPatch::default()
            .set_name(new.name)
            .set_slug(new.slug);
        let patch = checked_category(patch)?;
        new.name = patch.name.unwrap_or_default();
        new.slug = patch.slug.unwrap_or_default();
        Ok(self.store().insert_category(new).await?)
    }

    /// Lists or hides a category (an edit of its `active` alone: no product is marked
    /// changed).
    pub async fn set_category_active(
        &self,
        id: CategoryId,
        active: bool,
    ) -> OperatorResult<Category> {
        let patch = CategoryPatch::default().set_active(active);
        Ok(self.store().update_category(id, patch, self.now()).await?)
    }

    /// Starts or stops selling a product (a stopped product is a 404 on the API).
    pub async fn set_product_active(&self, id: ProductId, active: bool) -> OperatorResult<Product> {
        Ok(self
            .store()
            .set_product_active(id, active, self.now())
            .await?)
    }

    /// Adds a variant; money must be whole piastres and not negative, the suggested range's
    /// top not below its bottom (a range given by one end, the other defaulting to the price,
    /// can be), `available` 0 to [`MAX_AVAILABLE`] pieces (kept in its history as its
    /// `initial` stock).
    pub async fn add_variant(
        &self,
        product: ProductId,
        new: NewVariant,
    ) -> OperatorResult<Variant> {
        check_money("price", new.price)?;
        check_money("suggested_min", new.suggested_min)?;
        check_money("suggested_max", new.suggested_max)?;
        check_suggested_range(new.suggested_min, new.suggested_max)?;
        check_money("supply_price", new.supply_price)?;
        check_stock(new.available)?;
        Ok(self
            .store()
            .insert_variant(product, new, self.now())
            .await?)
    }

    /// Changes a variant's label, price, suggested range or supply price, with the checks of
    /// creation (money in whole piastres and not negative; a suggested range given whole,
    /// its top not below its bottom; the label printable single-line
    /// text of at most [`MAX_TEXT`] characters, not blank). Stock is not set here: see
    /// [`adjust_stock`](Operator::adjust_stock) and [`set_stock`](Operator::set_stock).
    pub async fn update_variant(
        &self,
        id: VariantId,
        mut patch: VariantPatch,
    ) -> OperatorResult<Variant> {
        let amounts = [
            ("price", patch.price),
            ("suggested_min", patch.suggested_min),
            ("suggested_max", patch.suggested_max),
            ("supply_price", patch.supply_price),
        ];
        for (field, amount) in amounts {
            if let Some(amount) = amount {
                check_money(field, amount)?;
            }
        }
        // The range is edited whole (`VariantPatch::set_suggested_range`), so that its two
        // ends are checked together; a patch of one end alone is refused on the other.
        match (patch.suggested_min, patch.suggested_max) {
            (Some(min), Some(max)) => check_suggested_range(min, max)?,
            (Some(_), None) => {
                return Err(OperatorError::field("suggested_max", Problem::Required));
            }
            (None, Some(_)) => {
                return Err(OperatorError::field("suggested_min", Problem::Required));
            }
            (None, None) => {}
        }
        if let Some(label) = &patch.label {
            patch.label = Some(required_text("label", label, MAX_TEXT)?);
        }
        Ok(self.store().update_variant(id, patch, self.now()).await?)
    }

    /// Adds a warranty to a product, with the checks of an edit
    /// ([`update_warranty`](Self::update_warranty)) on each of its fields.
    pub async fn add_warranty(
        &self,
        product: ProductId,
        mut new: NewWarranty,
    ) -> OperatorResult<Warranty> {
        let patch = WarrantyPatch {
            name: Some(new.name),
            admin_fee: Some(new.admin_fee),
            percent: Some(new.percent),
            price_from: Some(new.price_from),
            duration_days: Some(new.duration_days),
            terms: Some(new.terms),
            icon_url: Some(new.icon_url),
            active: None,
        };
        let patch = checked_warranty(patch)?;
        new.name = patch.name.unwrap_or_default();
        new.terms = patch.terms.unwrap_or_default();
        new.icon_url = patch.icon_url.flatten();
        new.admin_fee = patch.admin_fee.unwrap_or_default();
        new.percent = patch.percent.unwrap_or_default();
        new.price_from = patch.price_from.unwrap_or_default();
        new.duration_days = patch.duration_days.unwrap_or_default();
        Ok(self
            .store()
            .insert_warranty(product, new, self.now())
            .await?)
    }

    /// Offers or stops a warranty.
    pub async fn set_warranty_active(
        &self,
        id: WarrantyId,
        active: bool,
    ) -> OperatorResult<Warranty> {
        Ok(self
            .store()
            .set_warranty_active(id, active, self.now())
            .await?)
    }

    // ---- shipping ----

    /// Adds a governorate.
    pub async fn create_governorate(&self, name: &str) -> OperatorResult<Governorate> {
        Ok(self.store().insert_governorate(name.to_owned()).await?)
    }

    /// Adds a shipping option (serving no governorate yet).
    pub async fn create_shipping_option(&self, name: &str) -> OperatorResult<ShippingOption> {
        Ok(self.store().insert_shipping_option(name.to_owned()).await?)
    }

    /// Offers or stops a shipping option.
    pub async fn set_shipping_option_active(
        &self,
        id: ShippingOptionId,
        active: bool,
    ) -> OperatorResult<ShippingOption> {
        Ok(self.store().set_shipping_option_active(id, active).await?)
    }

    /// Sets what an option charges for a governorate.
    pub async fn set_shipping_rate(
        &self,
        option: ShippingOptionId,
        governorate: GovernorateId,
        terms: RateTerms,
    ) -> OperatorResult<ShippingOption> {
        check_money("delivery_charge", terms.delivery_charge)?;
        check_percent("shipping_tax_percent", terms.shipping_tax_percent)?;
        check_percent("total_due_tax_percent", terms.total_due_tax_percent)?;
        let rate = ShippingRate {
            governorate_id: governorate,
            governorate_name: String::new(),
            delivery_charge: terms.delivery_charge,
            shipping_tax_percent: terms.shipping_tax_percent,
            total_due_tax_percent: terms.total_due_tax_percent,
        };
        Ok(self.store().set_shipping_rate(option, rate).await?)
    }
}

/// A variant's first stock: 0 to [`MAX_AVAILABLE`] pieces.
fn check_stock(available: i64) -> OperatorResult<()> {
    if !(0..=MAX_AVAILABLE).contains(&available) {
        return Err(OperatorError::field(
            "available",
            Problem::OutOfRange {
                min: 0,
                max: MAX_AVAILABLE,
            },
        ));
    }
    Ok(())
}

/// A suggested range whose top is below its bottom is refused, on `suggested_max`.
fn check_suggested_range(min: Decimal, max: Decimal) -> OperatorResult<()> {
    if max < min {
        let problem = Problem::BelowMinimum { minimum: min };
        return Err(OperatorError::field("suggested_max", problem));
    }
    Ok(())
}
