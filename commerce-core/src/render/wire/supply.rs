//! The supply side's JSON shapes (docs/suppliers.md): a supplier's quote and its view of a
//! variant. Neither ever carries a customer; both are served to suppliers only.

use serde::Serialize;
use utoipa::ToSchema;

use super::{Money, Stamp};
use crate::model::*;
use crate::render::messages;

/// A supplier's quote.
#[derive(Debug, Serialize, ToSchema)]
pub struct SupplierQuoteView<'a> {
    id: QuoteId,
    variant: QuoteVariantView<'a>,
    unit_price: Money,
    quantity: i64,
    status: QuoteStatusView,
    valid_until: Option<Stamp>,
    note: Option<&'a str>,
    decision_note: Option<&'a str>,
    decided_at: Option<Stamp>,
    created_at: Stamp,
    updated_at: Stamp,
}

impl<'a> SupplierQuoteView<'a> {
    /// The view of `quote` (as the store read it: its status as of the read).
    pub fn new(quote: &'a Quote) -> Self {
        Self {
            id: quote.id,
            variant: QuoteVariantView {
                id: quote.variant_id,
                product_id: quote.product_id,
                title: &quote.title,
                label: &quote.label,
            },
            unit_price: Money(quote.unit_price),
            quantity: quote.quantity,
            status: QuoteStatusView::of(quote.status),
            valid_until: quote.valid_until.map(Stamp),
            note: quote.note.as_deref(),
            decision_note: quote.decision_note.as_deref(),
            decided_at: quote.decided_at.map(Stamp),
            created_at: Stamp(quote.created_at),
            updated_at: Stamp(quote.updated_at),
        }
    }
}

/// The variant a quote offers: `{id, product_id, title, label}`.
#[derive(Debug, Serialize, ToSchema)]
pub struct QuoteVariantView<'a> {
    id: VariantId,
    product_id: ProductId,
    /// The product's title.
    title: &'a str,
    /// The variant's label.
    label: &'a str,
}

/// `{key, label}` of a quote's status.
#[derive(Debug, Serialize, ToSchema)]
pub struct QuoteStatusView {
    #[schema(value_type = QuoteStatus)]
    key: &'static str,
    label: &'static str,
}

impl QuoteStatusView {
    /// The view of `status`.
    pub fn of(status: QuoteStatus) -> Self {
        Self {
            key: status.as_str(),
            label: messages::quote_status_label(status),
        }
    }
}

/// One of a supplier's variants (`GET /supply/variants`).
#[derive(Debug, Serialize, ToSchema)]
pub struct SupplyVariantView<'a> {
    id: VariantId,
    product: ProductTitle<'a>,
    label: &'a str,
    supply_price: Money,
    /// Exact.
    available: i64,
    pending_quote_id: Option<QuoteId>,
}

/// `{id, title}` of a product.
#[derive(Debug, Serialize, ToSchema)]
pub struct ProductTitle<'a> {
    id: ProductId,
    title: &'a str,
}

impl<'a> From<&'a SupplyVariant> for SupplyVariantView<'a> {
    fn from(v: &'a SupplyVariant) -> Self {
        Self {
            id: v.id,
            product: ProductTitle {
                id: v.product_id,
                title: &v.product_title,
            },
            label: &v.label,
            supply_price: Money(v.supply_price),
            available: v.available,
            pending_quote_id: v.pending_quote_id,
        }
    }
}
