//! kcm-store's integration tests.
//!
//! One test binary for the crate (each file a module): every integration test links
//! once, not once per file.

mod common;
mod deferred_drop;
mod index_invariants;
mod key;
mod key_fuzz;
mod label_selector;
mod lister;
mod selector;
mod selector_fuzz;
mod selector_props;
mod selector_requirement;
mod store_index;
