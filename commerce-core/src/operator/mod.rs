//! The platform's Rust API: everything the HTTP API reads is set up and moved from here.
//!
//! The embedding application (the platform's own web app) calls these for accounts, keys,
//! the catalogue, shipping, order moves, withdrawals and the billing meter. None of them is
//! reachable through `/api/v1`.
//!
//! The inputs that carry rules of their own live with those rules, in `domain`:
//! [`OrderDraft`] and [`DraftLine`](crate::domain::fields::DraftLine) (`domain::fields`),
//! [`KeySpec`] (`domain::keys`), [`OutcomeReport`] (`domain::pieces`).

use std::sync::Arc;

mod back_office;
mod catalog;
mod catalog_edits;
mod errors;
mod quotes;
mod stock;
mod webhooks;

pub use errors::{Conflict, OperatorError, OperatorResult};

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use crate::cache::shared::Shared;
use crate::domain::earnings::PayoutRules;
use crate::domain::fields::OrderDraft;
use crate::domain::fields::{MAX_TEXT, TextKind, clean_text, phone};
use crate::domain::keys::KeyMaker;
use crate::domain::keys::KeySpec;
use crate::domain::keys::{KEY_PREFIX, TEST_KEY_PREFIX, generate_key, hash_key};
use crate::domain::pieces::OutcomeReport;
use crate::domain::wallet::WalletFigures;
use crate::domain::{moves, placement};
use crate::model::*;
use crate::model::{FieldProblem, Problem};
use crate::money::accepted_amount;
use crate::store::{StatusChange, Store, StoreError};

pub use crate::limits::{MAX_LIVE_KEYS, MIN_KEY_LENGTH};

/// A key just created: the plaintext is shown this once and never stored. Its `Debug` leaves
/// the plaintext out (`plaintext: "<redacted>"`), so that a log of it leaks no key.
#[derive(Clone, PartialEq)]
#[non_exhaustive]
pub struct CreatedKey {
    /// The stored key (hash only).
    pub key: ApiKey,
    /// The plaintext to hand to the integrator.
    pub plaintext: String,
}

impl CreatedKey {
    /// A `CreatedKey` of its fields, in their order.
    pub fn new(key: ApiKey, plaintext: String) -> Self {
        Self { key, plaintext }
    }
}

impl std::fmt::Debug for CreatedKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CreatedKey")
            .field("key", &self.key)
            .field("plaintext", &"<redacted>")
            .finish()
    }
}

