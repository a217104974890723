//! The `kcm` binary's building blocks: flags, leader election (and, as they land, the
//! metrics/health server and the controller wiring). Used by `src/main.rs`; public so that
//! integration tests can drive the pieces against the embedded test cluster.

pub mod client;
pub mod duration;
pub mod leader_election;
pub mod lease_lock;
pub mod options;
pub mod serving;
