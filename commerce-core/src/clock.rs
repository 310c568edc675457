//! The injectable clock: every reading of "now" in the engine goes through [`Clock`].

use std::sync::{Arc, Mutex};

use chrono::{DateTime, Duration, Utc};

/// A source of the current time.
pub trait Clock: Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> DateTime<Utc>;
}

/// The system clock.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to; for tests and simulations.
#[derive(Debug, Clone)]
pub struct ManualClock {
    now: Arc<Mutex<DateTime<Utc>>>,
}

impl ManualClock {
    /// A clock stopped at `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            now: Arc::new(Mutex::new(start)),
        }
    }

    /// Moves the clock to `instant`.
    pub fn set(&self, instant: DateTime<Utc>) {
        *self.now.lock().unwrap_or_else(|e| e.into_inner()) = instant;
    }

    /// The instant the clock shows.
    pub fn now_utc(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let mut now = self.now.lock().unwrap_or_else(|e| e.into_inner());
        *now += by;
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.now.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A clock ahead of another by an offset that only grows: the sandbox's test clock
/// (`POST /api/v1/sandbox/clock`, [`Config::test_mode`](crate::config::Config::test_mode)). It never
/// shows an instant earlier than one it showed before, even if the clock beneath steps back.
pub struct OffsetClock {
    base: Arc<dyn Clock>,
    state: Mutex<Offset>,
}

/// The offset and the latest instant shown.
struct Offset {
    ahead: Duration,
    shown: Option<DateTime<Utc>>,
}

impl std::fmt::Debug for OffsetClock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        f.debug_struct("OffsetClock")
            .field("ahead", &state.ahead)
            .finish_non_exhaustive()
    }
}

impl OffsetClock {
    /// `base`, not yet ahead.
    pub fn new(base: Arc<dyn Clock>) -> Self {
        Self {
            base,
            state: Mutex::new(Offset {
                ahead: Duration::zero(),
                shown: None,
            }),
        }
    }

    /// Moves the clock forward by `by` (a negative or zero `by` changes nothing) and returns
    /// the instant it shows then. A step that would take the clock more than `most` ahead of
    /// the clock beneath, all steps together, moves nothing: `Err` with how far it may still
    /// move.
    pub fn advance(&self, by: Duration, most: Duration) -> Result<DateTime<Utc>, Duration> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if by > Duration::zero() {
            match state.ahead.checked_add(&by).filter(|ahead| *ahead <= most) {
                Some(ahead) => state.ahead = ahead,
                None => return Err((most - state.ahead).max(Duration::zero())),
            }
        }
        Ok(Self::read(&self.base, &mut state))
    }

    /// How far ahead of the clock beneath it is.
    pub fn ahead(&self) -> Duration {
        self.state.lock().unwrap_or_else(|e| e.into_inner()).ahead
    }

    fn read(base: &Arc<dyn Clock>, state: &mut Offset) -> DateTime<Utc> {
        let base = base.now();
        // `advance` bounds the offset, so this holds for any clock beneath short of the
        // year 262,000; past it the clock shows the latest instant there is.
        let now = base
            .checked_add_signed(state.ahead)
            .unwrap_or(DateTime::<Utc>::MAX_UTC);
        let now = state.shown.map_or(now, |shown| now.max(shown));
        state.shown = Some(now);
        now
    }
}

impl Clock for OffsetClock {
    fn now(&self) -> DateTime<Utc> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        Self::read(&self.base, &mut state)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_offset_clock_only_moves_forward() {
        let start = Utc::now();
        let base = ManualClock::new(start);
        let clock = OffsetClock::new(Arc::new(base.clone()));
        assert_eq!(clock.now(), start);
        let most = Duration::days(20);
        assert_eq!(
            clock.advance(Duration::days(14), most),
            Ok(start + Duration::days(14))
        );
        assert_eq!(
            clock.advance(Duration::seconds(-5), most),
            Ok(start + Duration::days(14))
        );
        // Beyond the bound in total: nothing moves, and the room left is told.
        assert_eq!(
            clock.advance(Duration::days(7), most),
            Err(Duration::days(6))
        );
        assert_eq!(clock.advance(Duration::MAX, most), Err(Duration::days(6)));
        base.advance(Duration::seconds(3));
        assert_eq!(
            clock.now(),
            start + Duration::days(14) + Duration::seconds(3)
        );
        // The clock beneath steps back: the offset clock stays where it was.
        base.set(start);
        assert_eq!(
            clock.now(),
            start + Duration::days(14) + Duration::seconds(3)
        );
        assert_eq!(clock.ahead(), Duration::days(14));
    }
}
