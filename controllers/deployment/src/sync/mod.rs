//! Decisions of upstream `sync.go`: the new ReplicaSet and revisions, proportional `scale()`,
//! `calculateStatus`, revision-history cleanup and the paused/resumed conditions.

pub mod cleanup;
pub mod new_replica_set;
pub mod paused;
pub mod scale;
pub mod status;

pub use cleanup::replica_sets_to_clean_up;
pub use new_replica_set::*;
pub use paused::check_paused_conditions;
pub use scale::*;
pub use status::{calculate_status, status_equal, sync_deployment_status};
