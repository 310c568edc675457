//! The rules of webhook deliveries: when an attempt's outcome retries, fails or disables its
//! endpoint ([`AttemptResult::decide`], [`RETRY_SCHEDULE`], [`FAILING_FOR`]), and an
//! endpoint's circuit breaker ([`Breaker::after`], [`BREAKER_THRESHOLD`]). The records
//! ([`AttemptResult`], [`AttemptOutcome`], [`Breaker`]) are in [`model`](crate::model); every
//! store applies these rules when it records an attempt.

use chrono::{DateTime, Utc};

use crate::model::{
    AttemptOutcome, AttemptResult, Breaker, Delivery, DeliveryStatus, DisabledReason,
};

/// The waits before the 2nd to the 8th attempt: 5 s, 5 min, 30 min, 2 h, 5 h, 10 h, 10 h.
pub const RETRY_SCHEDULE: [chrono::TimeDelta; 7] = [
    chrono::TimeDelta::seconds(5),
    chrono::TimeDelta::minutes(5),
    chrono::TimeDelta::minutes(30),
    chrono::TimeDelta::hours(2),
    chrono::TimeDelta::hours(5),
    chrono::TimeDelta::hours(10),
    chrono::TimeDelta::hours(10),
];

/// An endpoint whose every attempt failed for this long is disabled (`failing`).
pub const FAILING_FOR: chrono::TimeDelta = chrono::TimeDelta::days(5);

impl AttemptResult {
    /// The one rule of retries: a 2xx is delivered (and ends the endpoint's failing streak);
    /// a 410 fails the delivery and disables the endpoint (`gone`); anything else is retried
    /// after [`RETRY_SCHEDULE`] (the `attempts`-th wait, `attempts` counting this one), then
    /// failed; an endpoint failing since [`FAILING_FOR`] is disabled (`failing`).
    pub fn decide(
        self,
        attempts: u32,
        now: DateTime<Utc>,
        failing_since: Option<DateTime<Utc>>,
    ) -> AttemptOutcome {
        let (status_code, error) = match &self {
            AttemptResult::Answered(code) => (Some(*code), None),
            AttemptResult::NoAnswer(reason) | AttemptResult::Unreachable(reason) => {
                (None, Some(reason.clone()))
            }
        };
        let unreachable = matches!(self, AttemptResult::Unreachable(_));
        let delivered = matches!(status_code, Some(200..=299));
        let gone = status_code == Some(410);
        let error = error
            .or_else(|| (!delivered).then(|| format!("HTTP {}", status_code.unwrap_or_default())));
        let failing_since = if delivered {
            None
        } else {
            Some(failing_since.unwrap_or(now))
        };
        let retry_after = RETRY_SCHEDULE.get((attempts as usize).wrapping_sub(1));
        let (status, next_attempt_at) = match (delivered, gone, retry_after) {
            (true, _, _) => (DeliveryStatus::Delivered, None),
            (false, false, Some(wait)) => (DeliveryStatus::Pending, Some(now + *wait)),
            _ => (DeliveryStatus::Failed, None),
        };
        let disable = if gone {
            Some(DisabledReason::Gone)
        } else if failing_since.is_some_and(|since| now - since >= FAILING_FOR) {
            Some(DisabledReason::Failing)
        } else {
            None
        };
        AttemptOutcome {
            status,
            next_attempt_at,
            attempted_at: now,
            status_code,
            error,
            failing_since,
            disable,
            unreachable,
        }
    }
}

/// Consecutive unreachable attempts ([`AttemptResult::Unreachable`]) that open an endpoint's
/// [`Breaker`].
pub const BREAKER_THRESHOLD: u32 = 5;

impl Breaker {
    /// Closed, no failures: a new endpoint's, and any endpoint's after a success.
    pub const CLOSED: Breaker = Breaker {
        failures: 0,
        open_until: None,
    };

    /// Whether it is open at `now`: the endpoint's deliveries wait.
    pub fn is_open(&self, now: DateTime<Utc>) -> bool {
        self.open_until.is_some_and(|until| now < until)
    }

    /// The breaker after an attempt: a success closes it; another answer (an HTTP error)
    /// ends the streak of unreachable attempts, an open breaker staying open until its time;
    /// an unreachable attempt made while it is closed counts, and the
    /// [`BREAKER_THRESHOLD`]-th and each one after it opens it for the next wait of
    /// [`RETRY_SCHEDULE`]. Attempts that finish while it is open (sent before it opened)
    /// change nothing.
    pub fn after(self, outcome: &AttemptOutcome) -> Breaker {
        let now = outcome.attempted_at;
        if outcome.status == DeliveryStatus::Delivered {
            return Breaker::CLOSED;
        }
        if !outcome.unreachable {
            return Breaker {
                failures: 0,
                ..self
            };
        }
        if self.is_open(now) {
            return self;
        }
        let failures = self.failures.saturating_add(1);
        let open_until = failures.checked_sub(BREAKER_THRESHOLD).map(|opened| {
            let last = RETRY_SCHEDULE.len() - 1;
            now + RETRY_SCHEDULE[(opened as usize).min(last)]
        });
        Breaker {
            failures,
            open_until,
        }
    }
}

