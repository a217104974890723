//! What a reflector owns ([`Parts`]: its lister-watcher, configuration and list/watch state) and
//! what its algorithms borrow ([`ListWatch`]), below the files that list (`list.rs`), watch
//! (`watch.rs`, `streaming_list.rs`), combine the two (`list_and_watch.rs`) and follow a shard
//! (`shard/`), so that each of them is a function over these parts and imports point one way:
//! `reflector.rs` on top calls them. (client-go keeps these fields on its `Reflector`,
//! `tools/cache/reflector.go`.)

use std::sync::Arc;

use parking_lot::RwLock;
use tokio_util::sync::CancellationToken;

use crate::backoff::Backoff;
use crate::config::ReflectorConfig;

/// A thread-safe view of the reflector's last synced resourceVersion (client-go
/// `LastSyncResourceVersion`). Cloning shares the value.
#[derive(Clone, Debug, Default)]
pub struct LastSyncResourceVersion(Arc<RwLock<String>>);

impl LastSyncResourceVersion {
    /// The current value ("" before the first successful list).
    pub fn get(&self) -> String {
        self.0.read().clone()
    }

    fn set(&self, rv: &str) {
        let mut guard = self.0.write();
        if guard.as_str() != rv {
            rv.clone_into(&mut guard);
        }
    }
}

/// Mutable state of the list/watch algorithm.
#[derive(Debug)]
pub(crate) struct ListWatchState {
    /// Last synced resourceVersion (also published through [`LastSyncResourceVersion`]).
    pub(crate) last_sync_rv: String,
    /// Set after a 410 Expired / "too large RV" answer to a list: the next list is a consistent
    /// read (RV "").
    pub(crate) last_sync_rv_unavailable: bool,
    /// Sticky: an RV="0" list came back paginated, so the watch cache is off for this resource.
    pub(crate) paginated_result: bool,
    pub(crate) backoff: Backoff,
    pub(crate) published: LastSyncResourceVersion,
}

impl ListWatchState {
    /// A state before the first list.
    pub(crate) fn new(config: &ReflectorConfig) -> Self {
        ListWatchState {
            last_sync_rv: String::new(),
            last_sync_rv_unavailable: false,
            paginated_result: false,
            backoff: Backoff::new(config.backoff.clone()),
            published: LastSyncResourceVersion::default(),
        }
    }

    pub(crate) fn set_last_sync_rv(&mut self, rv: &str) {
        if self.last_sync_rv != rv {
            rv.clone_into(&mut self.last_sync_rv);
        }
        self.published.set(rv);
    }
}

/// What a reflector owns: its lister-watcher, its configuration and its list/watch state.
pub(crate) struct Parts<L> {
    pub(crate) lw: L,
    pub(crate) config: ReflectorConfig,
    pub(crate) state: ListWatchState,
}

impl<L> Parts<L> {
    /// The parts as a list or a watch borrows them.
    pub(crate) fn list_watch(&mut self) -> ListWatch<'_, L> {
        ListWatch {
            lw: &self.lw,
            config: &self.config,
            state: &mut self.state,
        }
    }
}

/// A reflector's lister-watcher, configuration and state, borrowed for a list or a watch (the
/// lister-watcher shared, so that a list of one part of a shard can run beside a watch of the
/// rest, `shard/step.rs`).
pub(crate) struct ListWatch<'a, L> {
    pub(crate) lw: &'a L,
    pub(crate) config: &'a ReflectorConfig,
    pub(crate) state: &'a mut ListWatchState,
}

impl<L> ListWatch<'_, L> {
    /// Sleeps the next backoff delay; `false` when cancelled while sleeping.
    pub(crate) async fn sleep_backoff(&mut self, cancel: &CancellationToken) -> bool {
        let delay = self.state.backoff.next_delay();
        tokio::select! {
            () = cancel.cancelled() => false,
            () = tokio::time::sleep(delay) => true,
        }
    }
}
