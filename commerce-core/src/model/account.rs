//! Accounts, their sides and states, abilities and API keys.

use chrono::{DateTime, Utc};

use super::*;

string_enum! {
    /// Which kind of account owns a key.
    Side {
        /// An online-store owner reselling the platform's products.
        Marketer => "marketer",
        /// A supplier of products.
        Supplier => "supplier",
        /// A shipping company (refused everywhere but `/me`).
        Shipping => "shipping",
    }
}

string_enum! {
    /// The life state of an account.
    AccountState {
        /// Usable.
        Active => "active",
        /// Suspended by the platform: its keys stop at once.
        Suspended => "suspended",
        /// Deleted.
        Deleted => "deleted",
        /// Registration not completed.
        Incomplete => "incomplete",
    }
}

string_enum! {
    /// The API access state of an account; only `approved` passes.
    ApiStatus {
        /// Never requested.
        None => "none",
        /// Requested, awaiting the team.
        Pending => "pending",
        /// Approved: keys work.
        Approved => "approved",
        /// Refused by the team.
        Rejected => "rejected",
        /// Suspended by the team or the owner.
        Suspended => "suspended",
        /// Cancelled.
        Cancelled => "cancelled",
    }
}

string_enum! {
    /// Who set an account's API status ([`Account::api_status_by`]); the team by default.
    #[derive(Default)]
    ChangedBy {
        /// The platform's team ([`Operator::set_api_status`](crate::operator::Operator::set_api_status)),
        /// or the account's registration.
        #[default]
        Team => "team",
        /// The account's owner ([`Owner`](crate::owner::Owner), the owner's pages).
        Owner => "owner",
    }
}

impl ApiStatus {
    /// Whether the account's owner may move API access from this status to `to`, by the status
    /// alone: request it (`pending`) when never requested, rejected, suspended or cancelled;
    /// suspend it when approved; cancel it when pending, approved or suspended. Approving and
    /// rejecting are the team's ([`Operator::set_api_status`](crate::operator::Operator::set_api_status)).
    /// [`Account::owner_may_move_api_to`] adds who suspended: the team's suspension is the
    /// team's to lift.
    pub fn owner_may_move_to(self, to: ApiStatus) -> bool {
        use ApiStatus::*;
        match to {
            Pending => matches!(self, None | Rejected | Suspended | Cancelled),
            Suspended => self == Approved,
            Cancelled => matches!(self, Pending | Approved | Suspended),
            None | Approved | Rejected => false,
        }
    }
}

string_enum! {
    /// What a key may do.
    Ability {
        /// Categories, products, shipping options, shipping quote.
        CatalogRead => "catalog:read",
        /// List and read orders.
        OrdersRead => "orders:read",
        /// Register and cancel orders.
        OrdersWrite => "orders:write",
        /// Read the wallet.
        WalletRead => "wallet:read",
        /// Supplier quotes (read).
        QuotesRead => "quotes:read",
        /// Supplier quotes (write).
        QuotesWrite => "quotes:write",
        /// Supplier statement.
        StatementRead => "statement:read",
        /// Register and manage webhook endpoints.
        WebhooksManage => "webhooks:manage",
    }
}

impl Ability {
    /// The abilities a key of an account of `side` may be given by its owner: a marketer's
    /// catalogue, orders, wallet and webhooks; a supplier's quotes, statement, wallet and
    /// webhooks; none
    /// for a shipping company (its keys reach `/me` only).
    pub fn for_side(side: Side) -> &'static [Ability] {
        match side {
            Side::Marketer => &[
                Ability::CatalogRead,
                Ability::OrdersRead,
                Ability::OrdersWrite,
                Ability::WalletRead,
                Ability::WebhooksManage,
            ],
            Side::Supplier => &[
                Ability::QuotesRead,
                Ability::QuotesWrite,
                Ability::StatementRead,
                Ability::WalletRead,
                Ability::WebhooksManage,
            ],
            Side::Shipping => &[],
        }
    }
}

/// An account (marketer, supplier or shipping company).
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct Account {
    /// Id.
    pub id: AccountId,
    /// Owner's name.
    pub name: String,
    /// Store name (marketers).
    pub store_name: Option<String>,
    /// E-mail.
    pub email: String,
    /// Phone.
    pub phone: String,
    /// Kind of account.
    pub side: Side,
    /// Life state.
    pub state: AccountState,
    /// API access state.
    pub api_status: ApiStatus,
    /// When the API access state last changed (registration, when it never did): for an
    /// account waiting for approval, when it asked ([`AccountQuery::waiting_for_approval`]).
    pub api_status_at: DateTime<Utc>,
    /// Who set the API access state: the team or the owner (an account's registration counts
    /// as the team's).
    #[builder(default)]
    pub api_status_by: ChangedBy,
    /// Creation instant.
    pub created_at: DateTime<Utc>,
}

