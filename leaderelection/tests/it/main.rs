//! kcm-leaderelection's integration tests.
//!
//! One test binary for the crate (each file a module): every integration test links
//! once, not once per file.

mod fence_wire;
mod membership;
mod shard_member;
