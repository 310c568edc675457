//! Conformance suites for [`Store`](crate::store::Store) implementations (feature `testing`).
//!
//! Each case is a `pub async fn` over a store; a store crate runs every case on its own store
//! with the macros exported here, one `#[tokio::test]` per case.

pub mod arbitrary;
pub mod caches;
pub mod cancellation;
pub mod crowd;
pub mod fairness;
pub mod feed;
pub mod http;
pub mod laws;
pub mod stalled;
pub mod store_cases;
pub mod wallet;
pub mod wire;

/// The dispatch table and the OpenAPI document, for the crate's own contract test
/// (`tests/openapi.rs`): crate-private, not part of the API.
#[doc(hidden)]
pub mod dispatch {
    pub use crate::web::openapi::{document, documented, reference_page};
    pub use crate::web::routes::{API_PREFIX, Billing, Endpoint, ROUTES, Route, resolve, route_of};
}

/// An id that no record has: the id a test already holds, moved far past any the test made
/// (implemented by every id type of [`model`](crate::model)).
pub trait Absent {
    /// The same kind of id, one million further.
    fn absent(self) -> Self;
}

/// [`Absent`] for each id type of [`model`](crate::model) (the list they are declared from).
macro_rules! absent_ids {
    ($($(#[$meta:meta])* $name:ident,)*) => {
        $(
            impl Absent for crate::model::$name {
                fn absent(self) -> Self {
                    Self::new(self.get() + 1_000_000)
                }
            }
        )*
    };
}
crate::__with_id_types!(absent_ids);

/// The attribute gathering of the conformance macros ([`store_conformance_tests!`](crate::store_conformance_tests),
/// [`http_conformance_tests!`](crate::http_conformance_tests),
/// [`cancellation_tests!`](crate::cancellation_tests)): the outer attributes written before
/// their one expression are gathered one by one (an expression may itself start with `#`),
/// then `$callback!(@attrs [attributes] expression)` expands the tests.
#[doc(hidden)]
#[macro_export]
macro_rules! __gather_attrs {
    ([$($callback:tt)*] [$($attrs:tt)*] #[$attr:meta] $($rest:tt)+) => {
        $crate::__gather_attrs!([$($callback)*] [$($attrs)* #[$attr]] $($rest)+);
    };
    ([$($callback:tt)*] $attrs:tt $arg:expr) => {
        $($callback)*!(@attrs $attrs $arg);
    };
}
