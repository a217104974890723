//! Shared index informers, handlers, listers and the informer factory (client-go shared informers on kube-client)
//!
//! Work in progress: see the project README.
