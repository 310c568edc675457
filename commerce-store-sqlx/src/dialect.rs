//! What differs between SQLite and PostgreSQL, and the typed query helpers the store's generic
//! code is written with.
//!
//! sqlx's own query API needs bounds such as `i64: Encode<'_, DB>` and
//! `&mut DB::Connection: Executor<'_>` on every generic function, because bounds of a trait on
//! other types than `Self` are not implied (rust-lang/rust#20671). [`Dialect`] avoids that:
//! binding a value ([`Bind`]), reading a column ([`Get`]) and running a statement are methods
//! that each backend implements once, and bounds on `Self` (supertraits) are implied. The
//! store's code is then `async fn x<DB: Dialect>(...)` with no further bounds, and reads like
//! sqlx: `query::<DB>(sql).bind(id).fetch_optional(&mut *c)`.

use std::future::Future;
use std::marker::PhantomData;

use commerce_core::model::StatementEntryId;
use commerce_core::model::{
    AccountId, CategoryId, DeliveryId, GovernorateId, KeyId, LineId, OrderId, ProductId, QuoteId,
    ShippingOptionId, StockAdjustmentId, VariantId, WarrantyId, WebhookId, WithdrawalId,
};
use sqlx::pool::PoolConnection;
use sqlx::query::Query;
use sqlx::query_builder::Separated;
use sqlx::{Database, Pool, QueryBuilder};

/// A value of type `T` can be bound as a statement parameter.
pub(crate) trait Bind<T>: Database {
    /// `query.bind(value)`.
    fn bind(query: Query<'_, Self, Self::Arguments>, value: T) -> Query<'_, Self, Self::Arguments>;
    /// `builder.push_bind(value)`.
    fn push_bind(builder: &mut QueryBuilder<Self>, value: T);
    /// `separated.push_bind(value)` (a value of a `push_values` row).
    fn push_separated(separated: &mut Separated<'_, Self, &'static str>, value: T);
}

/// A column of type `T` can be read from a row.
pub(crate) trait Get<T>: Database {
    /// The column named `column`.
    fn get(row: &Self::Row, column: &str) -> Result<T, sqlx::Error>;
    /// The column at `index`.
    fn get_at(row: &Self::Row, index: usize) -> Result<T, sqlx::Error>;
    /// The column named `column`, looked for at `at` first: the column at `at` when it has that
    /// name (a string comparison), else the column found by name (a hash look-up), so that a
    /// statement whose columns are not in the expected order still decodes right.
    fn get_named_at(row: &Self::Row, at: usize, column: &str) -> Result<T, sqlx::Error>;
}

/// Where a statement runs: a connection (inside a transaction or not) or the pool.
pub(crate) enum On<'e, DB: Database> {
    /// One connection.
    Conn(&'e mut DB::Connection),
    /// Any connection of the pool.
    Pool(&'e Pool<DB>),
}

impl<'e, DB: Database> From<&'e mut PoolConnection<DB>> for On<'e, DB> {
    fn from(connection: &'e mut PoolConnection<DB>) -> Self {
        On::Conn(&mut **connection)
    }
}

impl<'e, DB: Database> From<&'e Pool<DB>> for On<'e, DB> {
    fn from(pool: &'e Pool<DB>) -> Self {
        On::Pool(pool)
    }
}

