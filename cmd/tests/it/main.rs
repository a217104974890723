//! The `kcm` binary's process-level tests.
//!
//! One test binary for the crate (each file a module): every integration test links
//! once, not once per file.

mod common;
mod flags;
mod help;
mod paused_leader;
mod service_account_credentials;
mod sharded;
