//! kcm-replicaset's integration tests.
//!
//! One test binary for the crate (each file a module): every integration test links
//! once, not once per file.

mod cluster_faults;
mod common;
mod controller;
mod simulation;
mod status_write_failures;