/// Declares [`Ids`] and implements it for every database that binds and decodes each id.
macro_rules! id_bounds {
    ($($(#[$doc:meta])* $id:ident),+ $(,)?) => {
        /// The id types of `commerce_core::model` bind and decode as the `BIGINT` they wrap
        /// (commerce-core's feature `sqlx`).
        pub(crate) trait Ids:
            Database $(+ Bind<$id> + Bind<Option<$id>> + Get<$id> + Get<Option<$id>>)+
        {
        }

        impl<DB> Ids for DB where
            DB: Database $(+ Bind<$id> + Bind<Option<$id>> + Get<$id> + Get<Option<$id>>)+
        {
        }
    };
}

commerce_core::__with_id_types!(id_bounds);

/// A database the store runs on: the SQL that differs, and sqlx's calls that need the
/// database's concrete types, implemented once per backend (`postgres.rs`, `sqlite.rs`).
pub(crate) trait Dialect:
    Run
    + sqlx::database::HasStatementCache
    + Ids
    + Bind<i64>
    + Bind<Option<i64>>
    + Bind<i32>
    + Bind<Option<i32>>
    + Bind<bool>
    + Bind<String>
    + Bind<Option<String>>
    + for<'a> Bind<&'a str>
    + for<'a> Bind<&'a String>
    + for<'a> Bind<&'a Option<String>>
    + Bind<Vec<u8>>
    + for<'a> Bind<&'a [u8]>
    + Get<i64>
    + Get<Option<i64>>
    + Get<i32>
    + Get<Option<i32>>
    + Get<bool>
    + Get<String>
    + Get<Option<String>>
    + Get<Vec<u8>>
    + Get<Option<Vec<u8>>>
{
    /// ` FOR NO KEY UPDATE` / empty: a row lock for a write that changes no key, so that
    /// another transaction's foreign key check on the row (`FOR KEY SHARE`, taken when it
    /// inserts a row that references it) does not wait for it.
    const FOR_NO_KEY_UPDATE: &'static str;
    /// The row-lock suffix of a `SELECT` that is followed by a write of the rows it read
    /// (`" FOR UPDATE"`; empty on SQLite, where a write transaction holds the database's
    /// single writer lock).
    const FOR_UPDATE: &'static str;
    /// The substring-position function (`strpos` / `instr`).
    const INSTR: &'static str;
    /// How a column is compared with the values of a subquery: the text before the
    /// subquery and the text after it (PostgreSQL: `= ANY(ARRAY(...))`, the values read first
    /// and looked up by the column's index, where `IN (...)` lets the planner walk a whole
    /// index in the page's order; SQLite: `IN (...)`).
    const ONE_OF_SELECT: (&'static str, &'static str);
    /// A column's text with ASCII letters lowered and nothing else changed, `{}` standing for
    /// the column (`lower` on SQLite, which lowers ASCII only; `translate` of `A`-`Z` on
    /// PostgreSQL, whose `lower` also folds other scripts): the account search's rule,
    /// `commerce_core::model::fold_case`.
    const FOLD_CASE: &'static str;
    /// What asks for a statement's plan (`EXPLAIN QUERY PLAN ` / `EXPLAIN `), and the column of
    /// its answer's rows that holds the plan's text.
    const EXPLAIN: (&'static str, usize);
    /// Whether a write of one statement still runs in a transaction (SQLite: its writes take
    /// the writer lock with `BEGIN IMMEDIATE`; PostgreSQL: one statement is atomic by itself).
    const SINGLE_STATEMENT_TX: bool;
    /// Whether a statement may carry writes in its `WITH` clause (PostgreSQL's data-modifying
    /// `WITH`; SQLite has none): a write that rides in another saves a round trip.
    const WRITES_IN_WITH: bool;
    /// Whether a prepared statement kept by the connection may be run with a generic plan, one
    /// made without the parameters' values (PostgreSQL, after five runs, when it costs no more
    /// than the custom ones; SQLite plans every run): see [`Q::planned_per_call`].
    const GENERIC_PLANS: bool;
    /// Rows a high-volume key's rate window is counted over (see `rate_slots`).
    const RATE_SLOTS: u32;
    /// The statement that begins a transaction that may write.
    const BEGIN_WRITE: &'static str;
    /// The statement that begins a consistent read-only snapshot.
    const BEGIN_READ: &'static str;
    /// A `SELECT` of one `BIGINT`, above 0 when the table named `$1` exists where the store's
    /// unqualified table names resolve (PostgreSQL: the `search_path`; SQLite: the database).
    const TABLE_EXISTS: &'static str;
    /// The statement a webhook claim runs first so that claims run one at a time, each in a
    /// snapshot taken after the one before it committed (PostgreSQL: a transaction-scoped
    /// advisory lock; none on SQLite, whose writer lock already does it).
    const SERIALIZE_CLAIMS: Option<&'static str>;
    /// The catalogue change feed's fence, an expression of one `BIGINT`: a read returns only
    /// the changes whose `txid` is below it (PostgreSQL: the xmin of the statement's snapshot,
    /// below which every transaction has ended; SQLite: none, the greatest `BIGINT`).
    const CHANGES_FENCE: &'static str;
    /// The feed's head as a read sees it, two `BIGINT` expressions (`txid, seq`) that may read
    /// `fence.x`: a position every change the read did not see comes after (PostgreSQL:
    /// `(fence, 0)`; SQLite: the greatest position taken).
    const CHANGES_HEAD: &'static str;
    /// Whether a row has a version every write replaces, which a read can compare with the
    /// one it kept (PostgreSQL: `xmin`, the transaction that wrote the row's current version;
    /// SQLite: none).
    const ROW_VERSIONS: bool;

    /// Pushes the test that the column before it is one of `ids`: ` = ANY($n)` with the ids
    /// as one array on PostgreSQL, ` IN ($n, $n+1, ...)` on SQLite. PostgreSQL plans a
    /// prepared statement with a list of separate parameters afresh at every execution (its
    /// generic plan never looks cheaper than one made for the values), and planning a page's
    /// lines took longer than reading them; with one array parameter it keeps one plan.
    fn push_one_of(q: &mut QueryBuilder<Self>, ids: &[i64]);
}

/// Runs statements: sqlx's calls, which need the database's concrete connection and
/// argument types (implemented by [`sqlx_calls!`] for each backend).
pub(crate) trait Run: Database {
    /// Runs a statement; the number of rows it changed.
    fn execute<'e, 'q: 'e>(
        on: On<'e, Self>,
        query: Query<'q, Self, Self::Arguments>,
    ) -> impl Future<Output = Result<u64, sqlx::Error>> + Send + 'e;

    /// Runs a statement; every row it returned.
    fn fetch_all<'e, 'q: 'e>(
        on: On<'e, Self>,
        query: Query<'q, Self, Self::Arguments>,
    ) -> impl Future<Output = Result<Vec<Self::Row>, sqlx::Error>> + Send + 'e;

    /// Runs a statement; its first row, if any.
    fn fetch_optional<'e, 'q: 'e>(
        on: On<'e, Self>,
        query: Query<'q, Self, Self::Arguments>,
    ) -> impl Future<Output = Result<Option<Self::Row>, sqlx::Error>> + Send + 'e;

    /// Runs statements without parameters (`BEGIN`, `COMMIT`).
    fn execute_raw<'e>(
        connection: &'e mut Self::Connection,
        sql: &'static str,
    ) -> impl Future<Output = Result<(), sqlx::Error>> + Send + 'e;
}