/// The platform's handle on an engine; get one with [`Engine::operator`](crate::Engine::operator).
///
/// # A platform, from nothing to a paid-out order
///
/// Shipping, a catalogue, a marketer with a key, an order placed through the HTTP API, moved
/// to delivered with what became of its pieces, its profit withdrawn once out of its hold, and
/// the month's meter. (`examples/platform.rs` runs the same on SQLite or PostgreSQL.)
///
/// ```
/// # use commerce_core as commerce;
/// use std::sync::Arc;
/// use commerce::clock::ManualClock;
/// use commerce::model::*;
/// use commerce::domain::keys::KeySpec;
/// use commerce::domain::pieces::OutcomeReport;
/// use commerce::store::MemoryStore;
/// use commerce::{Decimal, Engine, governorates};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let egp = |s: &str| s.parse::<Decimal>().unwrap();
/// let clock = ManualClock::new(chrono::Utc::now());
/// let engine = Engine::builder(Arc::new(MemoryStore::new()))
///     .clock(Arc::new(clock.clone()))
///     .build().expect("valid settings");
/// let op = engine.operator();
///
/// // Shipping: every governorate at 45.00 with 14% tax on the charge.
/// let standard = op.create_shipping_option("شحن عادي").await?;
/// let mut served = Vec::new();
/// for name in governorates::EGYPT {
///     let g = op.create_governorate(name.arabic).await?;
///     let terms = RateTerms::charge(egp("45.00")).shipping_tax_percent(egp("14.00"));
///     op.set_shipping_rate(standard.id, g.id, terms).await?;
///     served.push(g.id);
/// }
///
/// // The catalogue: a product with a variant and a warranty.
/// let home = NewCategory::new("أدوات منزلية".to_owned(), "home".to_owned(), None);
/// let home = op.create_category(home).await?;
/// let kettle = NewProduct::builder()
///     .category_id(home.id)
///     .title("غلاية".to_owned())
///     .slug("kettle".to_owned())
///     .url("https://shop.example.com/kettle".to_owned())
///     .build();
/// let kettle = op.create_product(kettle).await?;
/// let white = NewVariant::builder()
///     .label("أبيض".to_owned())
///     .price(egp("250.00"))
///     .available(40)
///     .build();
/// let white = op.add_variant(kettle.id, white).await?;
/// let warranty = NewWarranty::builder()
///     .name("ضمان سنة".to_owned())
///     .duration_days(365)
///     .admin_fee(egp("15.00"))
///     .build();
/// let warranty = op.add_warranty(kettle.id, warranty).await?;
///
/// // A marketer, activated and approved, with a key shown once.
/// let who = NewAccount::marketer("أحمد", "متجر أحمد", "ahmed@example.com", "01012345678");
/// let account = op.create_account(who).await?;
/// op.set_account_state(account.id, AccountState::Active).await?;
/// op.set_api_status(account.id, ApiStatus::Approved).await?;
/// let abilities = vec![Ability::CatalogRead, Ability::OrdersWrite, Ability::WalletRead];
/// let spec = KeySpec::new("متجري".to_owned(), abilities, None, None);
/// let key = op.create_key(account.id, spec).await?;
///
/// // The marketer's store orders two pieces through the API, at 60.00 profit each.
/// let body = serde_json::json!({
///     "full_name": "سارة حسن", "phone": "01112223334", "address": "12 شارع النصر",
///     "governorate_id": served[0], "shipping_option_id": standard.id,
///     "lines": [{"variant_id": white.id, "quantity": 2, "profit": "60.00",
///                "warranty_ids": [warranty.id]}],
/// });
/// let request = http::Request::post("/api/v1/orders")
///     .header("authorization", format!("Bearer {}", key.plaintext))
///     .body(bytes::Bytes::from(body.to_string()))?;
/// let response = engine.handle(request).await;
/// assert_eq!(response.status(), 201);
/// let created: serde_json::Value = serde_json::from_slice(response.body())?;
/// let order_id = OrderId::new(created["data"]["id"].as_i64().unwrap());
///
/// // The back office moves it; both pieces are delivered.
/// op.move_order(order_id, OrderStatus::Confirmed, None).await?;
/// let order = op.move_order(order_id, OrderStatus::Shipped, None).await?;
/// let line = order.lines[0].id;
/// let outcomes = vec![(line, OutcomeReport::builder().delivered(2).build())];
/// op.move_order_with_outcomes(order_id, OrderStatus::Delivered, None, outcomes).await?;
///
/// // Held for `hold_days`, then ready: 120.00 profit less the 4% commission.
/// assert_eq!(op.wallet(account.id).await?.held, egp("115.20"));
/// clock.advance(chrono::Duration::days(engine.config().hold_days + 1));
/// let ready = op.wallet(account.id).await?.ready;
/// assert_eq!(ready, egp("115.20"));
/// let asked = NewWithdrawal::builder()
///     .account_id(account.id)
///     .amount(ready)
///     .wallet_number("01012345678".to_owned())
///     .wallet_description("فودافون كاش".to_owned())
///     .build();
/// let withdrawal = op.request_withdrawal(asked).await?;
/// op.complete_withdrawal(withdrawal.id, "TRX-1".into(), None).await?;
/// assert_eq!(op.wallet(account.id).await?.received, egp("115.20"));
///
/// // What the month costs: one billed order operation.
/// let month = BillingMonth::of(created_at(&created));
/// assert_eq!(op.meter(account.id, &month).await?.order_operations, 1);
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// # }).unwrap();
/// # fn created_at(order: &serde_json::Value) -> chrono::DateTime<chrono::Utc> {
/// #     order["data"]["created_at"].as_str().unwrap().parse().unwrap()
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct Operator {
    shared: Arc<Shared>,
}

