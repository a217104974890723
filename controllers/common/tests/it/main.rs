//! kcm-controller's integration tests (`pod_view_size` is a binary of its own: it installs a counting global allocator).
//!
//! One test binary for the crate (each file a module): every integration test links
//! once, not once per file.

mod owner_index_equivalence;
mod pod_view_fuzz;
mod ranking_fuzz;
mod testenv_control;
