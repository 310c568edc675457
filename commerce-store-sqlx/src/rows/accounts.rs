//! Rows of accounts and keys, and the one-statement authentication's row.

use commerce_core::model::*;
use commerce_core::store::StoreError;

use super::*;

db_row! {
    pub(crate) struct AccountRow {
        id: i64,
        name: String,
        store_name: Option<String>,
        email: String,
        phone: String,
        side: String,
        state: String,
        api_status: String,
        api_status_at: i64,
        api_status_by: String,
        created_at: i64,
    }
}

impl AccountRow {
    pub(crate) fn into_domain(self) -> Result<Account, StoreError> {
        Ok(Account::builder()
            .id(AccountId::new(self.id))
            .name(self.name)
            .maybe_store_name(self.store_name)
            .email(self.email)
            .phone(self.phone)
            .side(parse(&self.side, Side::parse, "side")?)
            .state(parse(&self.state, AccountState::parse, "account state")?)
            .api_status(parse(&self.api_status, ApiStatus::parse, "api status")?)
            .api_status_at(instant(self.api_status_at))
            .api_status_by(parse(
                &self.api_status_by,
                ChangedBy::parse,
                "api status setter",
            )?)
            .created_at(instant(self.created_at))
            .build())
    }
}

db_row! {
    /// A key, its account (columns prefixed `a_`; absent when the account row is missing) and the
    /// rate-limit outcome, as the one-statement authentication returns them.
    pub(crate) struct AuthRow {
        @flatten key: KeyRow,
        a_id: Option<i64>,
        a_name: Option<String>,
        a_store_name: Option<String>,
        a_email: Option<String>,
        a_phone: Option<String>,
        a_side: Option<String>,
        a_state: Option<String>,
        a_api_status: Option<String>,
        a_api_status_at: Option<i64>,
        a_api_status_by: Option<String>,
        a_created_at: Option<i64>,
        /// The window's count after this request, when it was counted.
        counted: Option<i64>,
        /// The window's count before this statement.
        seen: Option<i64>,
    }
}

impl AuthRow {
    /// The key, its account, and the window's count after this request with the other slots'
    /// count before it, when the request was counted.
    #[allow(clippy::type_complexity)]
    pub(crate) fn into_parts(
        mut self,
    ) -> Result<(ApiKey, Option<Account>, Option<(i64, i64)>), StoreError> {
        let account = self.account()?;
        let counted = self.counted.map(|used| (used, self.seen.unwrap_or(0)));
        Ok((self.key.into_domain()?, account, counted))
    }

    /// The account, when the row has one.
    fn account(&mut self) -> Result<Option<Account>, StoreError> {
        let Some(id) = self.a_id else {
            return Ok(None);
        };
        let missing = || corrupt("account row with NULL columns");
        AccountRow {
            id,
            name: self.a_name.take().ok_or_else(missing)?,
            store_name: self.a_store_name.take(),
            email: self.a_email.take().ok_or_else(missing)?,
            phone: self.a_phone.take().ok_or_else(missing)?,
            side: self.a_side.take().ok_or_else(missing)?,
            state: self.a_state.take().ok_or_else(missing)?,
            api_status: self.a_api_status.take().ok_or_else(missing)?,
            api_status_at: self.a_api_status_at.ok_or_else(missing)?,
            api_status_by: self.a_api_status_by.take().ok_or_else(missing)?,
            created_at: self.a_created_at.ok_or_else(missing)?,
        }
        .into_domain()
        .map(Some)
    }
}

db_row! {
    pub(crate) struct KeyRow {
        id: i64,
        account_id: i64,
        name: String,
        hash: Vec<u8>,
        abilities: String,
        expires_at: Option<i64>,
        revoked_at: Option<i64>,
        rate_limit: i64,
        created_at: i64,
    }
}

impl KeyRow {
    pub(crate) fn into_domain(self) -> Result<ApiKey, StoreError> {
        let hash: KeyHash = self
            .hash
            .as_slice()
            .try_into()
            .map_err(|_| corrupt("key hash is not 32 bytes"))?;
        let abilities = self
            .abilities
            .split_whitespace()
            .map(|a| parse(a, Ability::parse, "ability"))
            .collect::<Result<_, _>>()?;
        Ok(ApiKey::builder()
            .id(KeyId::new(self.id))
            .account_id(AccountId::new(self.account_id))
            .name(self.name)
            .hash(hash)
            .abilities(abilities)
            .maybe_expires_at(self.expires_at.map(instant))
            .maybe_revoked_at(self.revoked_at.map(instant))
            .rate_limit(u32_of(self.rate_limit, "rate limit")?)
            .created_at(instant(self.created_at))
            .build())
    }
}
