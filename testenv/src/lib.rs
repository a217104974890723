//! An embedded Kubernetes test cluster: API server over real HTTP, simulated nodes and kubelet, garbage collector, fault injection
//!
//! Work in progress: see the project README.
