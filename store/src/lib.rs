//! Thread-safe indexer store, object keys, indexers, listers and label selectors (client-go tools/cache, in Rust)
//!
//! Work in progress: see the project README.