/// What a row decodes to.
pub(crate) trait FromDbRow<DB: Database> {
    /// The decoded value.
    type Output;
    /// Decodes one row.
    fn from_db_row(row: &DB::Row) -> Result<Self::Output, sqlx::Error>;
}

/// A row's first column as a `T` (`query_scalar`).
pub(crate) struct Scalar<T>(PhantomData<T>);

impl<DB: Get<T>, T> FromDbRow<DB> for Scalar<T> {
    type Output = T;
    fn from_db_row(row: &DB::Row) -> Result<T, sqlx::Error> {
        DB::get_at(row, 0)
    }
}

macro_rules! tuple_from_row {
    ($($t:ident $i:tt),+) => {
        impl<DB: Database $(+ Get<$t>)+, $($t),+> FromDbRow<DB> for ($($t,)+) {
            type Output = Self;
            fn from_db_row(row: &DB::Row) -> Result<Self, sqlx::Error> {
                Ok(($(<DB as Get<$t>>::get_at(row, $i)?,)+))
            }
        }
    };
}
tuple_from_row!(A 0, B 1);
tuple_from_row!(A 0, B 1, C 2);
tuple_from_row!(A 0, B 1, C 2, D 3);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5);
tuple_from_row!(A 0, B 1, C 2, D 3, E 4, F 5, G 6);

/// The column `name` of `row`, as the type the caller wants.
pub(crate) fn col<DB: Get<T>, T>(row: &DB::Row, name: &str) -> Result<T, sqlx::Error> {
    DB::get(row, name)
}

/// The column `name` of `row`, expected at `at` ([`Get::get_named_at`]).
pub(crate) fn col_at<DB: Get<T>, T>(
    row: &DB::Row,
    at: usize,
    name: &str,
) -> Result<T, sqlx::Error> {
    DB::get_named_at(row, at, name)
}

/// A statement with its parameters and what its rows decode to (`()`: rows are not read).
pub(crate) struct Q<'q, DB: Database, O> {
    query: Query<'q, DB, DB::Arguments>,
    out: PhantomData<fn() -> O>,
}

/// A statement whose result is the rows it changed.
pub(crate) fn query<DB: Dialect>(sql: impl sqlx::SqlSafeStr) -> Q<'static, DB, ()> {
    Q::of(sqlx::query(sql))
}

/// A statement whose rows decode to `O` (a row type or a tuple).
pub(crate) fn query_as<DB: Dialect, O: FromDbRow<DB>>(
    sql: impl sqlx::SqlSafeStr,
) -> Q<'static, DB, O> {
    Q::of(sqlx::query(sql))
}

