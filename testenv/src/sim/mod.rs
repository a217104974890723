//! The rest of a cluster, simulated against the test API server through its own HTTP API: nodes with
//! heartbeats, a scheduler, a kubelet, the garbage collector and the namespace controller.
//!
//! Every component talks to the server the way the real one talks to kube-apiserver: list + watch
//! through a [`kube::Client`], then writes (bindings, `/status`, deletes, patches), each with its own
//! resourceVersion.

mod duration;

pub use duration::{DurationError, parse_go_duration};
