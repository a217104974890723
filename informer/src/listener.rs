//! One registered handler: an unbounded buffer plus a task that calls the handler in order
//! (client-go `tools/cache/shared_informer.go`, `processorListener`). A slow handler only grows its own buffer.

use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use crate::handler::{DeletedObject, ResourceEventHandler};
use crate::resync::ResyncSchedule;

/// A notification queued for one handler.
pub(crate) enum Notification<K> {
    Add { obj: Arc<K>, initial: bool },
    Update { old: Arc<K>, new: Arc<K> },
    Delete(DeletedObject<K>),
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Self::Add { obj, initial } => Self::Add {
                obj: Arc::clone(obj),
                initial: *initial,
            },
            Self::Update { old, new } => Self::Update {
                old: Arc::clone(old),
                new: Arc::clone(new),
            },
            Self::Delete(d) => Self::Delete(d.clone()),
        }
    }
}

/// State shared between a listener, its task and its registration handle.
#[derive(Debug, Default)]
pub(crate) struct ListenerShared {
    /// Initial-list adds queued but not yet handled.
    pub(crate) initial_pending: AtomicUsize,
    /// Notifications queued but not yet handled.
    pub(crate) pending: AtomicUsize,
    /// Set on removal: buffered notifications are discarded.
    pub(crate) removed: AtomicBool,
}

pub(crate) struct Listener<K> {
    pub(crate) id: u64,
    tx: Option<mpsc::UnboundedSender<Notification<K>>>,
    rx: Option<mpsc::UnboundedReceiver<Notification<K>>>,
    handler: Arc<dyn ResourceEventHandler<K>>,
    pub(crate) shared: Arc<ListenerShared>,
    pub(crate) resync: ResyncSchedule,
    task: Option<JoinHandle<()>>,
}

/// After a handler panics, delivery to it resumes after this delay (the notification is dropped).
const PANIC_PAUSE: Duration = Duration::from_secs(1);

impl<K: Send + Sync + 'static> Listener<K> {
    pub(crate) fn new(
        id: u64,
        handler: Arc<dyn ResourceEventHandler<K>>,
        resync: ResyncSchedule,
    ) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        Self {
            id,
            tx: Some(tx),
            rx: Some(rx),
            handler,
            shared: Arc::new(ListenerShared::default()),
            resync,
            task: None,
        }
    }

    /// Queues a notification (never blocks).
    pub(crate) fn send(&self, n: Notification<K>) {
        let Some(tx) = &self.tx else {
            return;
        };
        if matches!(n, Notification::Add { initial: true, .. }) {
            self.shared.initial_pending.fetch_add(1, Ordering::AcqRel);
        }
        self.shared.pending.fetch_add(1, Ordering::AcqRel);
        if let Err(mpsc::error::SendError(n)) = tx.send(n) {
            // Task gone (runtime shutting down): undo the counters.
            self.shared.pending.fetch_sub(1, Ordering::AcqRel);
            if matches!(n, Notification::Add { initial: true, .. }) {
                self.shared.initial_pending.fetch_sub(1, Ordering::AcqRel);
            }
        }
    }

    /// Starts the delivery task (idempotent). Requires a tokio runtime.
    pub(crate) fn start(&mut self) {
        let Some(mut rx) = self.rx.take() else {
            return;
        };
        let handler = Arc::clone(&self.handler);
        let shared = Arc::clone(&self.shared);
        self.task = Some(tokio::spawn(async move {
            while let Some(n) = rx.recv().await {
                if shared.removed.load(Ordering::Acquire) {
                    break;
                }
                let initial = matches!(n, Notification::Add { initial: true, .. });
                let result = std::panic::catch_unwind(AssertUnwindSafe(|| match n {
                    Notification::Add { obj, initial } => handler.on_add(&obj, initial),
                    Notification::Update { old, new } => handler.on_update(&old, &new),
                    Notification::Delete(d) => handler.on_delete(d),
                }));
                if initial {
                    shared.initial_pending.fetch_sub(1, Ordering::AcqRel);
                }
                shared.pending.fetch_sub(1, Ordering::AcqRel);
                if result.is_err() {
                    tracing::error!(
                        "event handler panicked; the notification was dropped, resuming in 1s"
                    );
                    tokio::time::sleep(PANIC_PAUSE).await;
                }
            }
        }));
    }

    /// Closes the buffer: the task drains what is queued (unless removed) and exits.
    pub(crate) fn close(&mut self) -> Option<JoinHandle<()>> {
        self.tx = None;
        self.rx = None;
        self.task.take()
    }

    /// Removes the listener: buffered notifications are discarded.
    pub(crate) fn remove(&mut self) {
        self.shared.removed.store(true, Ordering::Release);
        if let Some(task) = self.close() {
            task.abort();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resync::ResyncSchedule;
    use parking_lot::Mutex;

    struct PanicsOnOne(Arc<Mutex<Vec<i32>>>);
    impl ResourceEventHandler<i32> for PanicsOnOne {
        fn on_add(&self, obj: &Arc<i32>, _initial: bool) {
            assert_ne!(**obj, 1, "handler failure injected by the test");
            self.0.lock().push(**obj);
        }
    }

    #[tokio::test(start_paused = true)]
    async fn a_panicking_handler_loses_only_that_notification_and_resumes() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let schedule =
            ResyncSchedule::new(Duration::ZERO, Duration::ZERO, tokio::time::Instant::now());
        let mut l = Listener::new(0, Arc::new(PanicsOnOne(Arc::clone(&seen))), schedule);
        for v in [0, 1, 2] {
            l.send(Notification::Add {
                obj: Arc::new(v),
                initial: true,
            });
        }
        assert_eq!(l.shared.initial_pending.load(Ordering::Acquire), 3);
        l.start();
        let task = l.close().expect("task");
        task.await.expect("listener task ends after close");
        assert_eq!(*seen.lock(), [0, 2]);
        assert_eq!(l.shared.initial_pending.load(Ordering::Acquire), 0);
        assert_eq!(l.shared.pending.load(Ordering::Acquire), 0);
    }
}
