//! Rows of the catalogue and shipping.

use commerce_core::model::*;
use commerce_core::money::from_piastres;
use commerce_core::store::StoreError;

use super::*;

db_row! {
    pub(crate) struct CategoryRow {
        id: i64,
        name: String,
        slug: String,
        parent_id: Option<i64>,
        active: bool,
    }
}

impl CategoryRow {
    pub(crate) fn into_domain(self) -> Category {
        Category::builder()
            .id(CategoryId::new(self.id))
            .name(self.name)
            .slug(self.slug)
            .maybe_parent_id(self.parent_id.map(CategoryId::new))
            .active(self.active)
            .build()
    }
}

db_row! {
    /// A product of a page, with the number of products matching the page's filter.
    pub(crate) struct PagedProductRow {
        @flatten pub(crate) row: ProductRow,
        pub(crate) total: i64,
    }
}

db_row! {
    /// A product or order of a page read as versions (id and `updated_at`), with the number
    /// of rows matching the page's filter.
    pub(crate) struct VersionRow {
        pub(crate) id: i64,
        pub(crate) updated_at: i64,
        pub(crate) total: i64,
    }
}

db_row! {
    /// A stopped product of a page of removals, with the number of removals matching.
    pub(crate) struct RemovedRow {
        pub(crate) id: i64,
        pub(crate) removed_at: i64,
        pub(crate) total: i64,
    }
}

db_row! {
    /// A change of the catalogue change feed, or (no product) the head of the feed.
    pub(crate) struct ChangeRow {
        pub(crate) product_id: Option<i64>,
        pub(crate) kind: Option<String>,
        pub(crate) at: Option<i64>,
        pub(crate) txid: i64,
        pub(crate) seq: i64,
    }
}

db_row! {
    pub(crate) struct ProductRow {
        pub(crate) id: i64,
        title: String,
        slug: String,
        category_id: i64,
        description: String,
        images: String,
        files: String,
        video_url: Option<String>,
        marketing_files_url: Option<String>,
        url: String,
        active: bool,
        updated_at: i64,
        supplier_id: Option<i64>,
        revision: i64,
    }
}

impl ProductRow {
    pub(crate) fn into_domain(
        self,
        variants: Vec<Variant>,
        warranties: Vec<Warranty>,
    ) -> Result<Product, StoreError> {
        Ok(Product::builder()
            .id(ProductId::new(self.id))
            .title(self.title)
            .slug(self.slug)
            .category_id(CategoryId::new(self.category_id))
            .description(self.description)
            .images(parse_json_list(&self.images)?)
            .files(parse_json_list(&self.files)?)
            .maybe_video_url(self.video_url)
            .maybe_marketing_files_url(self.marketing_files_url)
            .url(self.url)
            .active(self.active)
            .updated_at(instant(self.updated_at))
            .maybe_supplier_id(self.supplier_id.map(AccountId::new))
            .revision(self.revision)
            .variants(variants)
            .warranties(warranties)
            .build())
    }
}

db_row! {
    pub(crate) struct VariantRow {
        id: i64,
        product_id: i64,
        label: String,
        price: i64,
        suggested_min: i64,
        suggested_max: i64,
        available: i64,
        supply_price: i64,
    }
}

impl VariantRow {
    pub(crate) fn into_domain(self) -> Variant {
        Variant::builder()
            .id(VariantId::new(self.id))
            .product_id(ProductId::new(self.product_id))
            .label(self.label)
            .price(from_piastres(self.price))
            .suggested_min(from_piastres(self.suggested_min))
            .suggested_max(from_piastres(self.suggested_max))
            .available(self.available)
            .supply_price(from_piastres(self.supply_price))
            .build()
    }
}

db_row! {
    pub(crate) struct WarrantyRow {
        id: i64,
        product_id: i64,
        name: String,
        admin_fee: i64,
        percent: i64,
        price_from: i64,
        duration_days: i32,
        terms: String,
        icon_url: Option<String>,
        active: bool,
    }
}

impl WarrantyRow {
    pub(crate) fn into_domain(self) -> Warranty {
        Warranty::builder()
            .id(WarrantyId::new(self.id))
            .product_id(ProductId::new(self.product_id))
            .name(self.name)
            .admin_fee(from_piastres(self.admin_fee))
            .percent(from_piastres(self.percent))
            .price_from(from_piastres(self.price_from))
            .duration_days(self.duration_days)
            .terms(self.terms)
            .maybe_icon_url(self.icon_url)
            .active(self.active)
            .build()
    }
}

db_row! {
    pub(crate) struct GovernorateRow {
        id: i64,
        name: String,
    }
}

impl GovernorateRow {
    pub(crate) fn into_domain(self) -> Governorate {
        Governorate::new(GovernorateId::new(self.id), self.name)
    }
}

db_row! {
    pub(crate) struct OptionRow {
        pub(crate) id: i64,
        name: String,
        active: bool,
    }
}

impl OptionRow {
    pub(crate) fn into_domain(self, rates: Vec<ShippingRate>) -> ShippingOption {
        ShippingOption::new(
            ShippingOptionId::new(self.id),
            self.name,
            self.active,
            rates,
        )
    }
}

/// One rate of a shipping option as stored (piastres, hundredths of a percent).
struct RateRow {
    governorate_id: i64,
    governorate_name: String,
    delivery_charge: i64,
    shipping_tax_percent: i64,
    total_due_tax_percent: i64,
}

db_row! {
    /// An option with one of its rates (the `r_` columns, all NULL for an option without any),
    /// as the options are read in one statement with their rates.
    pub(crate) struct OptionAndRateRow {
        @flatten pub(crate) option: OptionRow,
        r_option_id: Option<i64>,
        r_governorate_id: Option<i64>,
        r_governorate_name: Option<String>,
        r_delivery_charge: Option<i64>,
        r_shipping_tax_percent: Option<i64>,
        r_total_due_tax_percent: Option<i64>,
    }
}

impl OptionAndRateRow {
    /// The rate of this row, if the option has one here.
    pub(crate) fn rate(&mut self) -> Result<Option<ShippingRate>, StoreError> {
        if self.r_option_id.is_none() {
            return Ok(None);
        }
        let missing = || corrupt("shipping rate row with NULL columns");
        Ok(Some(
            RateRow {
                governorate_id: self.r_governorate_id.ok_or_else(missing)?,
                governorate_name: self.r_governorate_name.take().ok_or_else(missing)?,
                delivery_charge: self.r_delivery_charge.ok_or_else(missing)?,
                shipping_tax_percent: self.r_shipping_tax_percent.ok_or_else(missing)?,
                total_due_tax_percent: self.r_total_due_tax_percent.ok_or_else(missing)?,
            }
            .into_domain(),
        ))
    }
}

impl RateRow {
    fn into_domain(self) -> ShippingRate {
        ShippingRate::builder()
            .governorate_id(GovernorateId::new(self.governorate_id))
            .governorate_name(self.governorate_name)
            .delivery_charge(from_piastres(self.delivery_charge))
            .shipping_tax_percent(from_piastres(self.shipping_tax_percent))
            .total_due_tax_percent(from_piastres(self.total_due_tax_percent))
            .build()
    }
}
