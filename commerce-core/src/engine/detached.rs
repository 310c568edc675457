//! [`detached`]: a phase of a request that runs to its end even if its caller drops it.

use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::{Context, Poll};

use futures_util::FutureExt;
use tracing::Span;

/// Runs `work` to its end even if the returned future is dropped: inside a tokio runtime it is
/// polled in place (no task spawned: the common case, where the caller waits for the answer,
/// costs one allocation), and a caller that drops it before the end hands the rest of the work
/// to the runtime it started in, which finishes it (a task spawned only for the requests cut
/// short). Outside a runtime it runs in place and a drop cuts it. `shutdown` answers when
/// `work` panics (each phase already turns its own panics into a 500).
///
/// `work` comes boxed ([`Box::pin`] on the caller's `async` block): a request's future is
/// several kilobytes, and each wrapper here (the span, the unwind guard) would otherwise move
/// it whole, as would every future that holds this one.
pub(super) async fn detached<T>(work: BoxedWork<T>, shutdown: impl FnOnce() -> T) -> T
where
    T: Send + 'static,
{
    let Ok(runtime) = tokio::runtime::Handle::try_current() else {
        return work.await;
    };
    let detached = Detached {
        work: Some(AssertUnwindSafe(crate::observe::in_span(work, Span::current())).catch_unwind()),
        runtime,
    };
    detached.await.unwrap_or_else(|_panic| shutdown())
}

/// A phase of a request, boxed once (see [`detached`]).
pub(super) type BoxedWork<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// The work of [`detached`], in its span, its panic caught.
type GuardedWork<T> = futures_util::future::CatchUnwind<
    AssertUnwindSafe<
        futures_util::future::Either<BoxedWork<T>, tracing::instrument::Instrumented<BoxedWork<T>>>,
    >,
>;

/// The future of [`detached`]: its work, until it is done.
struct Detached<T: Send + 'static> {
    work: Option<GuardedWork<T>>,
    runtime: tokio::runtime::Handle,
}

impl<T: Send + 'static> Future for Detached<T> {
    type Output = std::thread::Result<T>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Some(work) = self.work.as_mut() else {
            panic!("a detached request polled after its answer");
        };
        let answer = std::task::ready!(Pin::new(work).poll(cx));
        self.work = None;
        Poll::Ready(answer)
    }
}

impl<T: Send + 'static> Drop for Detached<T> {
    fn drop(&mut self) {
        if let Some(work) = self.work.take() {
            // Cut short: the runtime finishes the work (dropped at its shutdown); nobody reads
            // the answer.
            drop(self.runtime.spawn(work.map(drop)));
        }
    }
}
