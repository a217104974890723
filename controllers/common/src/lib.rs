//! Shared Kubernetes controller utilities.
pub mod clock;
pub mod controller_ref_manager;
pub mod error;
pub mod event_correlator;
pub mod event_recorder;
pub mod expectations;
mod lru;
pub mod pod;
pub mod pod_control;
pub mod pod_util;
pub mod ranking;
pub mod rs_control;
pub mod slow_start;
#[cfg(test)]
mod testing;
pub mod worker;