impl Operator {
    pub(crate) fn new(shared: Arc<Shared>) -> Self {
        Self { shared }
    }

    fn store(&self) -> &dyn Store {
        &*self.shared.store
    }

    fn now(&self) -> DateTime<Utc> {
        self.shared.now()
    }

    fn payout_rules(&self) -> PayoutRules {
        self.shared.payout_rules(self.now())
    }

    // ---- accounts and keys ----

    /// Registers an account.
    pub async fn create_account(&self, new: NewAccount) -> OperatorResult<Account> {
        Ok(self.store().insert_account(new, self.now()).await?)
    }

    /// Suspends, deletes or reactivates an account; its keys follow at once.
    pub async fn set_account_state(
        &self,
        id: AccountId,
        state: AccountState,
    ) -> OperatorResult<Account> {
        let patch = AccountPatch::state(state);
        Ok(self.store().update_account(id, patch, self.now()).await?)
    }

    /// Approves, rejects, suspends or cancels API access.
    pub async fn set_api_status(
        &self,
        id: AccountId,
        api_status: ApiStatus,
    ) -> OperatorResult<Account> {
        let patch = AccountPatch::api_status(api_status);
        Ok(self.store().update_account(id, patch, self.now()).await?)
    }

    /// Creates a key with a fresh random plaintext, returned once. It starts with
    /// [`KEY_PREFIX`] (`sk_live_`), or [`TEST_KEY_PREFIX`] (`sk_test_`) on an engine in the
    /// sandbox's test mode ([`Config::test_mode`](crate::config::Config::test_mode)).
    /// [`Conflict::KeyLimit`] when the account has [`MAX_LIVE_KEYS`] live keys already (decided
    /// by the store with the insert, so keys created at once never together pass it).
    pub async fn create_key(
        &self,
        account: AccountId,
        spec: KeySpec,
    ) -> OperatorResult<CreatedKey> {
        let prefix = if self.shared.config.test_mode {
            TEST_KEY_PREFIX
        } else {
            KEY_PREFIX
        };
        let plaintext = generate_key(prefix);
        let key = self.import_key(account, &plaintext, spec).await?;
        Ok(CreatedKey { key, plaintext })
    }

    /// Stores a key whose plaintext the platform already has (migrations, fixtures): at least
    /// [`MIN_KEY_LENGTH`] characters (`plaintext`: [`Problem::TooShort`] otherwise), and
    /// [`Conflict::KeyLimit`] as [`create_key`](Self::create_key).
    pub async fn import_key(
        &self,
        account: AccountId,
        plaintext: &str,
        spec: KeySpec,
    ) -> OperatorResult<ApiKey> {
        if plaintext.chars().count() < MIN_KEY_LENGTH {
            return Err(OperatorError::field(
                "plaintext",
                Problem::TooShort {
                    min: MIN_KEY_LENGTH,
                },
            ));
        }
        self.store_key(account, plaintext, spec).await
    }

    /// [`import_key`](Self::import_key) without the length rule: the sandbox's published demo
    /// keys (`sk_demo_marketer`), which are no secret anyway.
    pub(crate) async fn store_key(
        &self,
        account: AccountId,
        plaintext: &str,
        spec: KeySpec,
    ) -> OperatorResult<ApiKey> {
        let spec = spec
            .check(KeyMaker::Platform)
            .map_err(OperatorError::Invalid)?;
        let record = NewKeyRecord {
            account_id: account,
            name: spec.name,
            hash: hash_key(plaintext),
            abilities: spec.abilities,
            expires_at: spec.expires_at,
            rate_limit: spec
                .rate_limit
                .unwrap_or(self.shared.config.default_rate_limit),
        };
        let hash = record.hash;
        let key = self
            .store()
            .insert_key(record, self.now(), MAX_LIVE_KEYS)
            .await?;
        // A client may have sent this plaintext before it was imported: this engine knows
        // it now (other engines once their memory of the miss ends).
        self.shared.unknown_keys.forget(&hash);
        Ok(key)
    }