impl Account {
    /// Whether the owner may move API access to `to` ([`ApiStatus::owner_may_move_to`]), and
    /// not away from a suspension the team made: that one is lifted (or ended) by the team
    /// only, while the owner's own suspension stays the owner's to lift.
    pub fn owner_may_move_api_to(&self, to: ApiStatus) -> bool {
        let teams_suspension =
            self.api_status == ApiStatus::Suspended && self.api_status_by == ChangedBy::Team;
        !teams_suspension && self.api_status.owner_may_move_to(to)
    }

    /// Whether the account is active (not suspended, deleted or incomplete): only an active
    /// account's owner requests API access, keys and withdrawals.
    pub fn is_active(&self) -> bool {
        self.state == AccountState::Active
    }
}

/// A change to an account's life state and API access, field by field: `None` leaves a field
/// as it is, so that two changes made at once (one to each field) both stick.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct AccountPatch {
    /// New life state.
    pub state: Option<AccountState>,
    /// New API access state.
    pub api_status: Option<ApiStatus>,
    /// Who makes the API status change (recorded with it, [`Account::api_status_by`]): the
    /// team unless said otherwise.
    pub api_status_by: ChangedBy,
    /// Apply the change only while the account's API status is this one, set by this one: a
    /// move decided on what was read is refused (`StoreError::Invalid`, nothing written) when
    /// the account changed since.
    pub only_from: Option<(ApiStatus, ChangedBy)>,
}

impl AccountPatch {
    /// A change of the life state only.
    pub fn state(state: AccountState) -> Self {
        Self {
            state: Some(state),
            ..Self::default()
        }
    }

    /// A change of the API access state only.
    pub fn api_status(api_status: ApiStatus) -> Self {
        Self {
            api_status: Some(api_status),
            ..Self::default()
        }
    }

    /// The owner's move of API access to `api_status`, from the status (and its setter) the
    /// owner's decision was made on.
    pub fn owners_api_move(api_status: ApiStatus, from: (ApiStatus, ChangedBy)) -> Self {
        Self {
            api_status: Some(api_status),
            api_status_by: ChangedBy::Owner,
            only_from: Some(from),
            ..Self::default()
        }
    }

    /// Whether the change applies to `account` as it stands
    /// ([`only_from`](AccountPatch::only_from)).
    pub fn applies_to(&self, account: &Account) -> bool {
        self.only_from
            .is_none_or(|from| (account.api_status, account.api_status_by) == from)
    }
}

/// A new account, as the platform registers it: [`NewAccount::marketer`] or
/// [`NewAccount::supplier`], registration incomplete and API access never requested until the
/// platform moves them ([`Operator::set_account_state`](crate::operator::Operator::set_account_state),
/// [`Operator::set_api_status`](crate::operator::Operator::set_api_status)); or
/// `NewAccount::builder()`, which can set them already (imports, fixtures).
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct NewAccount {
    /// Owner's name.
    pub name: String,
    /// Store name (marketers).
    pub store_name: Option<String>,
    /// E-mail.
    pub email: String,
    /// Phone.
    pub phone: String,
    /// Kind of account.
    pub side: Side,
    /// Initial life state ([`AccountState::Incomplete`] when the builder is not given one).
    #[builder(default = AccountState::Incomplete)]
    pub state: AccountState,
    /// Initial API access state ([`ApiStatus::None`] when the builder is not given one).
    #[builder(default = ApiStatus::None)]
    pub api_status: ApiStatus,
}

impl NewAccount {
    /// A marketer (an online-store owner) with its store's name.
    pub fn marketer(
        name: impl Into<String>,
        store_name: impl Into<String>,
        email: impl Into<String>,
        phone: impl Into<String>,
    ) -> Self {
        NewAccount::builder()
            .name(name.into())
            .store_name(store_name.into())
            .email(email.into())
            .phone(phone.into())
            .side(Side::Marketer)
            .build()
    }

    /// A supplier.
    pub fn supplier(
        name: impl Into<String>,
        email: impl Into<String>,
        phone: impl Into<String>,
    ) -> Self {
        NewAccount::builder()
            .name(name.into())
            .email(email.into())
            .phone(phone.into())
            .side(Side::Supplier)
            .build()
    }
}

/// SHA-256 of a key's plaintext.
pub type KeyHash = [u8; 32];

