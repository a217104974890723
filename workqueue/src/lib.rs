//! Work queue, delaying queue, rate limiters and rate-limiting queue (client-go util/workqueue, in Rust)
//!
//! Work in progress: see the project README.
