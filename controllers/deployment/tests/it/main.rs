//! kcm-deployment's integration tests.
//!
//! One test binary for the crate (each file a module): every integration test links
//! once, not once per file.

mod common;
mod failures_and_pods;
mod manual_sync;
mod rollouts;
mod simulation;
mod sync_paths;
mod write_failures;
