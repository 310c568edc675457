//! Conformance suites for [`Store`](crate::store::Store) implementations (feature `testing`).
//!
//! Each case is a `pub async fn` over a store; a store crate runs every case on its own store
//! with the macros exported here, one `#[tokio::test]` per case.

pub mod cancellation;
pub mod http;
pub mod store_cases;
pub mod wallet;

/// An id that no record has: the id a test already holds, moved far past any the test made.
pub trait Absent {
    /// The same kind of id, one million further.
    fn absent(self) -> Self;
}

macro_rules! absent_ids {
    ($($id:ident),+) => {$(
        impl Absent for crate::model::$id {
            fn absent(self) -> Self {
                Self(self.0 + 1_000_000)
            }
        }
    )+};
}
absent_ids!(
    AccountId,
    KeyId,
    CategoryId,
    ProductId,
    VariantId,
    WarrantyId,
    GovernorateId,
    ShippingOptionId,
    OrderId,
    LineId,
    WithdrawalId
);
