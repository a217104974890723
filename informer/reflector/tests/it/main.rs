//! kcm-reflector's integration tests.
//!
//! One test binary for the crate (each file a module): every integration test links
//! once, not once per file.

mod bad_input;
mod common;
mod fake_lister_watcher;
mod shard;
mod shard_change;
mod shard_step_fallback;
mod testenv;