/// A statement whose rows' first column is a `T`.
pub(crate) fn query_scalar<DB: Dialect + Get<T>, T>(
    sql: impl sqlx::SqlSafeStr,
) -> Q<'static, DB, Scalar<T>> {
    Q::of(sqlx::query(sql))
}

impl<'q, DB: Dialect, O> Q<'q, DB, O> {
    fn of(query: Query<'q, DB, DB::Arguments>) -> Self {
        Self {
            query,
            out: PhantomData,
        }
    }

    /// With `per_call`, the statement is planned for this call's values, never kept with a
    /// generic plan (where the backend has them, [`Dialect::GENERIC_PLANS`]). For a page
    /// filtered by a range over a parameter (`updated_at >= $2`): a generic plan guesses the
    /// range keeps a third of the rows and walks the newest-first index past all of them for
    /// a page the range's own index finds in a few rows (`GET /orders?updated_since=` took
    /// 0.7 s at a million orders on PostgreSQL, 0.4 ms planned per call).
    pub(crate) fn planned_per_call(self, per_call: bool) -> Self {
        Self::of(self.query.persistent(!(per_call && DB::GENERIC_PLANS)))
    }

    /// Binds the next parameter.
    pub(crate) fn bind<T>(self, value: T) -> Self
    where
        DB: Bind<T>,
    {
        Self::of(DB::bind(self.query, value))
    }

    /// Runs the statement; the rows it changed.
    pub(crate) async fn execute<'e>(self, on: impl Into<On<'e, DB>>) -> Result<Done, sqlx::Error>
    where
        'q: 'e,
    {
        let rows_affected = DB::execute(on.into(), self.query).await?;
        Ok(Done { rows_affected })
    }

    /// Every row, not decoded: for a caller that decodes some columns of a row only.
    pub(crate) async fn fetch_rows<'e>(
        self,
        on: impl Into<On<'e, DB>>,
    ) -> Result<Vec<DB::Row>, sqlx::Error>
    where
        'q: 'e,
    {
        DB::fetch_all(on.into(), self.query).await
    }
}

impl<'q, DB: Dialect, O: FromDbRow<DB>> Q<'q, DB, O> {
    /// Every row, decoded.
    pub(crate) async fn fetch_all<'e>(
        self,
        on: impl Into<On<'e, DB>>,
    ) -> Result<Vec<O::Output>, sqlx::Error>
    where
        'q: 'e,
    {
        let rows = DB::fetch_all(on.into(), self.query).await?;
        rows.iter().map(O::from_db_row).collect()
    }

    /// The first row, decoded, if any.
    pub(crate) async fn fetch_optional<'e>(
        self,
        on: impl Into<On<'e, DB>>,
    ) -> Result<Option<O::Output>, sqlx::Error>
    where
        'q: 'e,
    {
        let row = DB::fetch_optional(on.into(), self.query).await?;
        row.as_ref().map(O::from_db_row).transpose()
    }

    /// The first row, decoded; `RowNotFound` when there is none.
    pub(crate) async fn fetch_one<'e>(
        self,
        on: impl Into<On<'e, DB>>,
    ) -> Result<O::Output, sqlx::Error>
    where
        'q: 'e,
    {
        self.fetch_optional(on)
            .await?
            .ok_or(sqlx::Error::RowNotFound)
    }
}

/// What a statement that returns no rows did.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Done {
    rows_affected: u64,
}

impl Done {
    /// Rows inserted, updated or deleted.
    pub(crate) fn rows_affected(&self) -> u64 {
        self.rows_affected
    }
}

/// sqlx's `QueryBuilder` with parameters bound through the [`Dialect`].
pub(crate) trait Builder<DB: Dialect> {
    /// `push_bind`.
    fn push_arg<T>(&mut self, value: T) -> &mut Self
    where
        DB: Bind<T>;
    /// The statement built, its rows decoding to `O`.
    fn build_as<O: FromDbRow<DB>>(&mut self) -> Q<'_, DB, O>;
    /// The statement built, its rows' first column a `T`.
    fn build_scalar<T>(&mut self) -> Q<'_, DB, Scalar<T>>
    where
        DB: Get<T>;
    /// The statement built, its result the rows it changed.
    fn build_statement(&mut self) -> Q<'_, DB, ()>;
}

impl<DB: Dialect> Builder<DB> for QueryBuilder<DB> {
    fn push_arg<T>(&mut self, value: T) -> &mut Self
    where
        DB: Bind<T>,
    {
        DB::push_bind(self, value);
        self
    }

