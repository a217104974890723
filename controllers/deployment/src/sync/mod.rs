//! Decisions of upstream `sync.go`: the new ReplicaSet and revisions, proportional `scale()`,
//! `calculateStatus`, revision-history cleanup and the paused/resumed conditions.

pub mod cleanup;
pub mod new_replica_set;
pub mod paused;
pub mod scale;
pub mod status;

pub use cleanup::replica_sets_to_clean_up;
pub use scale::*;
