//! Fan-out of notifications to every registered handler (client-go
//! `tools/cache/shared_informer.go`, `sharedProcessor`), including
//! sync-only delivery to handlers whose resync is due.

use std::sync::Arc;
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio::time::Instant;

use crate::handler::ResourceEventHandler;
use crate::listener::{Listener, ListenerShared, Notification};
use crate::resync::{ResyncSchedule, register_resync_period};

pub(crate) struct Processor<K> {
    listeners: Vec<Listener<K>>,
    next_id: u64,
    pub(crate) resync_check_period: Duration,
    pub(crate) started: bool,
    pub(crate) stopped: bool,
}

impl<K: Send + Sync + 'static> Processor<K> {
    pub(crate) fn new(resync_check_period: Duration) -> Self {
        Self {
            listeners: Vec::new(),
            next_id: 0,
            resync_check_period,
            started: false,
            stopped: false,
        }
    }

    /// Registers a handler (client-go `AddEventHandlerWithResyncPeriod` minus the replay, which
    /// the informer does under the same lock). Returns the listener id and its shared state.
    pub(crate) fn add(
        &mut self,
        handler: Arc<dyn ResourceEventHandler<K>>,
        resync_period: Duration,
        initial: impl IntoIterator<Item = Arc<K>>,
    ) -> (u64, Arc<ListenerShared>) {
        let decision =
            register_resync_period(resync_period, self.resync_check_period, self.started);
        if decision.check_period_changed {
            self.resync_check_period = decision.check_period;
            for l in &mut self.listeners {
                l.resync.set_check_period(decision.check_period);
            }
        }
        let id = self.next_id;
        self.next_id += 1;
        let schedule =
            ResyncSchedule::new(decision.requested, self.resync_check_period, Instant::now());
        let mut listener = Listener::new(id, handler, schedule);
        for obj in initial {
            listener.send(Notification::Add { obj, initial: true });
        }
        if self.started {
            listener.start();
        }
        let shared = Arc::clone(&listener.shared);
        self.listeners.push(listener);
        (id, shared)
    }

    /// Removes a handler; unknown ids are ignored. Returns whether it was registered.
    pub(crate) fn remove(&mut self, id: u64) -> bool {
        match self.listeners.iter().position(|l| l.id == id) {
            Some(i) => {
                let mut l = self.listeners.remove(i);
                l.remove();
                true
            }
            None => false,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.listeners.len()
    }

    /// Starts every listener task.
    pub(crate) fn start(&mut self) {
        self.started = true;
        for l in &mut self.listeners {
            l.start();
        }
    }

    /// Stops accepting handlers and closes every buffer; returns the tasks to await.
    pub(crate) fn stop(&mut self) -> Vec<JoinHandle<()>> {
        self.stopped = true;
        self.listeners
            .iter_mut()
            .filter_map(Listener::close)
            .collect()
    }

    /// Sends `n` to every handler, or — for a sync notification — only to syncing handlers.
    pub(crate) fn distribute(&self, n: &Notification<K>, sync: bool) {
        for l in &self.listeners {
            if !sync || l.resync.syncing {
                l.send(n.clone());
            }
        }
    }

    /// Marks the handlers whose resync is due as syncing; true if any is.
    pub(crate) fn should_resync(&mut self, now: Instant) -> bool {
        let mut any = false;
        for l in &mut self.listeners {
            any |= l.resync.check(now);
        }
        any
    }
}
