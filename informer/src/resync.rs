//! Per-handler resync scheduling (client-go `tools/cache/shared_informer.go`:
//! `resyncCheckPeriod`, `determineResyncPeriod`, `sharedProcessor.shouldResync`): the informer's
//! resync check period, each handler's effective period, and which handlers are due at a given
//! instant.

use std::time::Duration;

use tokio::time::Instant;

/// Requested resync periods below this are raised to it.
pub(crate) const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// A handler's effective resync period: 0 when it asked for none or the informer does not resync
/// at all, otherwise at least the informer's check period.
pub(crate) fn determine_resync_period(desired: Duration, check_period: Duration) -> Duration {
    if desired.is_zero() {
        return Duration::ZERO;
    }
    if check_period.is_zero() {
        tracing::warn!(
            ?desired,
            "the informer does not resync, so the requested handler resync period is ignored"
        );
        return Duration::ZERO;
    }
    desired.max(check_period)
}

/// The outcome of registering a handler with a requested resync period.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct ResyncDecision {
    /// The period the handler asked for, after the minimum/started adjustments.
    pub requested: Duration,
    /// The informer's (possibly lowered) check period.
    pub check_period: Duration,
    /// True when the check period was lowered and existing handlers must be recomputed.
    pub check_period_changed: bool,
}

/// Applies client-go's registration rules: a positive period below 1 s becomes 1 s; a period below
/// the check period lowers the check period before start, and is raised to it after start.
pub(crate) fn register_resync_period(
    requested: Duration,
    check_period: Duration,
    started: bool,
) -> ResyncDecision {
    let mut requested = requested;
    let mut check = check_period;
    let mut changed = false;
    if !requested.is_zero() {
        requested = requested.max(MINIMUM_RESYNC_PERIOD);
        if requested < check {
            if started {
                tracing::warn!(
                    ?requested,
                    ?check,
                    "resync period is smaller than the informer's check period and the informer has already started; raising it"
                );
                requested = check;
            } else {
                check = requested;
                changed = true;
            }
        }
    }
    ResyncDecision {
        requested,
        check_period: check,
        check_period_changed: changed,
    }
}

/// One handler's resync state.
#[derive(Clone, Debug)]
pub(crate) struct ResyncSchedule {
    /// Period requested at registration (after adjustments).
    pub requested: Duration,
    /// Effective period (0 = never).
    pub period: Duration,
    /// When the next resync is due.
    pub next: Instant,
    /// Whether the handler receives sync notifications right now.
    pub syncing: bool,
}

impl ResyncSchedule {
    /// A schedule starting at `now`.
    pub(crate) fn new(requested: Duration, check_period: Duration, now: Instant) -> Self {
        let period = determine_resync_period(requested, check_period);
        Self {
            requested,
            period,
            next: now + period,
            syncing: false,
        }
    }

    /// Recomputes the effective period after the informer's check period changed.
    pub(crate) fn set_check_period(&mut self, check_period: Duration) {
        self.period = determine_resync_period(self.requested, check_period);
    }

    /// Marks the handler as syncing when due (and schedules the next resync); returns whether it
    /// is syncing now (client-go `shouldResync` for one listener).
    pub(crate) fn check(&mut self, now: Instant) -> bool {
        self.syncing = false;
        if !self.period.is_zero() && now >= self.next {
            self.syncing = true;
            self.next = now + self.period;
        }
        self.syncing
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const S: Duration = Duration::from_secs(1);

    /// TestResyncCheckPeriod: default 12 h; handlers with 0, 1 min, 55 s, 5 s registered before
    /// start lower the check period 12 h → 1 min → 55 s → 5 s; the handlers keep 0, 1 min, 55 s, 5 s.
    #[test]
    fn resync_check_period() {
        let now = Instant::now();
        let mut check = Duration::from_secs(12 * 3600);
        let mut listeners: Vec<ResyncSchedule> = Vec::new();
        let mut checks = Vec::new();
        for requested in [Duration::ZERO, 60 * S, 55 * S, 5 * S] {
            let d = register_resync_period(requested, check, false);
            check = d.check_period;
            if d.check_period_changed {
                for l in &mut listeners {
                    l.set_check_period(check);
                }
            }
            listeners.push(ResyncSchedule::new(d.requested, check, now));
            checks.push(check);
        }
        assert_eq!(checks, [12 * 3600 * S, 60 * S, 55 * S, 5 * S]);
        let periods: Vec<Duration> = listeners.iter().map(|l| l.period).collect();
        assert_eq!(periods, [Duration::ZERO, 60 * S, 55 * S, 5 * S]);
    }

    #[test]
    fn after_start_a_smaller_period_is_raised_and_tiny_ones_become_one_second() {
        let d = register_resync_period(2 * S, 10 * S, true);
        assert_eq!(
            (d.requested, d.check_period, d.check_period_changed),
            (10 * S, 10 * S, false)
        );
        let d = register_resync_period(Duration::from_millis(10), 10 * S, false);
        assert_eq!((d.requested, d.check_period), (S, S));
        let d = register_resync_period(Duration::ZERO, 10 * S, false);
        assert_eq!((d.requested, d.check_period), (Duration::ZERO, 10 * S));
    }

    #[test]
    fn no_resync_when_the_informer_does_not_resync() {
        assert_eq!(
            determine_resync_period(5 * S, Duration::ZERO),
            Duration::ZERO
        );
        assert_eq!(determine_resync_period(5 * S, 10 * S), 10 * S);
        assert_eq!(determine_resync_period(20 * S, 10 * S), 20 * S);
    }

    /// TestListenerResyncPeriods: informer resync 1 s; listeners 0 / 2 s / 3 s; at +2 s only the
    /// second is syncing, at +3 s only the third.
    #[test]
    fn listener_resync_periods() {
        let t0 = Instant::now();
        let check = S;
        let mut ls: Vec<ResyncSchedule> = [Duration::ZERO, 2 * S, 3 * S]
            .into_iter()
            .map(|p| {
                ResyncSchedule::new(register_resync_period(p, check, false).requested, check, t0)
            })
            .collect();
        let mut due = |t: Instant| -> Vec<bool> { ls.iter_mut().map(|l| l.check(t)).collect() };
        assert_eq!(due(t0 + S), [false, false, false]);
        assert_eq!(due(t0 + 2 * S), [false, true, false]);
        assert_eq!(due(t0 + 3 * S), [false, false, true]);
        assert_eq!(due(t0 + 4 * S), [false, true, false]);
        assert_eq!(due(t0 + 6 * S), [false, true, true]);
    }
}
