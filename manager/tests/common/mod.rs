//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod fake_apiserver;
pub mod https;
pub mod in_process;
pub mod namespace_reader;
