//! Helpers shared by the integration tests: a manager run in-process, and a tiny controller for
//! it to run (`tests/metrics.rs`, a binary of its own, includes these files too).

pub mod in_process;
pub mod namespace_reader;
