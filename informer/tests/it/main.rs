//! kcm-informer's integration tests.
//!
//! One test binary for the crate (each file a module): every integration test links
//! once, not once per file.

mod common;
mod compact;
mod informer;
mod projected;
mod property;
mod shard;
