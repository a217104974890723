//! List + watch into an ordered stream of deltas (client-go Reflector on kube-client)
//!
//! Work in progress: see the project README.
