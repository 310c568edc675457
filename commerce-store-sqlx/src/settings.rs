//! [`PoolSettings`]: the connection pool and session limits a store is opened with.

use std::time::Duration;

/// The connection pool of a store and the limits of its sessions, given to
/// `PgStore::connect_with_settings` or `SqliteStore::connect_with_settings` (features `postgres`,
/// `sqlite`).
/// Start from [`PoolSettings::postgres`] or [`PoolSettings::sqlite`] (the defaults the plain
/// `connect*` functions use) and change what differs:
///
/// ```
/// # mod commerce { pub use commerce_core::*; pub mod sqlx { pub use commerce_store_sqlx::*; } }
/// use std::time::Duration;
/// use commerce::sqlx::PoolSettings;
///
/// let settings = PoolSettings::postgres()
///     .with_max_connections(20)
///     .with_acquire_timeout(Duration::from_secs(5))
///     .with_statement_timeout(Some(Duration::from_secs(10)));
/// assert_eq!(settings.max_connections, 20);
/// ```
///
/// # Defaults
///
/// | setting | PostgreSQL | SQLite (a file) |
/// |---|---|---|
/// | `max_connections` | 10 | 8 |
/// | `min_connections` | 0 | 0 |
/// | `acquire_timeout` | 30 s | 30 s |
/// | `idle_timeout` | 10 min | 10 min |
/// | `max_lifetime` | 30 min | 30 min |
/// | `statement_timeout` | 30 s | (none: SQLite has no such setting) |
/// | `idle_in_transaction_timeout` | 60 s | (none) |
///
/// An in-memory SQLite database lives in one connection: its pool always holds exactly one,
/// never closed for idleness or age, whatever these settings say.
///
/// # From a file or the environment
///
/// `PoolSettings` is [`Deserialize`](serde::Deserialize), like the engine's `Config`: a field
/// left out keeps its **PostgreSQL** default ([`PoolSettings::postgres`]; start from
/// [`PoolSettings::sqlite`] in code for SQLite's), durations are written with their unit
/// (`"5s"`, `"10m"`, `"none"` for no limit), and an unknown field is an error:
///
/// ```
/// # mod commerce { pub use commerce_core::*; pub mod sqlx { pub use commerce_store_sqlx::*; } }
/// use std::time::Duration;
/// use commerce::sqlx::PoolSettings;
///
/// let settings: PoolSettings = serde_json::from_str(
///     r#"{"max_connections": 20, "acquire_timeout": "5s", "statement_timeout": "none"}"#,
/// )
/// .unwrap();
/// assert_eq!(settings.acquire_timeout, Duration::from_secs(5));
/// assert_eq!(settings.statement_timeout, None);
/// assert_eq!(settings.idle_timeout, PoolSettings::postgres().idle_timeout);
/// ```
///
/// # Sizing against PostgreSQL's `max_connections`
///
/// Each app instance opens up to `max_connections` connections, and the server refuses
/// connections beyond its own `max_connections` (100 by default), of which
/// `superuser_reserved_connections` (3) are kept for administrators. With `n` instances
/// sharing a database, keep `n × max_connections` plus whatever else connects (the
/// application's own pool, migrations, backups, `psql` sessions) under the server's limit: 4
/// instances at the default 10 use 40 of 97. A request holds one connection for the length of
/// one store operation (one short transaction), not for the whole request; more connections
/// help only while operations wait for one (a `commerce.store` span much longer than its
/// statements). A request that cannot get a connection within `acquire_timeout` is
/// answered `500 server_error`, as is a statement cut by `statement_timeout`.
///
/// # Statement timeout
///
/// PostgreSQL's `statement_timeout` and `idle_in_transaction_session_timeout` are set on every
/// connection of the pool as startup parameters (no extra round trip). The statement timeout
/// bounds how long any statement of the store runs, waits for a row lock included, so a
/// request stuck behind a lock held elsewhere (a long transaction of the application, a
/// `psql` session left open) fails with a `500 server_error` instead of holding its
/// connection, and the locks it took itself, for as long as the other party does; its
/// transaction is rolled back and the connection is reused. The idle-in-transaction timeout
/// ends a session that sits inside a transaction between two statements for longer (the store
/// never does; it is a guard against a process that stops mid-transaction). `migrate` runs
/// without the statement timeout (a migration may rewrite a big table).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
#[serde(default = "PoolSettings::postgres", deny_unknown_fields)]
#[non_exhaustive]
pub struct PoolSettings {
    /// The most connections the pool opens.
    pub max_connections: u32,
    /// Connections the pool keeps open even when idle.
    pub min_connections: u32,
    /// How long an operation waits for a free connection before failing.
    #[serde(deserialize_with = "commerce_core::config::human::duration")]
    pub acquire_timeout: Duration,
    /// An idle connection above `min_connections` is closed after this long (`None`: never).
    #[serde(deserialize_with = "commerce_core::config::human::optional_duration")]
    pub idle_timeout: Option<Duration>,
    /// A connection is closed after this age, when it is next idle (`None`: never).
    #[serde(deserialize_with = "commerce_core::config::human::optional_duration")]
    pub max_lifetime: Option<Duration>,
    /// PostgreSQL: the longest any statement may run, waiting for locks included (`None`:
    /// the server's setting). SQLite ignores it.
    #[serde(deserialize_with = "commerce_core::config::human::optional_duration")]
    pub statement_timeout: Option<Duration>,
    /// PostgreSQL: a session idle inside a transaction for longer is ended by the server
    /// (`None`: the server's setting). SQLite ignores it.
    #[serde(deserialize_with = "commerce_core::config::human::optional_duration")]
    pub idle_in_transaction_timeout: Option<Duration>,
}

