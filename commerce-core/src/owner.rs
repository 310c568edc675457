//! The account owner's Rust API: what the owner does on the account's own pages (API access,
//! keys, wallet and withdrawals; the onboarding of docs/onboarding.md), for an
//! account whose owner the embedding application has logged in. Get one with
//! [`Engine::owner`](crate::Engine::owner); the pages ([`owner_pages`](crate::owner_pages))
//! are built on it.
//!
//! Every rule is the one the platform's [`Operator`] and the HTTP API apply (the same
//! functions, the same [`OperatorError`]s, the same Arabic messages): a key's fields
//! ([`KeySpec`]), a withdrawal's amount, minimum, wallet and ready balance (decided by
//! the store with the insert, so requests made at once never together exceed it). What the
//! owner may do besides is narrower: abilities of the account's side only, an expiry later
//! than now, API status moves of [`Account::owner_may_move_api_to`] (a suspension by the team
//! is the team's to lift: [`Conflict::ApiSuspendedByTeam`]), withdrawals inside the window
//! (Sunday and Thursday, Cairo), API access, keys and withdrawals only while the account is
//! active ([`Conflict::AccountNotActive`]), and only the account's own keys (another account's
//! key is [`OperatorError::NotFound`], as the API answers another account's order).

use std::sync::Arc;

use chrono::{DateTime, Utc};
use rust_decimal::Decimal;

use crate::cache::shared::Shared;
use crate::domain::keys::{KeyMaker, KeySpec};
use crate::domain::wallet::{WalletFigures, WithdrawalWindow, withdrawal_window};
use crate::model::*;
use crate::operator::{self, Conflict, CreatedKey, Operator, OperatorError, OperatorResult};
use crate::store::{ACCOUNT_CHANGED, StoreError};

/// A withdrawal request as the owner fills it on the wallet page.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct WithdrawalForm {
    /// Amount, EGP.
    pub amount: Decimal,
    /// Mobile wallet number to pay to.
    pub wallet_number: String,
    /// The wallet's description ("فودافون كاش").
    pub wallet_description: String,
}

impl WithdrawalForm {
    /// `amount` to the mobile wallet `wallet_number` described as `wallet_description`.
    pub fn new(
        amount: Decimal,
        wallet_number: impl Into<String>,
        wallet_description: impl Into<String>,
    ) -> Self {
        Self {
            amount,
            wallet_number: wallet_number.into(),
            wallet_description: wallet_description.into(),
        }
    }
}

/// The owner's handle on one account: [`Engine::owner`](crate::Engine::owner) with the id the
/// host's own login established (never an API key).
#[derive(Debug, Clone)]
pub struct Owner {
    shared: Arc<Shared>,
    account: AccountId,
}

impl Owner {
    pub(crate) fn new(shared: Arc<Shared>, account: AccountId) -> Self {
        Self { shared, account }
    }

    fn operator(&self) -> Operator {
        Operator::new(self.shared.clone())
    }

    /// The account's id.
    pub fn account_id(&self) -> AccountId {
        self.account
    }

    /// The account; [`OperatorError::NotFound`] when there is none.
    pub async fn account(&self) -> OperatorResult<Account> {
        self.shared
            .store()
            .account(self.account)
            .await?
            .ok_or(OperatorError::NotFound)
    }

    /// The account, when it is active ([`Conflict::AccountNotActive`] otherwise): what API
    /// access, keys and withdrawals ask first.
    async fn active_account(&self) -> OperatorResult<Account> {
        let account = self.account().await?;
        if !account.is_active() {
            return Err(Conflict::AccountNotActive {
                state: account.state,
            }
            .into());
        }
        Ok(account)
    }

    /// Requests API access while the account is active: `pending`, for the team to approve
    /// ([`Operator::set_api_status`]), or `approved` at once where the platform says so
    /// ([`Config::approve_api_requests`](crate::config::Config::approve_api_requests): the sandbox).
    /// Not after a suspension by the team ([`Conflict::ApiSuspendedByTeam`]).
    pub async fn request_api_access(&self) -> OperatorResult<Account> {
        let account = self.move_api_status(ApiStatus::Pending).await?;
        if self.shared.config.approve_api_requests {
            // The platform's approval, of this very request only: a decision the team made
            // meanwhile (a suspension) stands.
            let approval = AccountPatch {
                api_status: Some(ApiStatus::Approved),
                only_from: Some((ApiStatus::Pending, ChangedBy::Owner)),
                ..AccountPatch::default()
            };
            let now = self.shared.now();
            return match self
                .shared
                .store()
                .update_account(account.id, approval, now)
                .await
            {
                Err(StoreError::Invalid(text)) if text == ACCOUNT_CHANGED => self.account().await,
                approved => Ok(approved?),
            };
        }
        Ok(account)
    }

    /// Suspends API access (its keys stop at once); a new request puts it back to the team.
    pub async fn suspend_api_access(&self) -> OperatorResult<Account> {
        self.move_api_status(ApiStatus::Suspended).await
    }

    /// Cancels API access (its keys stop at once).
    pub async fn cancel_api_access(&self) -> OperatorResult<Account> {
        self.move_api_status(ApiStatus::Cancelled).await
    }

