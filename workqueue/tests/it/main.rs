//! kcm-workqueue's integration tests.
//!
//! One test binary for the crate (each file a module): every integration test links
//! once, not once per file.

mod global_provider;
mod stress;
