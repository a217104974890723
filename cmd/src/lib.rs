//! The `kcm` binary's building blocks: flags, client, leader election, the metrics/health
//! server and the process wiring. Used by `src/main.rs`; public so that integration tests can
//! drive the pieces against the embedded test cluster.

pub mod app;
pub mod client;
pub mod error_chain;
pub mod feature_gates;
pub mod logging;
pub mod metrics;
pub mod metrics_text;
pub mod options;
pub mod process_metrics;
pub mod serving;
pub mod sharding;
