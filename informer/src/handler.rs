//! Event handlers: the [`ResourceEventHandler`] trait, a closure-based builder, and the filtering
//! adapter (client-go `tools/cache/controller.go`: `ResourceEventHandler`,
//! `ResourceEventHandlerFuncs`, `ResourceEventHandlerDetailedFuncs`,
//! `FilteringResourceEventHandler`).

use std::fmt;
use std::sync::Arc;

pub use kcm_reflector::{DeletedFinalStateUnknown, DeletedObject};

/// Receives notifications from a shared informer. Each registered handler runs on its own task
/// with its own unbounded buffer, so a slow handler delays only itself. Notifications to one
/// handler are sequential and in order; each is issued after the cache was updated.
///
/// Handlers must be cheap and must not block (compute keys, enqueue, touch expectations).
pub trait ResourceEventHandler<K>: Send + Sync + 'static {
    /// An object was added; `is_initial_list` is true for objects delivered as part of the initial
    /// list (including the replay of the cache to a handler registered late).
    fn on_add(&self, _obj: &Arc<K>, _is_initial_list: bool) {}
    /// An object changed (or a resync re-delivered it: then `old` and `new` have the same
    /// resourceVersion).
    fn on_update(&self, _old: &Arc<K>, _new: &Arc<K>) {}
    /// An object was deleted; a [`DeletedObject::Unknown`] tombstone when the deletion was inferred
    /// from a relist.
    fn on_delete(&self, _obj: DeletedObject<K>) {}
}

type AddFn<K> = Box<dyn Fn(&Arc<K>, bool) + Send + Sync>;
type UpdateFn<K> = Box<dyn Fn(&Arc<K>, &Arc<K>) + Send + Sync>;
type DeleteFn<K> = Box<dyn Fn(DeletedObject<K>) + Send + Sync>;

/// A handler built from closures; unset callbacks ignore their notifications.
///
/// ```
/// use k8s_openapi::api::core::v1::Pod;
/// use kcm_informer::EventHandlerFns;
///
/// let handler = EventHandlerFns::<Pod>::new()
///     .on_add(|pod, initial| println!("add {:?} (initial list: {initial})", pod.metadata.name))
///     .on_delete(|deleted| println!("delete {:?}", deleted.object().metadata.name));
/// # let _ = handler;
/// ```
pub struct EventHandlerFns<K> {
    add: Option<AddFn<K>>,
    update: Option<UpdateFn<K>>,
    delete: Option<DeleteFn<K>>,
}

impl<K> fmt::Debug for EventHandlerFns<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EventHandlerFns")
            .field("add", &self.add.is_some())
            .field("update", &self.update.is_some())
            .field("delete", &self.delete.is_some())
            .finish()
    }
}

impl<K> Default for EventHandlerFns<K> {
    fn default() -> Self {
        Self {
            add: None,
            update: None,
            delete: None,
        }
    }
}

impl<K> EventHandlerFns<K> {
    /// A handler that ignores everything until callbacks are set.
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets the add callback (`obj`, `is_initial_list`).
    #[must_use]
    pub fn on_add(mut self, f: impl Fn(&Arc<K>, bool) + Send + Sync + 'static) -> Self {
        self.add = Some(Box::new(f));
        self
    }

    /// Sets the update callback (`old`, `new`).
    #[must_use]
    pub fn on_update(mut self, f: impl Fn(&Arc<K>, &Arc<K>) + Send + Sync + 'static) -> Self {
        self.update = Some(Box::new(f));
        self
    }

    /// Sets the delete callback.
    #[must_use]
    pub fn on_delete(mut self, f: impl Fn(DeletedObject<K>) + Send + Sync + 'static) -> Self {
        self.delete = Some(Box::new(f));
        self
    }
}

impl<K: Send + Sync + 'static> ResourceEventHandler<K> for EventHandlerFns<K> {
    fn on_add(&self, obj: &Arc<K>, is_initial_list: bool) {
        if let Some(f) = &self.add {
            f(obj, is_initial_list);
        }
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        if let Some(f) = &self.update {
            f(old, new);
        }
    }
    fn on_delete(&self, obj: DeletedObject<K>) {
        if let Some(f) = &self.delete {
            f(obj);
        }
    }
}

