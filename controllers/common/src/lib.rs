//! Shared Kubernetes controller utilities.
pub mod clock;
pub mod expectations;
pub mod pod;