    /// An account's keys, oldest first, revoked and expired ones included, each with the
    /// minute it was last used ([`AccountStore::keys`](crate::store::AccountStore::keys)).
    pub async fn keys(&self, account: AccountId) -> OperatorResult<Vec<KeyListing>> {
        Ok(self.store().keys(account).await?)
    }

    /// Revokes a key: it answers 401 from the next request on.
    pub async fn revoke_key(&self, id: KeyId) -> OperatorResult<ApiKey> {
        Ok(self.store().revoke_key(id, self.now()).await?)
    }

    /// Sets a key's expiry and own per-minute limit.
    pub async fn set_key_terms(
        &self,
        id: KeyId,
        expires_at: Option<DateTime<Utc>>,
        rate_limit: u32,
    ) -> OperatorResult<ApiKey> {
        Ok(self
            .store()
            .set_key_terms(id, expires_at, rate_limit)
            .await?)
    }

    // ---- orders ----

    /// Places an order for an account as the platform's own checkout, not billed. The draft
    /// is checked by the rules of `POST /orders` (as [`OrderDraft`] says), then against the
    /// catalogue, the shipping table and the stock, exactly as the API does.
    pub async fn place_order(
        &self,
        account: AccountId,
        draft: OrderDraft,
    ) -> OperatorResult<Order> {
        self.import_order(account, draft, self.now()).await
    }

    /// Places an order registered at `at` (imports of past orders).
    pub async fn import_order(
        &self,
        account: AccountId,
        draft: OrderDraft,
        at: DateTime<Utc>,
    ) -> OperatorResult<Order> {
        let request = draft.check(false).map_err(OperatorError::Invalid)?;
        let config = &self.shared.config;
        let kept = &self.shared.kept_products;
        Ok(placement::place(self.store(), kept, account, request, at, config, None).await?)
    }

    /// One order, of any account.
    pub async fn order(&self, id: OrderId) -> OperatorResult<Order> {
        self.store()
            .order(None, id)
            .await?
            .ok_or(OperatorError::NotFound)
    }

    /// Moves an order along its lifecycle ([`OrderStatus::can_move_to`]), now.
    pub async fn move_order(
        &self,
        id: OrderId,
        to: OrderStatus,
        reason: Option<String>,
    ) -> OperatorResult<Order> {
        self.move_order_at(id, to, reason, self.now()).await
    }

    /// Moves an order, dated `at` (imports and back-office corrections).
    pub async fn move_order_at(
        &self,
        id: OrderId,
        to: OrderStatus,
        reason: Option<String>,
        at: DateTime<Utc>,
    ) -> OperatorResult<Order> {
        let change = StatusChange {
            account_id: None,
            order_id: id,
            to,
            only_from: Vec::new(),
            reason,
            outcomes: Vec::new(),
            read_at: None,
            at,
            bill_month: None,
            events: self.shared.config.event_context(),
        };
        Ok(self.store().change_order_status(change).await?)
    }

    /// Moves an order and records what became of lines' pieces with the move, in one store
    /// operation (a delivery, a partial delivery, a return): each report is merged onto its
    /// line's outcome (a count left out keeps its value) and checked against the order's lines
    /// first (under `outcomes.{index}`; counts on a move that does not settle the order are
    /// refused under `outcomes`), and a refused move records neither. A settled order's
    /// uncounted pieces are delivered (delivered family) or returned (returned family):
    /// [`pieces::completed`](crate::domain::pieces::completed). Outcomes are written only onto
    /// the order as read: when another write of the order came between, the move is decided
    /// again on the order as it is (8 tries at most, then [`Conflict::Refused`]).
    pub async fn move_order_with_outcomes(
        &self,
        id: OrderId,
        to: OrderStatus,
        reason: Option<String>,
        outcomes: Vec<(LineId, OutcomeReport)>,
    ) -> OperatorResult<Order> {
        let change = moves::Move {
            account_id: None,
            order_id: id,
            to,
            reason,
            outcomes,
            at: self.now(),
        };
        Ok(moves::apply(self.store(), change, &self.shared.config, "outcomes").await?)
    }