/// Passes only objects accepted by `filter` to `inner`. On update: accepted before and after →
/// update; only after → add; only before → delete; neither → nothing (client-go
/// `FilteringResourceEventHandler`).
pub struct FilteringHandler<K, H> {
    filter: Box<dyn Fn(&K) -> bool + Send + Sync>,
    inner: H,
}

impl<K, H: fmt::Debug> fmt::Debug for FilteringHandler<K, H> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FilteringHandler")
            .field("inner", &self.inner)
            .finish()
    }
}

impl<K, H> FilteringHandler<K, H> {
    /// Wraps `inner` with `filter`.
    pub fn new(filter: impl Fn(&K) -> bool + Send + Sync + 'static, inner: H) -> Self {
        Self {
            filter: Box::new(filter),
            inner,
        }
    }
}

impl<K, H> ResourceEventHandler<K> for FilteringHandler<K, H>
where
    K: Send + Sync + 'static,
    H: ResourceEventHandler<K>,
{
    fn on_add(&self, obj: &Arc<K>, is_initial_list: bool) {
        if (self.filter)(obj) {
            self.inner.on_add(obj, is_initial_list);
        }
    }
    fn on_update(&self, old: &Arc<K>, new: &Arc<K>) {
        match ((self.filter)(old), (self.filter)(new)) {
            (true, true) => self.inner.on_update(old, new),
            (false, true) => self.inner.on_add(new, false),
            (true, false) => self.inner.on_delete(DeletedObject::Object(Arc::clone(old))),
            (false, false) => {}
        }
    }
    fn on_delete(&self, obj: DeletedObject<K>) {
        if (self.filter)(obj.object()) {
            self.inner.on_delete(obj);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parking_lot::Mutex;

    #[derive(Default)]
    struct Recorder(Mutex<Vec<String>>);
    impl ResourceEventHandler<i32> for Arc<Recorder> {
        fn on_add(&self, obj: &Arc<i32>, initial: bool) {
            self.0.lock().push(format!("add {obj} {initial}"));
        }
        fn on_update(&self, old: &Arc<i32>, new: &Arc<i32>) {
            self.0.lock().push(format!("update {old}->{new}"));
        }
        fn on_delete(&self, obj: DeletedObject<i32>) {
            self.0.lock().push(format!("delete {}", obj.object()));
        }
    }

    #[test]
    fn filtering_handler_turns_updates_into_adds_and_deletes() {
        let rec = Arc::new(Recorder::default());
        let h = FilteringHandler::new(|v: &i32| *v % 2 == 0, Arc::clone(&rec));
        h.on_add(&Arc::new(1), true);
        h.on_add(&Arc::new(2), true);
        h.on_update(&Arc::new(2), &Arc::new(4));
        h.on_update(&Arc::new(1), &Arc::new(6));
        h.on_update(&Arc::new(6), &Arc::new(7));
        h.on_update(&Arc::new(7), &Arc::new(9));
        h.on_delete(DeletedObject::Object(Arc::new(3)));
        h.on_delete(DeletedObject::Object(Arc::new(8)));
        assert_eq!(
            *rec.0.lock(),
            [
                "add 2 true",
                "update 2->4",
                "add 6 false",
                "delete 6",
                "delete 8"
            ]
        );
    }

    #[test]
    fn closure_handler_calls_only_set_callbacks() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = Arc::clone(&seen);
        let h = EventHandlerFns::<i32>::new().on_add(move |o, i| s.lock().push((**o, i)));
        ResourceEventHandler::on_add(&h, &Arc::new(5), false);
        ResourceEventHandler::on_update(&h, &Arc::new(5), &Arc::new(6));
        ResourceEventHandler::on_delete(&h, DeletedObject::Object(Arc::new(5)));
        assert_eq!(*seen.lock(), [(5, false)]);
    }
}
