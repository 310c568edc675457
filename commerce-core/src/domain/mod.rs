//! The product's rules, without HTTP: what `api/` and the [`Operator`](crate::Operator) both
//! call. A module here imports neither `api` nor `wire` (`tests/layering.rs` checks it).
//!
//! - [`checkout`]: order lines and a shipping choice checked against the catalogue and priced;
//! - [`placement`]: registering an order;
//! - [`wallet`]: an account's wallet figures, the payout rule, the withdrawal window.

pub mod checkout;
pub mod placement;
pub mod wallet;
