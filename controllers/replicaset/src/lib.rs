//! The ReplicaSet controller of kube-controller-manager, in Rust
//!
//! Work in progress: see the project README.
