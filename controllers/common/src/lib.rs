//! Shared Kubernetes controller utilities: expectations, pod control, controller-ref manager, event recorder, worker loop
//!
//! Work in progress: see the project README.
