//! The sample controller's integration tests.
//!
//! One test binary for the crate (each file a module): every integration test links
//! once, not once per file.

mod common;
mod crd_yaml;
mod foo_controller;
