//! Every API call of the ReplicaSet controller besides pod writes (those go through
//! [`PodControl`](kcm_controller::pod_control::PodControl) and log there): the `/status` PUT
//! with its log line and single retry, and the uncached GET it and the adoption pre-check use.

use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetStatus};
use kcm_controller::ControlError;
use kcm_controller::api_write::log_write;
use kube::api::{Api, PostParams};

use crate::config::STATUS_UPDATE_RETRIES;
use crate::status::{nonzero, status_unchanged};

fn replica_sets(client: &kube::Client, namespace: &str) -> Api<ReplicaSet> {
    Api::namespaced(client.clone(), namespace)
}

/// GET of the ReplicaSet from the API server (not from the cache).
pub(crate) async fn get_replica_set(
    client: &kube::Client,
    namespace: &str,
    name: &str,
) -> Result<ReplicaSet, ControlError> {
    Ok(replica_sets(client, namespace).get(name).await?)
}

/// Writes `new` through `/status` unless nothing changed (upstream
/// `updateReplicaSetStatus`): observedGeneration is set to `rs`'s generation; a
/// failed PUT is retried once on a freshly fetched copy (any error triggers the
/// refetch, and a GET error is returned instead of the PUT error).
pub(crate) async fn update_replica_set_status(
    client: &kube::Client,
    rs: &ReplicaSet,
    mut new: ReplicaSetStatus,
) -> Result<ReplicaSet, ControlError> {
    if status_unchanged(rs, &new) {
        return Ok(rs.clone());
    }
    new.observed_generation = nonzero(rs.metadata.generation.unwrap_or(0));
    let ns = rs.metadata.namespace.as_deref().unwrap_or_default();
    let name = rs.metadata.name.as_deref().unwrap_or_default();
    let mut obj = rs.clone();
    let mut attempt = 0;
    loop {
        let old = obj.status.take().unwrap_or_default();
        obj.status = Some(new.clone());
        let result = replica_sets(client, ns)
            .replace_status(name, &PostParams::default(), &obj)
            .await
            .map_err(ControlError::from);
        log_write(
            "update",
            "replicasets/status",
            ns,
            name,
            format_args!(
                "status changed: replicas {} -> {}, ready {} -> {}, available {} -> {}, \
                 observedGeneration {} -> {}",
                old.replicas,
                new.replicas,
                old.ready_replicas.unwrap_or(0),
                new.ready_replicas.unwrap_or(0),
                old.available_replicas.unwrap_or(0),
                new.available_replicas.unwrap_or(0),
                old.observed_generation.unwrap_or(0),
                new.observed_generation.unwrap_or(0),
            ),
            result.as_ref().map(|_| ()),
        );
        match result {
            Ok(updated) => return Ok(updated),
            Err(e) if attempt >= STATUS_UPDATE_RETRIES => return Err(e),
            Err(_) => {}
        }
        attempt += 1;
        obj = get_replica_set(client, ns, name).await?;
    }
}

#[cfg(test)]
#[path = "writes_tests.rs"]
mod tests;