    /// Corrects what became of the pieces of a settled order's lines, without a move: each
    /// report merged onto its line's outcome and checked as
    /// [`move_order_with_outcomes`](Self::move_order_with_outcomes) does (an order not
    /// settled is refused under `outcomes`). Stock and money move by the difference, once:
    /// pieces returned are restocked (or taken back: [`Conflict::StockShortfall`] when they
    /// were sold again), the marketer's earnings and the supplier's statement follow the
    /// delivered pieces ([`Conflict::SupplierShortfall`] when the supplier's money was
    /// withdrawn). An empty list changes nothing (not even `updated_at`): the order as it is.
    /// Corrections made at once each merge onto the other's counts: one decided on an order
    /// that another write changed since is decided again on the order as it is now.
    pub async fn set_line_outcomes(
        &self,
        order: OrderId,
        outcomes: Vec<(LineId, OutcomeReport)>,
    ) -> OperatorResult<Order> {
        let mut attempts = 0;
        loop {
            attempts += 1;
            let current = self.order(order).await?;
            let merged = moves::resolve_outcomes(&current, None, &outcomes, "outcomes")?;
            if merged.is_empty() {
                // Nothing reported: nothing changes (not even `updated_at`, which syncs read).
                return Ok(current);
            }
            // Written only onto the order as read: a correction that came between is merged
            // with, not overwritten.
            let written = self
                .store()
                .set_line_outcomes(order, merged, Some(current.updated_at), self.now())
                .await;
            match written {
                Err(StoreError::Changed) if attempts < moves::WRITE_ATTEMPTS => continue,
                written => return Ok(written?),
            }
        }
    }

    /// Sets the courier tracking URL.
    pub async fn set_tracking_url(
        &self,
        order: OrderId,
        url: Option<String>,
    ) -> OperatorResult<Order> {
        Ok(self
            .store()
            .set_tracking_url(order, url, self.now())
            .await?)
    }

    // ---- wallet, withdrawals, meter ----

    /// An account's wallet, as `GET /wallet` shows it.
    pub async fn wallet(&self, account: AccountId) -> OperatorResult<WalletFigures> {
        let rules = self.payout_rules();
        let totals = self
            .store()
            .wallet_totals(account, rules.held_after())
            .await?;
        let withdrawals = self.store().withdrawals(account).await?;
        Ok(WalletFigures::from_totals(totals, &withdrawals, rules))
    }

    /// Registers a withdrawal request from the wallet page: at least the minimum
    /// ([`Config::withdrawal_minimum`](crate::config::Config::withdrawal_minimum)) and at most what is
    /// ready, decided by the store in one atomic operation with the insert, so requests made
    /// at once never together exceed the balance ([`Conflict::OverReadyBalance`]). The
    /// wallet number must be an Egyptian mobile (stored normalised, `01` and 9 digits) and the
    /// wallet's description is required (at most 255 characters): every problem is named in
    /// [`OperatorError::Invalid`]. The same rule serves the owner's wallet page
    /// ([`Owner::request_withdrawal`](crate::owner::Owner::request_withdrawal), which also keeps to
    /// the withdrawal window).
    pub async fn request_withdrawal(&self, new: NewWithdrawal) -> OperatorResult<Withdrawal> {
        request_withdrawal(&self.shared, new).await
    }

    /// Records a withdrawal as paid.
    pub async fn complete_withdrawal(
        &self,
        id: WithdrawalId,
        transfer_reference: String,
        receipt_url: Option<String>,
    ) -> OperatorResult<Withdrawal> {
        let decision = WithdrawalDecision::Complete {
            transfer_reference,
            receipt_url,
        };
        Ok(self
            .store()
            .decide_withdrawal(id, decision, self.now())
            .await?)
    }

