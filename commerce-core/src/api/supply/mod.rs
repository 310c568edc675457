//! The supply side's handlers (docs/suppliers.md), for suppliers only (the dispatch table's
//! sides): the quotes a supplier offers and the variants it supplies (`quotes`), and its
//! statement (`statement`). The wallet, which both sides read, is `api::wallet`; the supply
//! side's rules are `domain::supply`, its views `render::wire::supply`.

pub(super) mod quotes;
pub(super) mod statement;
