//! Errors of a ReplicaSet sync.

use kcm_controller::ControlError;
use kcm_informer::ObjectKey;

/// Why a sync failed (the key is requeued with backoff).
#[derive(Debug, thiserror::Error)]
pub enum SyncError {
    /// A cache has not seen this controller's last write for the ReplicaSet yet; the sync is
    /// deferred (requeued with backoff), as upstream's stale-controller consistency does.
    #[error("{0}")]
    StaleCache(#[from] kcm_controller::consistency::ConsistencyError),
    /// Claiming (adopting/releasing) pods failed; nothing else was done.
    #[error("{0}")]
    Claim(#[source] ControlError),
    /// Creating or deleting pods failed (after the status was updated).
    #[error("{0}")]
    Manage(#[source] ControlError),
    /// Writing the status (or re-reading the ReplicaSet for the retry) failed.
    #[error("failed to update status of ReplicaSet {key}: {source}")]
    Status {
        /// The ReplicaSet.
        key: ObjectKey,
        /// The API error.
        #[source]
        source: ControlError,
    },
}

impl SyncError {
    /// Whether a write of the sync was refused by the leader's write fence (requeued, not
    /// counted as a failure).
    pub fn is_fenced(&self) -> bool {
        match self {
            SyncError::StaleCache(_) => false,
            SyncError::Claim(c) | SyncError::Manage(c) | SyncError::Status { source: c, .. } => {
                c.is_fenced()
            }
        }
    }
}