    /// Refuses a withdrawal.
    pub async fn reject_withdrawal(
        &self,
        id: WithdrawalId,
        notes: Option<String>,
    ) -> OperatorResult<Withdrawal> {
        Ok(self
            .store()
            .decide_withdrawal(id, WithdrawalDecision::Reject { notes }, self.now())
            .await?)
    }

    /// The billing meter of an account for a month.
    pub async fn meter(
        &self,
        account: AccountId,
        month: &BillingMonth,
    ) -> OperatorResult<MeterReading> {
        Ok(self.store().meter(account, month).await?)
    }

    /// The billing meter of an account for the current Cairo month.
    pub async fn meter_this_month(&self, account: AccountId) -> OperatorResult<MeterReading> {
        self.meter(account, &BillingMonth::of(self.now())).await
    }

    /// Deletes idempotency records past the replay window; call it periodically (an hourly
    /// task is plenty). Returns how many were deleted.
    pub async fn purge_idempotency(&self) -> OperatorResult<u64> {
        let before = self.now() - self.shared.config.idempotency_ttl;
        Ok(self.store().purge_idempotency(before).await?)
    }
}

/// The one rule of a withdrawal request, for the operator and the owner alike: amounts in
/// whole piastres, at least the minimum, at most what is ready (decided by the store with the
/// insert). The owner's pages also check the window first ([`crate::owner::Owner`]). A supplier's
/// withdrawal is drawn from its statement: its `supply_amount` is its amount (the store
/// writes the `withdrawal` debit); a marketer's is zero.
pub(crate) async fn request_withdrawal(
    shared: &Shared,
    new: NewWithdrawal,
) -> OperatorResult<Withdrawal> {
    let mut new = check_withdrawal(shared, new)?;
    let account = shared
        .store()
        .account(new.account_id)
        .await?
        .ok_or(OperatorError::NotFound)?;
    new.supply_amount = if account.side == Side::Supplier {
        new.amount
    } else {
        Decimal::ZERO
    };
    let now = shared.now();
    let held_after = shared.payout_rules(now).held_after();
    Ok(shared
        .store()
        .request_withdrawal(new, held_after, now)
        .await?)
}

/// The field rules of a withdrawal request: the request as stored (wallet number normalised,
/// description trimmed), or every problem found.
pub(crate) fn check_withdrawal(
    shared: &Shared,
    mut new: NewWithdrawal,
) -> OperatorResult<NewWithdrawal> {
    let mut problems = Vec::new();
    let mut note = |field: &str, problem: Problem| {
        problems.push(FieldProblem {
            field: field.to_owned(),
            problem,
        });
    };
    let minimum = shared.config.withdrawal_minimum;
    if accepted_amount(new.amount).is_none() {
        note("amount", Problem::InvalidAmount);
    } else if new.amount < minimum {
        note("amount", Problem::BelowMinimum { minimum });
    }
    if accepted_amount(new.supply_amount).is_none() {
        note("supply_amount", Problem::InvalidAmount);
    }
    match phone(&new.wallet_number) {
        Ok(Some(number)) => new.wallet_number = number,
        Ok(None) => note("wallet_number", Problem::Required),
        Err(problem) => note("wallet_number", problem),
    }
    match clean_text(&new.wallet_description, MAX_TEXT, TextKind::SingleLine) {
        Ok(Some(text)) => new.wallet_description = text,
        Ok(None) => note("wallet_description", Problem::Required),
        Err(problem) => note("wallet_description", problem),
    }
    if problems.is_empty() {
        Ok(new)
    } else {
        Err(OperatorError::Invalid(problems))
    }
}

/// An amount in whole piastres, zero or more ([`accepted_amount`]).
fn check_money(field: &str, amount: Decimal) -> OperatorResult<()> {
    match accepted_amount(amount) {
        Some(_) => Ok(()),
        None => Err(OperatorError::field(field, Problem::InvalidAmount)),
    }
}
