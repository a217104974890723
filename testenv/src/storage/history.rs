//! The change history (the "watch window"): events after a revision for watches, compaction,
//! and the window's size. A resume from before the window is [`TooOld`] (410 upstream).

use std::sync::Arc;

use super::event::StoredEvent;
use super::store::{State, Store};
use crate::registry::StorageId;

/// A history position that is no longer available.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooOld {
    /// The oldest revision still available.
    pub oldest: u64,
}

impl State {
    /// Drop the oldest events beyond the window; the floor of resumable revisions moves up.
    pub(super) fn trim_history(&mut self) {
        while self.history.len() > self.window {
            if let Some(e) = self.history.pop_front() {
                self.compacted = e.rv;
            }
        }
    }
}

impl Store {
    /// Events of bucket `id` with a revision above `after`, and the current revision.
    pub fn events_since(
        &self,
        id: StorageId,
        after: u64,
    ) -> Result<(Vec<Arc<StoredEvent>>, u64), TooOld> {
        let g = self.state.read();
        if after < g.compacted {
            return Err(TooOld {
                oldest: g.compacted + 1,
            });
        }
        let skip = g.history.partition_point(|e| e.rv <= after);
        let evs = g
            .history
            .iter()
            .skip(skip)
            .filter(|e| e.storage == id)
            .cloned()
            .collect();
        Ok((evs, g.rv))
    }

    /// The oldest revision a watch may resume from.
    pub fn compacted_rv(&self) -> u64 {
        let g = self.state.read();
        g.compacted.max(g.resume_floor)
    }

    /// Whether a new watch may start after revision `after` ([`TooOld`] if it was compacted
    /// away or has left the window). Open watches only need [`Store::events_since`].
    pub fn check_resume(&self, after: u64) -> Result<(), TooOld> {
        let g = self.state.read();
        let floor = g.compacted.max(g.resume_floor);
        if after < floor {
            return Err(TooOld { oldest: floor + 1 });
        }
        Ok(())
    }

    /// A compaction, as etcd's: a watch started (or resumed) from any earlier revision and an
    /// exact read at one get 410, and every continue token issued so far expires. Watches open
    /// now keep receiving every change, as kube-apiserver's watch cache keeps serving its
    /// watchers; only one too slow for the history window loses its place.
    ///
    /// The revision moves on by one (a revision with no event of any served kind, as etcd's
    /// moves with the other data it holds), so that a resume from any revision a client has
    /// seen gets 410 and relists; a relist followed by a watch from its revision works.
    pub fn compact(&self) {
        let mut g = self.state.write();
        g.rv += 1;
        g.resume_floor = g.rv;
        g.continue_floor = g.rv;
    }

    /// Expire every continue token issued so far.
    pub fn expire_continue_tokens(&self) {
        let mut g = self.state.write();
        g.continue_floor = g.rv + 1;
    }

    /// Change the history window.
    pub fn set_window(&self, window: usize) {
        let mut g = self.state.write();
        g.window = window.max(1);
        g.trim_history();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::storage::event::EventType;
    use crate::storage::tests::pod;
    #[test]
    fn revisions_are_global_and_history_consecutive() {
        let s = Store::new(0, 100);
        s.write(|t| {
            t.put(StorageId::PODS, "a/x", pod("a", "x", 1));
            t.put(StorageId::DEPLOYMENTS, "a/d", pod("a", "d", 1));
            t.put(StorageId::PODS, "a/x", pod("a", "x", 2));
        });
        assert_eq!(s.rv(), 3);
        let (evs, rv) = s.events_since(StorageId::PODS, 0).expect("history");
        assert_eq!(rv, 3);
        assert_eq!(evs.iter().map(|e| e.rv).collect::<Vec<_>>(), vec![1, 3]);
        assert_eq!(evs[1].kind, EventType::Modified);
        let (evs, _) = s.events_since(StorageId::PODS, 1).expect("history");
        assert_eq!(evs.len(), 1);
    }

    #[test]
    fn window_compacts_and_too_old() {
        let s = Store::new(0, 2);
        s.write(|t| {
            for i in 0..5 {
                t.put(
                    StorageId::PODS,
                    &format!("a/p{i}"),
                    pod("a", &format!("p{i}"), i),
                );
            }
        });
        assert_eq!(
            s.events_since(StorageId::PODS, 1).err(),
            Some(TooOld { oldest: 4 })
        );
        assert!(s.events_since(StorageId::PODS, 3).is_ok());
        s.compact();
        assert_eq!(s.rv(), 6, "a compaction moves the revision on");
        // New watches from any revision seen before the compaction are refused.
        assert_eq!(s.check_resume(5), Err(TooOld { oldest: 7 }));
        assert!(s.check_resume(6).is_ok());
        // An open watch positioned within the window keeps reading through it, and past the
        // revision that has no event.
        let (evs, rv) = s.events_since(StorageId::PODS, 4).expect("open watch");
        assert_eq!((evs.len(), rv), (1, 6));
        s.write(|t| t.put(StorageId::PODS, "a/q", pod("a", "q", 0)));
        let (evs, rv) = s
            .events_since(StorageId::PODS, 5)
            .expect("after compaction");
        assert_eq!((evs.len(), evs[0].rv, rv), (1, 7, 7));
        let (evs, _) = s
            .events_since(StorageId::PODS, 6)
            .expect("from the new floor");
        assert_eq!(evs.iter().map(|e| e.rv).collect::<Vec<_>>(), vec![7]);
    }
}
