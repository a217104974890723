//! kcm-manager's integration tests: a manager run in-process (`Manager::run`) against the
//! embedded test cluster, through its public API only. The tests of its internals (clients,
//! serving) are unit tests beside them (`src/client/client_tests.rs`,
//! `src/serving/serving_tests.rs`).
//!
//! One test binary for the crate (each file a module): every integration test links once, not
//! once per file. `tests/metrics.rs` stays a binary of its own: the work-queue and sync metrics
//! go to one process-wide sink, which the first manager of a process installs, so a manager
//! started by a test here first would leave its `/metrics` without them.

mod common;
mod lease_release;
