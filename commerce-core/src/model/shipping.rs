//! Governorates, shipping options and their rates.

use rust_decimal::Decimal;

use super::*;

/// An Egyptian governorate.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct Governorate {
    /// Id.
    pub id: GovernorateId,
    /// Arabic name.
    pub name: String,
}

impl Governorate {
    /// Governorate `id`, named `name`.
    pub fn new(id: GovernorateId, name: String) -> Self {
        Self { id, name }
    }
}

/// What a shipping option charges for one governorate.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
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

/// What a shipping option charges for a governorate, as the platform sets it
/// ([`Operator::set_shipping_rate`](crate::operator::Operator::set_shipping_rate)).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
#[non_exhaustive]
pub struct RateTerms {
    /// Base delivery charge.
    pub delivery_charge: Decimal,
    /// Tax on the base charge, percent.
    pub shipping_tax_percent: Decimal,
    /// Percent of the goods added to the charge.
    pub total_due_tax_percent: Decimal,
}

impl RateTerms {
    /// A base charge, with no tax and no percent of the goods.
    pub fn charge(delivery_charge: Decimal) -> Self {
        Self {
            delivery_charge,
            ..Self::default()
        }
    }

    /// With a tax on the base charge, percent.
    pub fn shipping_tax_percent(mut self, percent: Decimal) -> Self {
        self.shipping_tax_percent = percent;
        self
    }

    /// With a percent of the goods added to the charge.
    pub fn total_due_tax_percent(mut self, percent: Decimal) -> Self {
        self.total_due_tax_percent = percent;
        self
    }
}

/// A delivery type with its governorates.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
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
    /// Option `id`, named `name`, offered when `active`, with its `rates`.
    pub fn new(id: ShippingOptionId, name: String, active: bool, rates: Vec<ShippingRate>) -> Self {
        Self {
            id,
            name,
            active,
            rates,
        }
    }

    /// The rate for one governorate, if served.
    pub fn rate(&self, governorate_id: GovernorateId) -> Option<&ShippingRate> {
        self.rates
            .iter()
            .find(|r| r.governorate_id == governorate_id)
    }
}