    fn build_as<O: FromDbRow<DB>>(&mut self) -> Q<'_, DB, O> {
        Q::of(self.build())
    }

    fn build_scalar<T>(&mut self) -> Q<'_, DB, Scalar<T>>
    where
        DB: Get<T>,
    {
        Q::of(self.build())
    }

    fn build_statement(&mut self) -> Q<'_, DB, ()> {
        Q::of(self.build())
    }
}

/// A row of `push_values`, its values bound through the [`Dialect`].
pub(crate) trait RowValues<DB: Dialect> {
    /// `push_bind`.
    fn push_arg<T>(&mut self, value: T) -> &mut Self
    where
        DB: Bind<T>;
}

impl<DB: Dialect> RowValues<DB> for Separated<'_, DB, &'static str> {
    fn push_arg<T>(&mut self, value: T) -> &mut Self
    where
        DB: Bind<T>,
    {
        DB::push_separated(self, value);
        self
    }
}

/// Implements [`Bind`] and [`Get`] for a backend (for every type sqlx encodes and decodes),
/// and [`Run`] with sqlx's own calls.
macro_rules! sqlx_calls {
    ($db:ty) => {
        impl<T> $crate::dialect::Bind<T> for $db
        where
            T: for<'t> sqlx::Encode<'t, $db> + sqlx::Type<$db>,
        {
            fn bind(
                query: sqlx::query::Query<'_, Self, <Self as sqlx::Database>::Arguments>,
                value: T,
            ) -> sqlx::query::Query<'_, Self, <Self as sqlx::Database>::Arguments> {
                query.bind(value)
            }

            fn push_bind(builder: &mut sqlx::QueryBuilder<Self>, value: T) {
                builder.push_bind(value);
            }

            fn push_separated(
                separated: &mut sqlx::query_builder::Separated<'_, Self, &'static str>,
                value: T,
            ) {
                separated.push_bind(value);
            }
        }

        impl<T> $crate::dialect::Get<T> for $db
        where
            T: for<'r> sqlx::Decode<'r, $db> + sqlx::Type<$db>,
        {
            fn get(row: &<Self as sqlx::Database>::Row, column: &str) -> Result<T, sqlx::Error> {
                sqlx::Row::try_get(row, column)
            }

            fn get_named_at(
                row: &<Self as sqlx::Database>::Row,
                at: usize,
                column: &str,
            ) -> Result<T, sqlx::Error> {
                use sqlx::{Column, Row};
                match row.columns().get(at) {
                    Some(found) if found.name() == column => row.try_get(at),
                    _ => row.try_get(column),
                }
            }

            fn get_at(row: &<Self as sqlx::Database>::Row, index: usize) -> Result<T, sqlx::Error> {
                sqlx::Row::try_get(row, index)
            }
        }

        impl $crate::dialect::Run for $db {
            async fn execute<'e, 'q: 'e>(
                on: $crate::dialect::On<'e, Self>,
                query: sqlx::query::Query<'q, Self, <Self as sqlx::Database>::Arguments>,
            ) -> Result<u64, sqlx::Error> {
                let done = match on {
                    $crate::dialect::On::Conn(c) => query.execute(c).await?,
                    $crate::dialect::On::Pool(p) => query.execute(p).await?,
                };
                Ok(done.rows_affected())
            }

            async fn fetch_all<'e, 'q: 'e>(
                on: $crate::dialect::On<'e, Self>,
                query: sqlx::query::Query<'q, Self, <Self as sqlx::Database>::Arguments>,
            ) -> Result<Vec<<Self as sqlx::Database>::Row>, sqlx::Error> {
                match on {
                    $crate::dialect::On::Conn(c) => query.fetch_all(c).await,
                    $crate::dialect::On::Pool(p) => query.fetch_all(p).await,
                }
            }

            async fn fetch_optional<'e, 'q: 'e>(
                on: $crate::dialect::On<'e, Self>,
                query: sqlx::query::Query<'q, Self, <Self as sqlx::Database>::Arguments>,
            ) -> Result<Option<<Self as sqlx::Database>::Row>, sqlx::Error> {
                match on {
                    $crate::dialect::On::Conn(c) => query.fetch_optional(c).await,
                    $crate::dialect::On::Pool(p) => query.fetch_optional(p).await,
                }
            }

            async fn execute_raw(
                connection: &mut <Self as sqlx::Database>::Connection,
                sql: &'static str,
            ) -> Result<(), sqlx::Error> {
                sqlx::raw_sql(sql).execute(connection).await?;
                Ok(())
            }
        }
    };
}
pub(crate) use sqlx_calls;
