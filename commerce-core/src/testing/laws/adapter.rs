//! Every call the laws test makes through the Rust API (the operator's and the store's reads),
//! in one place: when an operator signature changes (say outcomes become a partial report),
//! this file is the one to follow it.

use rust_decimal::Decimal;

use crate::Engine;
use crate::domain::keys::KeySpec;
use crate::domain::pieces::OutcomeReport;
use crate::model::*;
use crate::operator::OperatorError;

/// How a call through the Rust API ended.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Called {
    /// It changed what it was asked to.
    Done,
    /// It was refused (not found, invalid input, a conflict): nothing written.
    Refused(String),
    /// The store failed, or the call panicked: what a 5xx is over HTTP.
    Broken(String),
}

fn called<T>(result: Result<T, OperatorError>) -> Called {
    match result {
        Ok(_) => Called::Done,
        Err(OperatorError::Store(error)) => Called::Broken(format!("store error: {error}")),
        Err(error) => Called::Refused(error.to_string()),
    }
}

/// What became of a line's pieces as reported: a count given (`Some`) or left as it was.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct Report {
    /// Delivered pieces.
    pub delivered: Option<i64>,
    /// Returned pieces.
    pub returned: Option<i64>,
    /// Damaged pieces.
    pub damaged: Option<i64>,
    /// Lost pieces.
    pub lost: Option<i64>,
    /// Destroyed pieces.
    pub destroyed: Option<i64>,
}

/// The operator's partial report of a line's pieces: each count given replaces the line's.
fn outcome_report(report: &Report) -> OutcomeReport {
    OutcomeReport::builder()
        .maybe_delivered(report.delivered)
        .maybe_returned(report.returned)
        .maybe_damaged(report.damaged)
        .maybe_lost(report.lost)
        .maybe_destroyed(report.destroyed)
        .build()
}

/// A correction of a settled order's lines (`Operator::set_line_outcomes`).
pub(super) async fn correct(engine: &Engine, order: i64, reports: &[(i64, Report)]) -> Called {
    let outcomes = reports
        .iter()
        .map(|(line, report)| (LineId::new(*line), outcome_report(report)))
        .collect();
    called(
        engine
            .operator()
            .set_line_outcomes(OrderId::new(order), outcomes)
            .await,
    )
}

/// A delta of a variant's stock by the operator.
pub(super) async fn adjust_stock(engine: &Engine, variant: i64, delta: i64) -> Called {
    let new = NewStockAdjustment::builder()
        .variant_id(VariantId::new(variant))
        .delta(delta)
        .reason(StockReason::Correction)
        .build();
    called(engine.operator().adjust_stock(new).await)
}

/// A compare-and-set of a variant's stock by the operator.
pub(super) async fn set_stock(engine: &Engine, variant: i64, expected: i64, new: i64) -> Called {
    called(
        engine
            .operator()
            .set_stock(VariantId::new(variant), expected, new, None)
            .await,
    )
}

/// The platform's decision on a quote.
pub(super) async fn decide_quote(engine: &Engine, quote: i64, accept: bool) -> Called {
    let op = engine.operator();
    let id = QuoteId::new(quote);
    if accept {
        called(op.accept_quote(id, None).await)
    } else {
        called(op.reject_quote(id, None).await)
    }
}

/// Moves a product to another supplier (`None`: the platform's own goods).
pub(super) async fn move_product(engine: &Engine, product: i64, supplier: Option<i64>) -> Called {
    let patch = ProductPatch {
        supplier_id: Some(supplier.map(AccountId::new)),
        ..ProductPatch::default()
    };
    called(
        engine
            .operator()
            .update_product(ProductId::new(product), patch)
            .await,
    )
}

/// A withdrawal request on the account's wallet page (the operator's rule): its id when
/// registered.
pub(super) async fn request_withdrawal(
    engine: &Engine,
    account: i64,
    amount: Decimal,
) -> (Called, Option<i64>) {
    let new = NewWithdrawal::builder()
        .account_id(AccountId::new(account))
        .amount(amount)
        .wallet_number("01012345678".to_owned())
        .wallet_description("فودافون كاش".to_owned())
        .build();
    match engine.operator().request_withdrawal(new).await {
        Ok(w) => (Called::Done, Some(w.id.get())),
        Err(e) => (called::<()>(Err(e)), None),
    }
}

/// The platform pays (`pay`) or rejects a withdrawal.
pub(super) async fn decide_withdrawal(engine: &Engine, id: i64, pay: bool) -> Called {
    let op = engine.operator();
    let id = WithdrawalId::new(id);
    if pay {
        called(op.complete_withdrawal(id, "TRX-LAWS".into(), None).await)
    } else {
        called(op.reject_withdrawal(id, None).await)
    }
}

/// One entry of a variant's stock history.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct HistoryEntry {
    /// Pieces added (negative: taken).
    pub delta: i64,
    /// The reason's key (`reservation`, `restock`, ...).
    pub reason: String,
    /// The order it names.
    pub order: Option<i64>,
    /// The quote it names.
    pub quote: Option<i64>,
}

/// A variant's whole stock history, every page.
pub(super) async fn history(engine: &Engine, variant: i64) -> Result<Vec<HistoryEntry>, String> {
    let mut entries = Vec::new();
    for page in 1.. {
        let request = PageRequest::new(page, 100).ok_or("page")?;
        let got = engine
            .operator()
            .stock_adjustments(VariantId::new(variant), request)
            .await
            .map_err(|e| format!("stock_adjustments: {e}"))?;
        let n = got.items.len();
        entries.extend(got.items.into_iter().map(|a| HistoryEntry {
            delta: a.delta,
            reason: a.reason.as_str().to_owned(),
            order: a.order_id.map(|o| o.get()),
            quote: a.quote_id.map(|q| q.get()),
        }));
        if n < 100 {
            break;
        }
    }
    Ok(entries)
}

