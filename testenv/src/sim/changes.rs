//! A shared informer's notifications as a stream of changes, for the components that handle
//! them in one loop of their own (the scheduler, the kubelets' pod dispatch, the node controls).

use std::sync::Arc;

use kcm_informer::informer::InformerObject;
use kcm_informer::{EventHandlerFns, HandlerRegistration, InformerError, SharedIndexInformer};
use tokio::sync::mpsc;

/// A change an informer saw.
#[derive(Debug, Clone)]
pub(crate) enum Change<K> {
    /// Added or modified (also sent for every object after a relist).
    Applied(Arc<K>),
    /// Deleted (also sent for objects missing from a relist).
    Deleted(Arc<K>),
}

/// Register a handler on `informer` that forwards every notification, in order; the handler's
/// registration (to remove it) and the receiving end.
pub(crate) fn changes<K: InformerObject>(
    informer: &SharedIndexInformer<K>,
) -> Result<(HandlerRegistration, mpsc::UnboundedReceiver<Change<K>>), InformerError> {
    let (tx, rx) = mpsc::unbounded_channel();
    let (add, update) = (tx.clone(), tx.clone());
    let registration = informer.add_event_handler(
        EventHandlerFns::new()
            .on_add(move |obj: &Arc<K>, _| {
                let _ = add.send(Change::Applied(obj.clone()));
            })
            .on_update(move |_, obj: &Arc<K>| {
                let _ = update.send(Change::Applied(obj.clone()));
            })
            .on_delete(move |deleted| {
                let _ = tx.send(Change::Deleted(deleted.object().clone()));
            }),
    )?;
    Ok((registration, rx))
}
