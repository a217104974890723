//! The write fence: writes are allowed only while this process still holds its lease by its
//! own monotonic clock.
//!
//! A [`LeaderElector`](crate::LeaderElector) opens its fence after every successful acquire
//! or renewal, until the instant the attempt *started* plus the fence window (the lease
//! duration less a margin, [`LeaderElectionConfig::fence_window`](crate::LeaderElectionConfig::fence_window)).
//! Every write of the controllers passes [`WriteFence::check`] right before it is sent
//! (the [`FenceLayer`](crate::FenceLayer) of their API clients); once the window has passed,
//! the write is refused with [`Fenced`] and never reaches the API server, and the elector is
//! woken to re-check the lease at once.
//!
//! The clock is tokio's [`Instant`] (the OS's monotonic clock), which keeps counting while
//! the process is stopped (SIGSTOP, a cgroup freezer, a debugger): a process that resumes
//! after a pause longer than its window refuses its first write. `docs/reliability.md`
//! argues why, with the margin, no write of an old leader is received after another candidate
//! could have acquired the lease, and what is left.
//!
//! ```
//! use std::time::Duration;
//! use kcm_leaderelection::WriteFence;
//! use tokio::time::Instant;
//!
//! let fence = WriteFence::new("kube-system/kcm");
//! assert!(fence.check().is_err()); // closed until a lease is held
//! fence.open_until(Instant::now() + Duration::from_secs(12));
//! assert!(fence.check().is_ok());
//! fence.close();
//! let refused = fence.check().unwrap_err();
//! assert!(refused.to_string().starts_with("write fenced: "));
//! assert_eq!(fence.refused_total(), 2);
//! ```

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::sync::Notify;
use tokio::time::Instant;

/// How every [`Fenced`] error's message starts: log readers (and kcm's write log, which labels
/// such a write `result="fenced"`) can tell a refused write from one the server answered.
pub const FENCED_PREFIX: &str = "write fenced: ";

/// A write refused by the fence: it was not sent.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("write fenced: the lease {lease} may have passed to another holder ({why}); not sent")]
pub struct Fenced {
    /// `namespace/name` of the lease the fence guards.
    pub lease: String,
    /// Why the fence is closed, e.g. `last renewal started 6.1s ago, fence window 3.4s`.
    pub why: String,
}

