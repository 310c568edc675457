//! The harness: a store handed to one case, with its clean-up, and the macro.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::store::*;

/// A clean-up step run after a case (e.g. dropping the test's schema).
pub type Cleanup = Pin<Box<dyn Future<Output = ()> + Send>>;

/// A store handed to one test, with an optional clean-up step.
#[non_exhaustive]
pub struct TestStore {
    /// The store under test.
    pub store: Arc<dyn Store>,
    /// Run after the case returns (not after a panic).
    pub cleanup: Option<Cleanup>,
}

impl TestStore {
    /// A store without clean-up.
    pub fn new(store: Arc<dyn Store>) -> Self {
        Self {
            store,
            cleanup: None,
        }
    }

    /// A store with a clean-up step.
    pub fn with_cleanup(
        store: Arc<dyn Store>,
        cleanup: impl Future<Output = ()> + Send + 'static,
    ) -> Self {
        Self {
            store,
            cleanup: Some(Box::pin(cleanup)),
        }
    }
}

/// What a conformance factory may return; `None` skips the test.
pub trait IntoTestStore {
    /// Converts into the store to test, or `None` to skip.
    fn into_test_store(self) -> Option<TestStore>;
}

impl IntoTestStore for TestStore {
    fn into_test_store(self) -> Option<TestStore> {
        Some(self)
    }
}

impl IntoTestStore for Arc<dyn Store> {
    fn into_test_store(self) -> Option<TestStore> {
        Some(TestStore::new(self))
    }
}

impl<T: IntoTestStore> IntoTestStore for Option<T> {
    fn into_test_store(self) -> Option<TestStore> {
        self.and_then(IntoTestStore::into_test_store)
    }
}

/// Runs one `&dyn Store` case on the factory's store (used by the macro).
#[doc(hidden)]
pub async fn run_case<F, Fut>(store: impl IntoTestStore, case: F)
where
    F: FnOnce(Arc<dyn Store>) -> Fut,
    Fut: Future<Output = ()>,
{
    let Some(test) = store.into_test_store() else {
        return;
    };
    case(test.store.clone()).await;
    if let Some(cleanup) = test.cleanup {
        cleanup.await;
    }
}

/// Expands to one `#[tokio::test(flavor = "multi_thread", worker_threads = 4)]` per
/// case of [`STORE_CASES`](crate::testing::store_cases::STORE_CASES), each calling `$factory`
/// (an expression producing a future whose output implements
/// [`IntoTestStore`](crate::testing::store_cases::IntoTestStore)) for a fresh store.
///
/// Outer attributes written before the factory are put on every generated test, e.g. to report
/// the tests as ignored (not passed) when their database is not configured:
/// `store_conformance_tests!(#[cfg_attr(not(db_tests), ignore = "needs DB_URL")] fresh_store())`.
///
/// The test crate needs `tokio` (features `macros`, `rt-multi-thread`) as a dev-dependency.
#[macro_export]
macro_rules! store_conformance_tests {
    (@ref $attrs:tt $factory:expr; $($case:ident),+ $(,)?) => {
        $(
            $crate::store_conformance_tests!(@one_ref $attrs $factory; $case);
        )+
    };
    (@arc $attrs:tt $factory:expr; $($case:ident),+ $(,)?) => {
        $(
            $crate::store_conformance_tests!(@one_arc $attrs $factory; $case);
        )+
    };
    (@one_ref [$(#[$attr:meta])*] $factory:expr; $case:ident) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $case() {
            $crate::testing::store_cases::run_case($factory.await, |store| async move {
                $crate::testing::store_cases::$case(&*store).await
            })
            .await;
        }
    };
    (@one_arc [$(#[$attr:meta])*] $factory:expr; $case:ident) => {
        $(#[$attr])*
        #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
        async fn $case() {
            $crate::testing::store_cases::run_case($factory.await, |store| async move {
                $crate::testing::store_cases::$case(store).await
            })
            .await;
        }
    };
    (@attrs $attrs:tt $factory:expr) => {
        $crate::__with_store_cases!(store_conformance_tests @expand $attrs $factory;);
    };
    (@expand $attrs:tt $factory:expr; @list ref [$($ref_case:ident),+ $(,)?] arc [$($arc_case:ident),+ $(,)?]) => {
        $crate::store_conformance_tests!(@ref $attrs $factory; $($ref_case),+);
        $crate::store_conformance_tests!(@arc $attrs $factory; $($arc_case),+);
    };
    ($($input:tt)+) => {
        $crate::__gather_attrs!([$crate::store_conformance_tests] [] $($input)+);
    };
}
