//! Ids: `i64` aliases that map one to one onto SQL `BIGINT`.

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
