//! The platform's Rust API: everything the HTTP API reads is set up and moved from here.
//!
//! The embedding application (the platform's own web app) calls these for accounts, keys,
//! the catalogue, shipping, order moves, withdrawals and the billing meter. None of them is
//! reachable through `/api/v1`.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use crate::auth::{generate_key, hash_key};
use crate::domain::checkout::{CheckoutRequest, LineRequest};
use crate::domain::placement::{self, OrderRequest};
use crate::domain::wallet::{PayoutRules, WalletFigures};
use crate::error::ApiError;
use crate::input::normalize_phone;
use crate::model::*;
use crate::money::round_money;
use crate::shared::Shared;
use crate::store::{StatusChange, StatusChangeError, Store, StoreError};
use crate::time::cairo_month;

/// Why an operator call changed nothing.
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// No such record.
    #[error("not found")]
    NotFound,
    /// The input breaks a rule (the text says which).
    #[error("invalid: {0}")]
    Invalid(String),
    /// The order's status does not allow the move.
    #[error("order is {current} and cannot move to {requested}")]
    MoveNotAllowed {
        /// Status now.
        current: OrderStatus,
        /// Status asked for.
        requested: OrderStatus,
    },
    /// An order was refused exactly as the API would refuse it (validation, stock, duplicate).
    #[error("order refused: {0}")]
    Rejected(ApiError),
    /// The store failed.
    #[error(transparent)]
    Store(StoreError),
}

impl From<StoreError> for OperatorError {
    fn from(error: StoreError) -> Self {
        match error {
            StoreError::NotFound => OperatorError::NotFound,
            StoreError::Invalid(text) => OperatorError::Invalid(text),
            other => OperatorError::Store(other),
        }
    }
}

impl From<StatusChangeError> for OperatorError {
    fn from(error: StatusChangeError) -> Self {
        match error {
            StatusChangeError::NotFound => OperatorError::NotFound,
            StatusChangeError::NotAllowed { current, requested } => {
                OperatorError::MoveNotAllowed { current, requested }
            }
            StatusChangeError::Store(e) => e.into(),
        }
    }
}

/// Result of an operator call.
pub type OperatorResult<T> = Result<T, OperatorError>;

/// What a new key is allowed.
#[derive(Debug, Clone, PartialEq)]
pub struct KeySpec {
    /// Name shown to the owner.
    pub name: String,
    /// Abilities.
    pub abilities: Vec<Ability>,
    /// Expiry, if any.
    pub expires_at: Option<DateTime<Utc>>,
    /// Own per-minute limit (`None`: the engine's default, 120).
    pub rate_limit: Option<u32>,
}

/// A key just created: the plaintext is shown this once and never stored.
#[derive(Debug, Clone, PartialEq)]
pub struct CreatedKey {
    /// The stored key (hash only).
    pub key: ApiKey,
    /// The plaintext to hand to the integrator.
    pub plaintext: String,
}

/// One line of an order placed by the platform.
#[derive(Debug, Clone, PartialEq)]
pub struct DraftLine {
    /// Variant.
    pub variant_id: VariantId,
    /// Pieces.
    pub quantity: i64,
    /// Profit per piece.
    pub profit: Decimal,
    /// Warranties chosen.
    pub warranty_ids: Vec<WarrantyId>,
}

/// An order placed by the platform itself (its own checkout, or an import).
#[derive(Debug, Clone, PartialEq)]
pub struct OrderDraft {
    /// The marketer's order number.
    pub external_reference: Option<String>,
    /// Customer name.
    pub full_name: String,
    /// Customer mobile (`+20`/`0020` accepted).
    pub phone: String,
    /// Second mobile.
    pub second_phone: Option<String>,
    /// Address.
    pub address: String,
    /// Governorate.
    pub governorate_id: GovernorateId,
    /// Shipping option.
    pub shipping_option_id: ShippingOptionId,
    /// Store name.
    pub store_name: Option<String>,
    /// Store link.
    pub store_link: Option<String>,
    /// Note.
    pub note: Option<String>,
    /// Lines.
    pub lines: Vec<DraftLine>,
    /// Number from before reference numbers (imports).
    pub legacy_number: Option<String>,
}