    /// The owner's move to `to`, decided on the account as read and applied only while it
    /// still stands so (a suspension the team makes meanwhile is not lifted by it).
    async fn move_api_status(&self, to: ApiStatus) -> OperatorResult<Account> {
        let account = if to == ApiStatus::Pending {
            self.active_account().await?
        } else {
            self.account().await?
        };
        self.check_move(&account, to)?;
        let from = (account.api_status, account.api_status_by);
        let patch = AccountPatch::owners_api_move(to, from);
        match self
            .shared
            .store()
            .update_account(account.id, patch, self.shared.now())
            .await
        {
            Ok(moved) => Ok(moved),
            Err(StoreError::Invalid(text)) if text == ACCOUNT_CHANGED => {
                let now = self.account().await?;
                self.check_move(&now, to)?;
                Err(Conflict::ApiStatusNotAllowed {
                    current: now.api_status,
                    requested: to,
                }
                .into())
            }
            Err(error) => Err(error.into()),
        }
    }

    /// Whether the owner may move `account`'s API access to `to`, as a refusal.
    fn check_move(&self, account: &Account, to: ApiStatus) -> OperatorResult<()> {
        if account.owner_may_move_api_to(to) {
            Ok(())
        } else if account.api_status.owner_may_move_to(to) {
            Err(Conflict::ApiSuspendedByTeam.into())
        } else {
            Err(Conflict::ApiStatusNotAllowed {
                current: account.api_status,
                requested: to,
            }
            .into())
        }
    }

    /// The account's keys, oldest first, each with the minute it was last used.
    pub async fn keys(&self) -> OperatorResult<Vec<KeyListing>> {
        self.operator().keys(self.account).await
    }

    /// One page of the account's keys, newest first, with how many there are (the keys page).
    pub async fn key_page(&self, page: PageRequest) -> OperatorResult<Page<KeyListing>> {
        Ok(self.shared.store().key_page(self.account, page).await?)
    }

    /// Creates a key (plaintext returned this once) while the account is active and API access
    /// is approved: the rules of every key ([`KeySpec`]) and the owner's (the side's
    /// abilities, an expiry later than now), and at most
    /// [`MAX_LIVE_KEYS`](crate::operator::MAX_LIVE_KEYS) live ([`Conflict::KeyLimit`]); the
    /// per-minute limit is the platform's default (`rate_limit` is ignored).
    pub async fn create_key(&self, mut spec: KeySpec) -> OperatorResult<CreatedKey> {
        let account = self.active_account().await?;
        spec.rate_limit = None;
        let maker = KeyMaker::Owner {
            side: account.side,
            now: self.shared.now(),
        };
        let spec = spec.check(maker).map_err(OperatorError::Invalid)?;
        if account.api_status != ApiStatus::Approved {
            return Err(Conflict::ApiAccessNotApproved {
                current: account.api_status,
            }
            .into());
        }
        self.operator().create_key(account.id, spec).await
    }

    /// Revokes one of the account's keys; another account's key is `NotFound`.
    pub async fn revoke_key(&self, id: KeyId) -> OperatorResult<ApiKey> {
        match self.shared.store().key(id).await? {
            Some(key) if key.account_id == self.account => self.operator().revoke_key(id).await,
            _ => Err(OperatorError::NotFound),
        }
    }

    /// The wallet, as `GET /wallet` shows it.
    pub async fn wallet(&self) -> OperatorResult<WalletFigures> {
        self.operator().wallet(self.account).await
    }

    /// The current or next withdrawal window.
    pub fn withdrawal_window(&self) -> WithdrawalWindow {
        withdrawal_window(self.shared.now())
    }

    /// Requests a withdrawal while the account is active ([`Conflict::AccountNotActive`]
    /// otherwise) and inside the window ([`Conflict::WithdrawalWindowClosed`] otherwise), by
    /// the operator's own rule: at least the minimum, at most what is ready
    /// ([`Conflict::OverReadyBalance`], decided by the store with the insert).
    pub async fn request_withdrawal(&self, form: WithdrawalForm) -> OperatorResult<Withdrawal> {
        self.active_account().await?;
        let window = self.withdrawal_window();
        let new = NewWithdrawal::builder()
            .account_id(self.account)
            .amount(form.amount)
            .wallet_number(form.wallet_number)
            .wallet_description(form.wallet_description)
            .build();
        // The field rules first, so a wrong field is named even on a closed day.
        operator::check_withdrawal(&self.shared, new.clone())?;
        if !window.open {
            return Err(Conflict::WithdrawalWindowClosed {
                opens_at: window.opens_at,
            }
            .into());
        }
        operator::request_withdrawal(&self.shared, new).await
    }

    /// The account's withdrawals, newest first.
    pub async fn withdrawals(&self) -> OperatorResult<Vec<Withdrawal>> {
        let mut all = self.shared.store().withdrawals(self.account).await?;
        all.sort_by_key(|w| std::cmp::Reverse((w.created_at, w.id)));
        Ok(all)
    }

    /// The current instant of the engine's clock.
    pub fn now(&self) -> DateTime<Utc> {
        self.shared.now()
    }
}