impl PoolSettings {
    /// The defaults on PostgreSQL (the table above).
    pub fn postgres() -> Self {
        Self {
            max_connections: 10,
            min_connections: 0,
            acquire_timeout: Duration::from_secs(30),
            idle_timeout: Some(Duration::from_secs(600)),
            max_lifetime: Some(Duration::from_secs(1800)),
            statement_timeout: Some(Duration::from_secs(30)),
            idle_in_transaction_timeout: Some(Duration::from_secs(60)),
        }
    }

    /// The defaults on SQLite (the table above).
    pub fn sqlite() -> Self {
        Self {
            max_connections: 8,
            statement_timeout: None,
            idle_in_transaction_timeout: None,
            ..Self::postgres()
        }
    }

    /// Sets [`max_connections`](Self::max_connections).
    pub fn with_max_connections(mut self, max: u32) -> Self {
        self.max_connections = max;
        self
    }

    /// Sets [`min_connections`](Self::min_connections).
    pub fn with_min_connections(mut self, min: u32) -> Self {
        self.min_connections = min;
        self
    }

    /// Sets [`acquire_timeout`](Self::acquire_timeout).
    pub fn with_acquire_timeout(mut self, timeout: Duration) -> Self {
        self.acquire_timeout = timeout;
        self
    }

    /// Sets [`idle_timeout`](Self::idle_timeout).
    pub fn with_idle_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.idle_timeout = timeout;
        self
    }

    /// Sets [`max_lifetime`](Self::max_lifetime).
    pub fn with_max_lifetime(mut self, lifetime: Option<Duration>) -> Self {
        self.max_lifetime = lifetime;
        self
    }

    /// Sets [`statement_timeout`](Self::statement_timeout) (PostgreSQL).
    pub fn with_statement_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.statement_timeout = timeout;
        self
    }

    /// Sets [`idle_in_transaction_timeout`](Self::idle_in_transaction_timeout) (PostgreSQL).
    pub fn with_idle_in_transaction_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.idle_in_transaction_timeout = timeout;
        self
    }

    /// sqlx's pool options with these settings.
    pub(crate) fn pool_options<DB: sqlx::Database>(&self) -> sqlx::pool::PoolOptions<DB> {
        sqlx::pool::PoolOptions::new()
            .max_connections(self.max_connections)
            .min_connections(self.min_connections)
            .acquire_timeout(self.acquire_timeout)
            .idle_timeout(self.idle_timeout)
            .max_lifetime(self.max_lifetime)
    }

    /// The session parameters (PostgreSQL startup options) these settings ask for, in
    /// milliseconds.
    #[cfg(any(feature = "postgres", test))]
    pub(crate) fn session_parameters(&self) -> Vec<(&'static str, String)> {
        let millis = |d: Duration| format!("{}ms", d.as_millis().max(1));
        let mut parameters = Vec::new();
        if let Some(timeout) = self.statement_timeout {
            parameters.push(("statement_timeout", millis(timeout)));
        }
        if let Some(timeout) = self.idle_in_transaction_timeout {
            parameters.push(("idle_in_transaction_session_timeout", millis(timeout)));
        }
        parameters
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_parameters_are_milliseconds() {
        let settings = PoolSettings::postgres()
            .with_statement_timeout(Some(Duration::from_millis(250)))
            .with_idle_in_transaction_timeout(None);
        assert_eq!(
            settings.session_parameters(),
            vec![("statement_timeout", "250ms".to_owned())]
        );
        assert!(PoolSettings::sqlite().session_parameters().is_empty());
        assert_eq!(PoolSettings::sqlite().max_connections, 8);
        assert_eq!(PoolSettings::postgres().max_connections, 10);
    }

    #[test]
    fn settings_read_from_json_keep_the_postgres_defaults() {
        let read = |json: &str| {
            serde_json::from_str::<PoolSettings>(json).map_err(|error| error.to_string())
        };
        assert_eq!(read("{}").unwrap(), PoolSettings::postgres());
        let settings = read(
            r#"{"max_connections": 4, "idle_timeout": "none", "statement_timeout": "1m 30s"}"#,
        )
        .unwrap();
        let expected = PoolSettings::postgres()
            .with_max_connections(4)
            .with_idle_timeout(None)
            .with_statement_timeout(Some(Duration::from_secs(90)));
        assert_eq!(settings, expected);
        for (json, says) in [
            (r#"{"max_conections": 4}"#, "max_conections"),
            (r#"{"acquire_timeout": 5}"#, "such as"),
            (r#"{"acquire_timeout": "none"}"#, "is not a duration"),
        ] {
            let error = read(json).unwrap_err();
            assert!(error.contains(says), "{json}: {error}");
        }
    }
}