/// What the model starts from about a variant.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct VariantFacts {
    /// The variant.
    pub id: i64,
    /// Its product.
    pub product: i64,
    /// The product's supplier.
    pub supplier: Option<i64>,
    /// Its supply price.
    pub supply_price: Decimal,
    /// Its exact stock.
    pub available: i64,
    /// The warranties of its product.
    pub warranties: Vec<i64>,
}

/// The variants' facts as stored (exact `available`, which marketers see capped).
pub(super) async fn variants(engine: &Engine, ids: &[i64]) -> Result<Vec<VariantFacts>, String> {
    let wanted: Vec<VariantId> = ids.iter().map(|v| VariantId::new(*v)).collect();
    let products = engine
        .store()
        .products_of_variants(&wanted)
        .await
        .map_err(|e| format!("products_of_variants: {e}"))?;
    let mut out = Vec::new();
    for id in ids {
        let (product, variant) = products
            .iter()
            .flat_map(|p| p.variants.iter().map(move |v| (p, v)))
            .find(|(_, v)| v.id.get() == *id)
            .ok_or_else(|| format!("variant {id} not found"))?;
        out.push(VariantFacts {
            id: *id,
            product: product.id.get(),
            supplier: product.supplier_id.map(|s| s.get()),
            supply_price: variant.supply_price,
            available: variant.available,
            warranties: product.warranties.iter().map(|w| w.id.get()).collect(),
        });
    }
    Ok(out)
}

/// The variants of a supplier's products, by id.
pub(super) async fn supplier_variants(engine: &Engine, supplier: i64) -> Vec<i64> {
    let page = PageRequest::new(1, 100).expect("a valid page");
    engine
        .store()
        .supply_variants(AccountId::new(supplier), None, page, engine.now())
        .await
        .expect("supply variants")
        .items
        .iter()
        .map(|v| v.id.get())
        .collect()
}

/// What the model starts from about a quote.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct QuoteFacts {
    /// The quote.
    pub id: i64,
    /// Its supplier.
    pub supplier: i64,
    /// Its variant.
    pub variant: i64,
    /// Pieces.
    pub quantity: i64,
    /// Price per piece.
    pub unit_price: Decimal,
    /// Status key as stored now.
    pub status: String,
    /// End of the offer.
    pub valid_until: Option<chrono::DateTime<chrono::Utc>>,
}

/// Every quote, by id.
pub(super) async fn quotes(engine: &Engine) -> Vec<QuoteFacts> {
    let page = PageRequest::new(1, 100).expect("a valid page");
    let mut quotes: Vec<QuoteFacts> = engine
        .operator()
        .quotes(&QuoteQuery::default(), page)
        .await
        .expect("quotes")
        .items
        .into_iter()
        .map(|q| QuoteFacts {
            id: q.id.get(),
            supplier: q.account_id.get(),
            variant: q.variant_id.get(),
            quantity: q.quantity,
            unit_price: q.unit_price,
            status: q.status.as_str().to_owned(),
            valid_until: q.valid_until,
        })
        .collect();
    quotes.sort_by_key(|q| q.id);
    quotes
}

/// A key of `account` with `abilities` and a rate limit no run reaches.
pub(super) async fn key(engine: &Engine, account: i64, abilities: &[Ability]) -> String {
    let spec = KeySpec::new(
        "laws".to_owned(),
        abilities.to_vec(),
        None,
        Some(1_000_000_000),
    );
    engine
        .operator()
        .create_key(AccountId::new(account), spec)
        .await
        .expect("key created")
        .plaintext
}

/// A second active supplier with API access: its id.
pub(super) async fn add_supplier(engine: &Engine) -> i64 {
    let new = NewAccount::builder()
        .name("مورد القوانين".to_owned())
        .email("laws-supplier@example.com".to_owned())
        .phone("01112223334".to_owned())
        .side(Side::Supplier)
        .state(AccountState::Active)
        .api_status(ApiStatus::Approved)
        .build();
    engine
        .operator()
        .create_account(new)
        .await
        .expect("supplier created")
        .id
        .get()
}

/// The engine's commission percent, withdrawal minimum and replay window.
pub(super) fn rules(engine: &Engine) -> (Decimal, Decimal, chrono::Duration) {
    let config = engine.config();
    (
        config.commission_percent,
        config.withdrawal_minimum,
        config.idempotency_ttl,
    )
}

/// What the platform keeps of an order's line and marketers never see.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct KeptLine {
    /// The line.
    pub id: i64,
    /// Its supplier when the order was placed.
    pub supplier: Option<i64>,
    /// Its supply price when the order was placed.
    pub supply_price: Decimal,
}

/// An order's kept lines (the operator's read).
pub(super) async fn kept_lines(engine: &Engine, order: i64) -> Result<Vec<KeptLine>, String> {
    let order = engine
        .operator()
        .order(OrderId::new(order))
        .await
        .map_err(|e| format!("order {order}: {e}"))?;
    Ok(order
        .lines
        .iter()
        .map(|l| KeptLine {
            id: l.id.get(),
            supplier: l.supplier_id.map(|s| s.get()),
            supply_price: l.supply_price,
        })
        .collect())
}
