//! Shared Kubernetes controller utilities.
pub mod clock;
pub mod expectations;
pub mod pod;
pub mod pod_util;
pub mod ranking;
