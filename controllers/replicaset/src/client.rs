//! The ReplicaSet API calls the controller makes besides pod writes: an uncached
//! GET (adoption recheck, status retry) and the `/status` PUT.

use std::fmt;

use futures::future::BoxFuture;
use k8s_openapi::api::apps::v1::ReplicaSet;
use kcm_controller::ControlError;
use kube::api::{Api, PostParams};

/// Reads ReplicaSets live and writes their status subresource.
pub trait ReplicaSetClient: Send + Sync {
    /// GET the ReplicaSet from the API server (not from the cache).
    fn get<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<ReplicaSet, ControlError>>;

    /// PUT `rs` to its `/status` subresource (carrying its resourceVersion);
    /// returns the server's copy.
    fn update_status<'a>(
        &'a self,
        rs: &'a ReplicaSet,
    ) -> BoxFuture<'a, Result<ReplicaSet, ControlError>>;
}

/// [`ReplicaSetClient`] over a kube client.
#[derive(Clone)]
pub struct KubeReplicaSetClient {
    client: kube::Client,
}

impl fmt::Debug for KubeReplicaSetClient {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeReplicaSetClient")
            .finish_non_exhaustive()
    }
}

impl KubeReplicaSetClient {
    /// A client using `client`.
    pub fn new(client: kube::Client) -> Self {
        Self { client }
    }

    fn api(&self, namespace: &str) -> Api<ReplicaSet> {
        Api::namespaced(self.client.clone(), namespace)
    }
}

impl ReplicaSetClient for KubeReplicaSetClient {
    fn get<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<ReplicaSet, ControlError>> {
        Box::pin(async move { Ok(self.api(namespace).get(name).await?) })
    }

    fn update_status<'a>(
        &'a self,
        rs: &'a ReplicaSet,
    ) -> BoxFuture<'a, Result<ReplicaSet, ControlError>> {
        Box::pin(async move {
            let ns = rs.metadata.namespace.as_deref().unwrap_or_default();
            let name = rs.metadata.name.as_deref().unwrap_or_default();
            Ok(self
                .api(ns)
                .replace_status(name, &PostParams::default(), rs)
                .await?)
        })
    }
}
