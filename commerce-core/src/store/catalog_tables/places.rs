//! The governorates and shipping options of [`CatalogTables`].

use super::{CatalogTables, next};
use crate::model::*;
use crate::store::{StoreError, Unique};

impl CatalogTables {
    /// [`CatalogStore::insert_governorate`](crate::store::CatalogStore::insert_governorate):
    /// refused when its name is taken.
    pub fn insert_governorate(&mut self, name: String) -> Result<Governorate, StoreError> {
        self.claim_unique(Unique::GovernorateName, &name)?;
        let id = GovernorateId::new(next(&mut self.last.governorates));
        let governorate = Governorate::new(id, name);
        self.governorates.insert(id, governorate.clone());
        Ok(governorate)
    }

    /// [`CatalogStore::governorates`](crate::store::CatalogStore::governorates), by id.
    pub fn governorates(&self) -> Vec<Governorate> {
        self.governorates.values().cloned().collect()
    }

    /// [`CatalogStore::insert_shipping_option`](crate::store::CatalogStore::insert_shipping_option):
    /// active, with no rates.
    pub fn insert_shipping_option(&mut self, name: String) -> ShippingOption {
        let id = ShippingOptionId::new(next(&mut self.last.shipping_options));
        let option = ShippingOption::new(id, name, true, Vec::new());
        self.shipping_options.insert(id, option.clone());
        option
    }

    /// [`CatalogStore::set_shipping_option_active`](crate::store::CatalogStore::set_shipping_option_active).
    pub fn set_shipping_option_active(
        &mut self,
        id: ShippingOptionId,
        active: bool,
    ) -> Result<ShippingOption, StoreError> {
        let option = self.shipping_option_mut(id)?;
        option.active = active;
        Ok(option.clone())
    }

    /// [`CatalogStore::set_shipping_rate`](crate::store::CatalogStore::set_shipping_rate):
    /// refused when the governorate does not exist, then when the option does not; the
    /// rate takes the governorate's name and replaces the option's rate of that governorate.
    pub fn set_shipping_rate(
        &mut self,
        option: ShippingOptionId,
        mut rate: ShippingRate,
    ) -> Result<ShippingOption, StoreError> {
        rate.governorate_name = self
            .governorates
            .get(&rate.governorate_id)
            .ok_or_else(|| StoreError::Invalid(format!("no governorate {}", rate.governorate_id)))?
            .name
            .clone();
        let option = self.shipping_option_mut(option)?;
        option
            .rates
            .retain(|r| r.governorate_id != rate.governorate_id);
        option.rates.push(rate);
        option.rates.sort_by_key(|r| r.governorate_id);
        Ok(option.clone())
    }

    /// [`CatalogStore::shipping_options`](crate::store::CatalogStore::shipping_options), by id.
    pub fn shipping_options(&self) -> Vec<ShippingOption> {
        self.shipping_options.values().cloned().collect()
    }

    fn shipping_option_mut(
        &mut self,
        id: ShippingOptionId,
    ) -> Result<&mut ShippingOption, StoreError> {
        self.shipping_options
            .get_mut(&id)
            .ok_or(StoreError::NotFound)
    }
}
