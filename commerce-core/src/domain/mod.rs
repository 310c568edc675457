//! The product's rules, without HTTP: what `api/` and the [`Operator`](crate::operator::Operator) both
//! call. A module here imports neither `api` nor `wire` (`tests/layering.rs` checks it).
//!
//! - [`fields`]: the rules of an order's own fields, and the platform's [`OrderDraft`](fields::OrderDraft);
//! - [`checkout`]: order lines and a shipping choice checked against the catalogue and priced;
//! - [`keys`]: the rules of a new API key, for the platform and the owner alike;
//! - `kept`: the product records the checkout prices from (crate-private);
//! - `placement`: registering an order (crate-private: the engine's and the operator's);
//! - [`pieces`]: where a line's pieces are (the laws of stock): completed counts, restocks,
//!   the stock an order write moves;
//! - `moves`: the platform's moves of an order, with line outcomes (crate-private likewise);
//! - [`wallet`]: an account's wallet figures, the payout rule, the withdrawal window;
//! - [`webhooks`]: the rules of webhook endpoints;
//! - `supply`: the supply side's rules: a supplier's quote admitted, decided and read at an
//!   instant (crate-private: the stores' and the handlers').

pub(crate) mod admission;
pub mod checkout;
pub mod delivery;
pub mod earnings;
pub mod edits;
pub mod fields;
pub mod filters;
pub(crate) mod kept;
pub mod keys;
pub(crate) mod moves;
pub(crate) mod order_writes;
pub mod pieces;
pub(crate) mod placement;
pub mod pricing;
pub(crate) mod status_moves;
pub(crate) mod supply;
pub mod wallet;
pub mod webhooks;
