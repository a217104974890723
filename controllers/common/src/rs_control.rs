//! Patching ReplicaSets on behalf of the Deployment controller (upstream
//! `RSControlInterface` / `RealRSControl`), used to adopt and release them.

use std::fmt;

use futures::future::BoxFuture;
use k8s_openapi::api::apps::v1::ReplicaSet;
use kube::api::Api;
use parking_lot::Mutex;

use crate::error::ControlError;
use crate::patch::strategic_merge_patch;

/// Sends strategic-merge patches to ReplicaSets.
pub trait ReplicaSetControl: Send + Sync {
    /// Patches ReplicaSet `name` with `patch` (JSON text, sent byte for byte).
    fn patch_replica_set<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        patch: &'a str,
    ) -> BoxFuture<'a, Result<(), ControlError>>;
}

/// [`ReplicaSetControl`] over a kube client.
#[derive(Clone)]
pub struct KubeReplicaSetControl {
    client: kube::Client,
}

impl fmt::Debug for KubeReplicaSetControl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KubeReplicaSetControl")
            .finish_non_exhaustive()
    }
}

impl KubeReplicaSetControl {
    /// A control writing with `client`.
    pub fn new(client: kube::Client) -> Self {
        Self { client }
    }
}

impl ReplicaSetControl for KubeReplicaSetControl {
    fn patch_replica_set<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        patch: &'a str,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(async move {
            let api = Api::<ReplicaSet>::namespaced(self.client.clone(), namespace);
            strategic_merge_patch(&api, name, patch).await?;
            Ok(())
        })
    }
}

/// A [`ReplicaSetControl`] that records patches and can be told to fail.
#[derive(Debug, Default)]
pub struct FakeReplicaSetControl {
    patches: Mutex<Vec<(String, String, String)>>,
    fail_with: Mutex<Option<(u16, String)>>,
}

impl FakeReplicaSetControl {
    /// Patches received, as `(namespace, name, patch)`.
    pub fn patches(&self) -> Vec<(String, String, String)> {
        self.patches.lock().clone()
    }

    /// Makes later patches fail with an API error of this HTTP code and reason
    /// (`None` clears).
    pub fn set_error(&self, code_reason: Option<(u16, &str)>) {
        *self.fail_with.lock() = code_reason.map(|(c, r)| (c, r.to_string()));
    }
}

impl ReplicaSetControl for FakeReplicaSetControl {
    fn patch_replica_set<'a>(
        &'a self,
        namespace: &'a str,
        name: &'a str,
        patch: &'a str,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(async move {
            self.patches
                .lock()
                .push((namespace.into(), name.into(), patch.into()));
            match &*self.fail_with.lock() {
                Some((code, reason)) => Err(ControlError::api(*code, reason, "fake failure")),
                None => Ok(()),
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::testing::{MockApi, MockResponse};
    use serde_json::json;

    #[tokio::test]
    async fn kube_control_sends_strategic_merge_patch_verbatim() {
        let api = MockApi::new(|_| {
            MockResponse::json(
                200,
                json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"}}),
            )
        });
        let control = KubeReplicaSetControl::new(api.client());
        let body = r#"{"metadata":{"ownerReferences":[],"uid":"u"}}"#;
        control.patch_replica_set("ns", "rs", body).await.unwrap();
        let reqs = api.requests();
        assert_eq!(reqs[0].method, "PATCH");
        assert_eq!(reqs[0].path, "/apis/apps/v1/namespaces/ns/replicasets/rs");
        assert_eq!(
            reqs[0].content_type.as_deref(),
            Some("application/strategic-merge-patch+json")
        );
        assert_eq!(
            reqs[0].body,
            serde_json::from_str::<serde_json::Value>(body).unwrap()
        );
    }

    #[tokio::test]
    async fn fake_records_and_fails_on_demand() {
        let fake = FakeReplicaSetControl::default();
        fake.patch_replica_set("ns", "a", "{}").await.unwrap();
        fake.set_error(Some((404, "NotFound")));
        assert!(
            fake.patch_replica_set("ns", "b", "{}")
                .await
                .unwrap_err()
                .is_not_found()
        );
        assert_eq!(fake.patches().len(), 2);
    }
}