/// An API key as stored: never its plaintext.
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct ApiKey {
    /// Id.
    pub id: KeyId,
    /// Owning account.
    pub account_id: AccountId,
    /// Name given by the owner.
    pub name: String,
    /// SHA-256 of the plaintext.
    pub hash: KeyHash,
    /// Abilities granted.
    pub abilities: Vec<Ability>,
    /// Expiry, if any.
    pub expires_at: Option<DateTime<Utc>>,
    /// Revocation instant, if revoked.
    pub revoked_at: Option<DateTime<Utc>>,
    /// Requests allowed per minute.
    pub rate_limit: u32,
    /// Creation instant.
    pub created_at: DateTime<Utc>,
}

impl ApiKey {
    /// Whether the key may be used at `now`: not revoked, not expired.
    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        self.revoked_at.is_none() && self.expires_at.is_none_or(|at| at > now)
    }
}

/// A key as its owner's list shows it ([`AccountStore::keys`](crate::store::AccountStore::keys)):
/// the stored key and the minute it was last used.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub struct KeyListing {
    /// The key (hash only).
    pub key: ApiKey,
    /// Start of the last UTC minute in which a request with the key was counted (its latest
    /// rate window: no write is made for this), `None` when never used or when that window
    /// is no longer kept (the store keeps each key's latest window).
    pub last_used_at: Option<DateTime<Utc>>,
}

impl KeyListing {
    /// A listing from the key and its latest rate window.
    pub fn of(key: ApiKey, window: Option<RateWindow>) -> Self {
        let last_used_at = window.and_then(RateWindow::start);
        Self { key, last_used_at }
    }
}

/// A fixed rate-limit window: one UTC minute, named by its start
/// ([`AccountStore::hit_rate_limit`](crate::store::AccountStore::hit_rate_limit) counts a
/// key's requests per window). Stores keep it as the minute's number since the Unix epoch
/// ([`minute`](Self::minute)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RateWindow(i64);

impl RateWindow {
    /// The window `at` falls in.
    pub fn containing(at: DateTime<Utc>) -> Self {
        Self(at.timestamp().div_euclid(60))
    }

    /// The window of the `minute`-th UTC minute since the Unix epoch (as stores keep it).
    pub fn from_minute(minute: i64) -> Self {
        Self(minute)
    }

    /// The window as UTC minutes since the Unix epoch (how stores keep it).
    pub fn minute(self) -> i64 {
        self.0
    }

    /// The window's first instant; `None` past the range of [`DateTime`].
    pub fn start(self) -> Option<DateTime<Utc>> {
        self.0
            .checked_mul(60)
            .and_then(|seconds| DateTime::from_timestamp(seconds, 0))
    }

    /// Whole seconds from `now` until the window ends (at least 1): a refused request's
    /// `Retry-After`.
    pub fn seconds_left(self, now: DateTime<Utc>) -> i64 {
        self.0
            .saturating_add(1)
            .saturating_mul(60)
            .saturating_sub(now.timestamp())
            .max(1)
    }
}

/// A key record to insert (the engine hashes the plaintext).
#[derive(Debug, Clone, PartialEq, bon::Builder)]
#[non_exhaustive]
pub struct NewKeyRecord {
    /// Owning account.
    pub account_id: AccountId,
    /// Name.
    pub name: String,
    /// SHA-256 of the plaintext.
    pub hash: KeyHash,
    /// Abilities.
    pub abilities: Vec<Ability>,
    /// Expiry (`None`: never; the builder asks for it, so that a key is never made
    /// everlasting by a forgotten setter).
    #[builder(required)]
    pub expires_at: Option<DateTime<Utc>>,
    /// Requests per minute.
    pub rate_limit: u32,
}

impl NewAccount {
    /// The account as registered with `id` at `at`.
    pub fn into_account(self, id: AccountId, at: DateTime<Utc>) -> Account {
        Account {
            id,
            name: self.name,
            store_name: self.store_name,
            email: self.email,
            phone: self.phone,
            side: self.side,
            state: self.state,
            api_status: self.api_status,
            api_status_at: at,
            api_status_by: ChangedBy::Team,
            created_at: at,
        }
    }
}

impl NewKeyRecord {
    /// The key as stored with `id` at `at` (not revoked).
    pub fn into_key(self, id: KeyId, at: DateTime<Utc>) -> ApiKey {
        ApiKey {
            id,
            account_id: self.account_id,
            name: self.name,
            hash: self.hash,
            abilities: self.abilities,
            expires_at: self.expires_at,
            revoked_at: None,
            rate_limit: self.rate_limit,
            created_at: at,
        }
    }
}