impl Delivery {
    /// Whether `self` must wait for `earlier`: a pending delivery of the same order to the
    /// same endpoint created before it (one order's events reach an endpoint in order).
    pub fn waits_for(&self, earlier: &Delivery) -> bool {
        self.order_id.is_some()
            && earlier.id < self.id
            && earlier.webhook_id == self.webhook_id
            && earlier.order_id == self.order_id
            && earlier.status == DeliveryStatus::Pending
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn at() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 1, 10, 0, 0).unwrap()
    }

    #[test]
    fn the_retry_schedule_then_failed() {
        let mut waits = Vec::new();
        for attempt in 1..=8 {
            let outcome = AttemptResult::Answered(500).decide(attempt, at(), None);
            match outcome.next_attempt_at {
                Some(next) => waits.push(next - at()),
                None => assert_eq!(outcome.status, DeliveryStatus::Failed),
            }
        }
        assert_eq!(waits, RETRY_SCHEDULE.to_vec());
    }

    #[test]
    fn success_gone_and_failing() {
        let ok = AttemptResult::Answered(204).decide(3, at(), Some(at()));
        assert_eq!(ok.status, DeliveryStatus::Delivered);
        assert_eq!(ok.failing_since, None);
        let gone = AttemptResult::Answered(410).decide(1, at(), None);
        assert_eq!(
            (gone.status, gone.disable),
            (DeliveryStatus::Failed, Some(DisabledReason::Gone))
        );
        let long =
            AttemptResult::NoAnswer("refused".into()).decide(2, at(), Some(at() - FAILING_FOR));
        assert_eq!(long.disable, Some(DisabledReason::Failing));
        assert_eq!(long.error.as_deref(), Some("refused"));
        let redirect = AttemptResult::Answered(301).decide(1, at(), None);
        assert_eq!(redirect.status, DeliveryStatus::Pending);
        assert_eq!(redirect.error.as_deref(), Some("HTTP 301"));
        assert!(!redirect.unreachable && !long.unreachable);
        let timeout = AttemptResult::Unreachable("timeout".into()).decide(1, at(), None);
        assert_eq!(
            (
                timeout.status,
                timeout.error.as_deref(),
                timeout.unreachable
            ),
            (DeliveryStatus::Pending, Some("timeout"), true)
        );
    }

    fn unreachable_at(seconds: i64) -> AttemptOutcome {
        let now = at() + chrono::TimeDelta::seconds(seconds);
        AttemptResult::Unreachable("timeout".into()).decide(1, now, None)
    }

    #[test]
    fn the_breaker_opens_after_five_unreachable_attempts_and_a_success_closes_it() {
        let mut breaker = Breaker::CLOSED;
        for n in 1..BREAKER_THRESHOLD {
            breaker = breaker.after(&unreachable_at(i64::from(n)));
            assert_eq!(breaker.open_until, None, "closed after {n}");
        }
        breaker = breaker.after(&unreachable_at(5));
        let first = at() + chrono::TimeDelta::seconds(5) + RETRY_SCHEDULE[0];
        assert_eq!(breaker.open_until, Some(first));
        assert!(breaker.is_open(first - chrono::TimeDelta::milliseconds(1)));
        assert!(!breaker.is_open(first));
        // Attempts in flight when it opened change nothing.
        assert_eq!(breaker.after(&unreachable_at(6)), breaker);
        // The next unreachable attempt after the wait opens it for the next wait.
        let again = breaker.after(&unreachable_at(20));
        assert_eq!(
            again.open_until,
            Some(at() + chrono::TimeDelta::seconds(20) + RETRY_SCHEDULE[1])
        );
        // An HTTP error answer ends the streak but does not close it; a success does.
        let answered = AttemptResult::Answered(500).decide(1, at(), None);
        let kept = again.after(&answered);
        assert_eq!((kept.failures, kept.open_until), (0, again.open_until));
        let ok = AttemptResult::Answered(200).decide(1, at(), None);
        assert_eq!(again.after(&ok), Breaker::CLOSED);
        // The wait stops growing at the schedule's last.
        let mut long = Breaker {
            failures: 100,
            open_until: None,
        };
        long = long.after(&unreachable_at(0));
        assert_eq!(long.open_until, Some(at() + RETRY_SCHEDULE[6]));
    }
}