/// Whether `err`, or any error in its source chain, is a [`Fenced`] refusal.
///
/// ```
/// use kcm_leaderelection::{Fenced, is_fenced};
///
/// let fenced = Fenced { lease: "kube-system/kcm".into(), why: "lease not held".into() };
/// let wrapped = kube::Error::Service(Box::new(fenced));
/// assert!(is_fenced(&wrapped));
/// assert!(!is_fenced(&std::io::Error::other("connection refused")));
/// ```
pub fn is_fenced(err: &(dyn std::error::Error + 'static)) -> bool {
    find_fenced(err).is_some()
}

/// The [`Fenced`] refusal in `err`'s source chain, also inside an I/O error (a connection of a
/// [`FencedConnector`](crate::FencedConnector) refuses with one; `io::Error::source` skips
/// the error it carries).
pub(crate) fn find_fenced<'a>(err: &'a (dyn std::error::Error + 'static)) -> Option<&'a Fenced> {
    let mut current = Some(err);
    while let Some(e) = current {
        if let Some(fenced) = e.downcast_ref::<Fenced>() {
            return Some(fenced);
        }
        if let Some(fenced) = e
            .downcast_ref::<std::io::Error>()
            .and_then(std::io::Error::get_ref)
            .and_then(|inner| inner.downcast_ref::<Fenced>())
        {
            return Some(fenced);
        }
        current = e.source();
    }
    None
}

/// A cheap, cloneable handle on one process's write fence (see the [crate documentation](crate)).
#[derive(Clone)]
pub struct WriteFence {
    inner: Arc<Inner>,
}

struct Inner {
    lease: String,
    /// The instant the nanosecond counters count from.
    origin: Instant,
    /// Nanoseconds after `origin` until which writes may be sent; 0: closed.
    open_until: AtomicU64,
    /// Nanoseconds after `origin` at which the fence was last opened (the renewal's start).
    opened_at: AtomicU64,
    refused: AtomicU64,
    /// Woken (one stored permit) when a write is refused.
    refusal: Notify,
}

impl fmt::Debug for WriteFence {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("WriteFence")
            .field("lease", &self.inner.lease)
            .field("open_for", &self.remaining())
            .field("refused", &self.refused_total())
            .finish()
    }
}

impl WriteFence {
    /// A closed fence guarding the lease `lease` (`namespace/name`, for messages).
    pub fn new(lease: impl Into<String>) -> Self {
        WriteFence {
            inner: Arc::new(Inner {
                lease: lease.into(),
                origin: Instant::now(),
                open_until: AtomicU64::new(0),
                opened_at: AtomicU64::new(0),
                refused: AtomicU64::new(0),
                refusal: Notify::new(),
            }),
        }
    }

    /// The lease this fence guards.
    pub fn lease(&self) -> &str {
        &self.inner.lease
    }

    fn nanos(&self, at: Instant) -> u64 {
        // +1: an instant equal to the origin still reads as open (0 means closed).
        u64::try_from(at.saturating_duration_since(self.inner.origin).as_nanos())
            .unwrap_or(u64::MAX)
            .saturating_add(1)
    }

    fn instant(&self, nanos: u64) -> Instant {
        self.inner.origin + Duration::from_nanos(nanos.saturating_sub(1))
    }

    /// Allows writes until `deadline`. The elector calls it after each successful acquire or
    /// renewal with the instant that attempt started plus the fence window.
    pub fn open_until(&self, deadline: Instant) {
        let now = self.nanos(Instant::now());
        self.inner.opened_at.store(now, Ordering::SeqCst);
        self.inner
            .open_until
            .store(self.nanos(deadline), Ordering::SeqCst);
    }

    /// Refuses every write from now on, until the next [`open_until`](Self::open_until).
    pub fn close(&self) {
        self.inner.open_until.store(0, Ordering::SeqCst);
    }

    /// The instant until which writes are allowed, if the fence was opened since it was last
    /// closed (it may already be in the past).
    pub fn deadline(&self) -> Option<Instant> {
        match self.inner.open_until.load(Ordering::SeqCst) {
            0 => None,
            n => Some(self.instant(n)),
        }
    }

    /// How long writes are still allowed (`None` when closed or past the deadline).
    pub fn remaining(&self) -> Option<Duration> {
        let deadline = self.deadline()?;
        let left = deadline.saturating_duration_since(Instant::now());
        (!left.is_zero()).then_some(left)
    }

    /// Whether a write sent now would pass.
    pub fn is_open(&self) -> bool {
        self.remaining().is_some()
    }

    /// Lets a write through if the fence is open; otherwise counts the refusal, wakes the
    /// elector waiting in [`refused`](Self::refused) and says why.
    pub fn check(&self) -> Result<(), Fenced> {
        let now = Instant::now();
        let until = self.inner.open_until.load(Ordering::SeqCst);
        if until != 0 && self.nanos(now) < until {
            return Ok(());
        }
        self.inner.refused.fetch_add(1, Ordering::Relaxed);
        self.inner.refusal.notify_one();
        let why = if until == 0 {
            "the lease is not held".to_string()
        } else {
            let opened = self.instant(self.inner.opened_at.load(Ordering::SeqCst));
            format!(
                "the fence closed {:.3}s ago, {:.3}s after the renewal that opened it",
                now.saturating_duration_since(self.instant(until))
                    .as_secs_f64(),
                self.instant(until)
                    .saturating_duration_since(opened)
                    .as_secs_f64(),
            )
        };
        Err(Fenced {
            lease: self.inner.lease.clone(),
            why,
        })
    }

    /// How many writes were refused since the fence was made.
    pub fn refused_total(&self) -> u64 {
        self.inner.refused.load(Ordering::Relaxed)
    }

    /// Resolves once a write was refused (at once if one was refused since the last call).
    pub async fn refused(&self) {
        self.inner.refusal.notified().await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn open_for_the_window_then_closed_by_time() {
        let fence = WriteFence::new("kube-system/kcm");
        assert!(!fence.is_open());
        assert_eq!(
            fence.check(),
            Err(Fenced {
                lease: "kube-system/kcm".into(),
                why: "the lease is not held".into()
            })
        );
        fence.open_until(Instant::now() + Duration::from_secs(3));
        assert!(fence.check().is_ok());
        tokio::time::advance(Duration::from_millis(2999)).await;
        assert!(fence.check().is_ok(), "one millisecond left");
        tokio::time::advance(Duration::from_millis(1)).await;
        let refused = fence.check().expect_err("deadline reached");
        assert_eq!(
            refused.why,
            "the fence closed 0.000s ago, 3.000s after the renewal that opened it"
        );
        assert_eq!(
            refused.to_string(),
            "write fenced: the lease kube-system/kcm may have passed to another holder \
             (the fence closed 0.000s ago, 3.000s after the renewal that opened it); not sent"
        );
        assert!(refused.to_string().starts_with(FENCED_PREFIX));
        assert_eq!(fence.refused_total(), 2);
    }

    #[tokio::test(start_paused = true)]
    async fn a_pause_longer_than_the_window_refuses_the_first_write_after_it() {
        let fence = WriteFence::new("ns/lease");
        fence.open_until(Instant::now() + Duration::from_secs(12));
        // The process is stopped: nothing runs, the monotonic clock goes on.
        tokio::time::advance(Duration::from_secs(20)).await;
        let refused = fence.check().expect_err("resumed past the window");
        assert!(refused.why.starts_with("the fence closed 8.000s ago"));
    }

    #[tokio::test(start_paused = true)]
    async fn renewal_extends_and_close_refuses_at_once() {
        let fence = WriteFence::new("ns/lease");
        fence.open_until(Instant::now() + Duration::from_secs(3));
        tokio::time::advance(Duration::from_secs(2)).await;
        fence.open_until(Instant::now() + Duration::from_secs(3));
        tokio::time::advance(Duration::from_secs(2)).await;
        assert!(fence.check().is_ok(), "renewed 2 s ago for 3 s");
        assert_eq!(fence.remaining(), Some(Duration::from_secs(1)));
        fence.close();
        assert!(fence.check().is_err());
        assert_eq!(fence.deadline(), None);
    }

    #[tokio::test(start_paused = true)]
    async fn a_refusal_wakes_a_waiter_even_if_it_waits_later() {
        let fence = WriteFence::new("ns/lease");
        assert!(fence.check().is_err());
        // The permit is stored: a waiter arriving after the refusal is woken at once.
        tokio::time::timeout(Duration::from_millis(1), fence.refused())
            .await
            .expect("woken by the stored refusal");
        // No refusal since: the next wait blocks.
        assert!(
            tokio::time::timeout(Duration::from_secs(1), fence.refused())
                .await
                .is_err()
        );
    }

    #[test]
    fn is_fenced_walks_the_source_chain() {
        #[derive(Debug, thiserror::Error)]
        #[error("sync failed: {0}")]
        struct Outer(#[source] kube::Error);
        let fenced = Fenced {
            lease: "a/b".into(),
            why: "x".into(),
        };
        assert!(is_fenced(&fenced));
        assert!(is_fenced(&Outer(kube::Error::Service(Box::new(
            fenced.clone()
        )))));
        assert!(!is_fenced(&Outer(kube::Error::Service("timed out".into()))));
    }
}