/// The platform's handle on an engine; get one with [`Engine::operator`](crate::Engine::operator).
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
        let patch = AccountPatch {
            state: Some(state),
            ..AccountPatch::default()
        };
        Ok(self.store().update_account(id, patch).await?)
    }

    /// Approves, rejects, suspends or cancels API access.
    pub async fn set_api_status(
        &self,
        id: AccountId,
        api_status: ApiStatus,
    ) -> OperatorResult<Account> {
        let patch = AccountPatch {
            api_status: Some(api_status),
            ..AccountPatch::default()
        };
        Ok(self.store().update_account(id, patch).await?)
    }

    /// Creates a key with a fresh random plaintext, returned once.
    pub async fn create_key(
        &self,
        account: AccountId,
        spec: KeySpec,
    ) -> OperatorResult<CreatedKey> {
        let plaintext = generate_key();
        let key = self.import_key(account, &plaintext, spec).await?;
        Ok(CreatedKey { key, plaintext })
    }

    /// Stores a key whose plaintext the platform already has (migrations, fixtures).
    pub async fn import_key(
        &self,
        account: AccountId,
        plaintext: &str,
        spec: KeySpec,
    ) -> OperatorResult<ApiKey> {
        if plaintext.len() < 8 {
            return Err(OperatorError::Invalid(
                "a key needs at least 8 characters".into(),
            ));
        }
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
        Ok(self.store().insert_key(record, self.now()).await?)
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

    // ---- catalogue ----

    /// Adds a category.
    pub async fn create_category(&self, new: NewCategory) -> OperatorResult<Category> {
        Ok(self.store().insert_category(new).await?)
    }

    /// Lists or hides a category.
    pub async fn set_category_active(
        &self,
        id: CategoryId,
        active: bool,
    ) -> OperatorResult<Category> {
        Ok(self.store().set_category_active(id, active).await?)
    }

    /// Adds a product (sold at once; add variants next).
    pub async fn create_product(&self, new: NewProduct) -> OperatorResult<Product> {
        Ok(self.store().insert_product(new, self.now()).await?)
    }

    /// Starts or stops selling a product (a stopped product is a 404 on the API).
    pub async fn set_product_active(&self, id: ProductId, active: bool) -> OperatorResult<Product> {
        Ok(self
            .store()
            .set_product_active(id, active, self.now())
            .await?)
    }

    /// Adds a variant; money must be whole piastres and not negative.
    pub async fn add_variant(
        &self,
        product: ProductId,
        new: NewVariant,
    ) -> OperatorResult<Variant> {
        for amount in [new.price, new.suggested_min, new.suggested_max] {
            check_money(amount)?;
        }
        check_stock(new.available)?;
        Ok(self
            .store()
            .insert_variant(product, new, self.now())
            .await?)
    }

    /// Changes a variant's price, suggested range or stock.
    pub async fn update_variant(
        &self,
        id: VariantId,
        patch: VariantPatch,
    ) -> OperatorResult<Variant> {
        for amount in [patch.price, patch.suggested_min, patch.suggested_max]
            .into_iter()
            .flatten()
        {
            check_money(amount)?;
        }
        if let Some(available) = patch.available {
            check_stock(available)?;
        }
        Ok(self.store().update_variant(id, patch, self.now()).await?)
    }

    /// Adds a warranty to a product.
    pub async fn add_warranty(
        &self,
        product: ProductId,
        new: NewWarranty,
    ) -> OperatorResult<Warranty> {
        check_money(new.admin_fee)?;
        check_money(new.price_from)?;
        if new.percent.is_sign_negative() || new.percent > Decimal::ONE_HUNDRED {
            return Err(OperatorError::Invalid(
                "a warranty percent is between 0 and 100".into(),
            ));
        }
        Ok(self
            .store()
            .insert_warranty(product, new, self.now())
            .await?)
    }

    /// Offers or stops a warranty.
    pub async fn set_warranty_active(
        &self,
        id: WarrantyId,
        active: bool,
    ) -> OperatorResult<Warranty> {
        Ok(self
            .store()
            .set_warranty_active(id, active, self.now())
            .await?)
    }

    // ---- shipping ----

    /// Adds a governorate.
    pub async fn create_governorate(&self, name: &str) -> OperatorResult<Governorate> {
        Ok(self.store().insert_governorate(name.to_owned()).await?)
    }

    /// Adds a shipping option (serving no governorate yet).
    pub async fn create_shipping_option(&self, name: &str) -> OperatorResult<ShippingOption> {
        Ok(self.store().insert_shipping_option(name.to_owned()).await?)
    }

    /// Offers or stops a shipping option.
    pub async fn set_shipping_option_active(
        &self,
        id: ShippingOptionId,
        active: bool,
    ) -> OperatorResult<ShippingOption> {
        Ok(self.store().set_shipping_option_active(id, active).await?)
    }

    /// Sets what an option charges for a governorate (base charge, tax on it, percent of goods).
    pub async fn set_shipping_rate(
        &self,
        option: ShippingOptionId,
        governorate: GovernorateId,
        delivery_charge: Decimal,
        shipping_tax_percent: Decimal,
        total_due_tax_percent: Decimal,
    ) -> OperatorResult<ShippingOption> {
        for amount in [delivery_charge, shipping_tax_percent, total_due_tax_percent] {
            check_money(amount)?;
        }
        let rate = ShippingRate {
            governorate_id: governorate,
            governorate_name: String::new(),
            delivery_charge,
            shipping_tax_percent,
            total_due_tax_percent,
        };
        Ok(self.store().set_shipping_rate(option, rate).await?)
    }

    // ---- orders ----

    /// Places an order for an account as the platform's own checkout, not billed.
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
        let phone =
            normalize_phone(&draft.phone).ok_or_else(|| OperatorError::Invalid("phone".into()))?;
        let second_phone = match draft.second_phone {
            Some(p) => Some(
                normalize_phone(&p).ok_or_else(|| OperatorError::Invalid("second_phone".into()))?,
            ),
            None => None,
        };
        let request = OrderRequest {
            external_reference: draft.external_reference,
            full_name: draft.full_name,
            phone,
            second_phone,
            address: draft.address,
            store_name: draft.store_name,
            store_link: draft.store_link,
            note: draft.note,
            checkout: CheckoutRequest {
                shipping_option_id: draft.shipping_option_id,
                governorate_id: draft.governorate_id,
                lines: draft
                    .lines
                    .into_iter()
                    .map(|l| LineRequest {
                        variant_id: l.variant_id,
                        quantity: l.quantity,
                        profit: l.profit,
                        warranty_ids: l.warranty_ids,
                    })
                    .collect(),
            },
            legacy_number: draft.legacy_number,
            billed: false,
        };
        let commission = self.shared.config.commission_percent;
        placement::place(self.store(), account, request, at, commission, None)
            .await
            .map_err(|error| OperatorError::Rejected(error.into()))
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
            at,
            bill_month: None,
        };
        Ok(self.store().change_order_status(change).await?)
    }

    /// Records what became of lines' pieces after shipping.
    pub async fn set_line_outcomes(
        &self,
        order: OrderId,
        outcomes: Vec<(LineId, LineOutcome)>,
    ) -> OperatorResult<Order> {
        let current = self.order(order).await?;
        for (line_id, outcome) in &outcomes {
            let line = current
                .lines
                .iter()
                .find(|l| l.id == *line_id)
                .ok_or(OperatorError::NotFound)?;
            let counted = outcome.delivered_quantity.unwrap_or(0)
                + outcome.returned_quantity.unwrap_or(0)
                + outcome.damaged_quantity
                + outcome.lost_quantity
                + outcome.destroyed_quantity;
            let negative = [
                outcome.delivered_quantity.unwrap_or(0),
                outcome.returned_quantity.unwrap_or(0),
                outcome.damaged_quantity,
                outcome.lost_quantity,
                outcome.destroyed_quantity,
            ]
            .iter()
            .any(|q| *q < 0);
            if negative || counted > line.quantity {
                return Err(OperatorError::Invalid(format!(
                    "line {line_id}: outcomes exceed the {} pieces",
                    line.quantity
                )));
            }
        }
        Ok(self
            .store()
            .set_line_outcomes(order, outcomes, self.now())
            .await?)
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
        let rules = PayoutRules {
            now: self.now(),
            hold_days: self.shared.config.hold_days,
        };
        let totals = self
            .store()
            .wallet_totals(account, rules.held_after())
            .await?;
        let withdrawals = self.store().withdrawals(account).await?;
        Ok(WalletFigures::from_totals(totals, &withdrawals, rules))
    }

    /// Registers a withdrawal request from the wallet page: at least the minimum and at most
    /// what is ready.
    pub async fn request_withdrawal(&self, new: NewWithdrawal) -> OperatorResult<Withdrawal> {
        check_money(new.amount)?;
        if new.amount < self.shared.config.withdrawal_minimum {
            return Err(OperatorError::Invalid(
                "below the withdrawal minimum".into(),
            ));
        }
        if new.amount > self.wallet(new.account_id).await?.ready {
            return Err(OperatorError::Invalid("more than the ready balance".into()));
        }
        Ok(self.store().insert_withdrawal(new, self.now()).await?)
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

    /// The billing meter of an account for a month (`YYYY-MM`, Cairo time).
    pub async fn meter(&self, account: AccountId, month: &str) -> OperatorResult<MeterReading> {
        Ok(self.store().meter(account, month).await?)
    }

    /// The billing meter of an account for the current Cairo month.
    pub async fn meter_this_month(&self, account: AccountId) -> OperatorResult<MeterReading> {
        self.meter(account, &cairo_month(self.now())).await
    }

    /// Deletes idempotency records past the replay window; call it periodically (an hourly
    /// task is plenty). Returns how many were deleted.
    pub async fn purge_idempotency(&self) -> OperatorResult<u64> {
        let before = self.now() - self.shared.config.idempotency_ttl;
        Ok(self.store().purge_idempotency(before).await?)
    }
}

fn check_money(amount: Decimal) -> OperatorResult<()> {
    if amount.is_sign_negative() && !amount.is_zero() || round_money(amount) != amount {
        return Err(OperatorError::Invalid(format!(
            "{amount} is not a non-negative amount in whole piastres"
        )));
    }
    Ok(())
}

fn check_stock(available: i64) -> OperatorResult<()> {
    if available < 0 {
        return Err(OperatorError::Invalid("stock cannot be negative".into()));
    }
    Ok(())
}
