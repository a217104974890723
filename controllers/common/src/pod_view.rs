//! [`PodView`]: a projection of `core/v1` Pod holding only what the ReplicaSet and
//! Deployment controllers read, so an informer can cache ~4× less memory per pod.
//!
//! It deserializes straight from the API server's Pod JSON (lists and watch
//! events), ignoring every other field; `metadata.managedFields` is skipped
//! while parsing and never allocated. It implements the k8s-openapi
//! [`Resource`](k8s_openapi::Resource) and [`Metadata`](k8s_openapi::Metadata)
//! traits, so `kube::Api<PodView>` and kube-runtime reflectors accept it.
//!
//! ```
//! use kcm_controller::pod_view::PodView;
//! let pod: PodView = serde_json::from_str(r#"{
//!   "apiVersion": "v1", "kind": "Pod",
//!   "metadata": {"name": "web-1", "namespace": "default", "uid": "u1",
//!                "managedFields": [{"manager": "kubectl"}]},
//!   "spec": {"nodeName": "node-a", "containers": [{"name": "c", "image": "nginx"}]},
//!   "status": {"phase": "Running",
//!              "conditions": [{"type": "Ready", "status": "True"}]}
//! }"#).unwrap();
//! assert_eq!(pod.metadata.name.as_deref(), Some("web-1"));
//! assert!(pod.metadata.managed_fields.is_none());
//! assert_eq!(pod.spec.node_name.as_deref(), Some("node-a"));
//! assert_eq!(pod.status.phase.as_deref(), Some("Running"));
//! ```

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference, Time};
use serde::ser::SerializeStruct;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// The fields of a Pod that the workload controllers read.
#[derive(Clone, Debug, Default, PartialEq, Deserialize)]
pub struct PodView {
    /// name, namespace, uid, resourceVersion, labels, annotations, ownerReferences,
    /// deletionTimestamp, deletionGracePeriodSeconds, creationTimestamp,
    /// generateName, finalizers. Everything else (notably `managedFields`) is `None`.
    #[serde(default, deserialize_with = "deserialize_meta")]
    pub metadata: ObjectMeta,
    /// `spec.nodeName` and the init containers' restart policies.
    #[serde(default, deserialize_with = "null_as_default")]
    pub spec: PodViewSpec,
    /// Phase, conditions, container restart counts and readiness, start time.
    #[serde(default, deserialize_with = "null_as_default")]
    pub status: PodViewStatus,
}

/// Projected `spec`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodViewSpec {
    /// `spec.nodeName`: the node the pod is bound to (`None`/empty: unscheduled).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub node_name: Option<String>,
    /// `spec.initContainers[*].{name, restartPolicy}` (restartPolicy `Always` marks a sidecar).
    #[serde(
        default,
        deserialize_with = "shrunk_vec",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub init_containers: Vec<InitContainerView>,
}

/// Projected `spec.initContainers[*]`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitContainerView {
    /// Container name.
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
    /// `restartPolicy` (`Always` for restartable init containers, a.k.a. sidecars).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub restart_policy: Option<String>,
}

/// Projected `status`.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodViewStatus {
    /// `status.phase` (`Pending`, `Running`, `Succeeded`, `Failed`, `Unknown`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub phase: Option<String>,
    /// `status.conditions[*].{type, status, lastTransitionTime}`.
    #[serde(
        default,
        deserialize_with = "shrunk_vec",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub conditions: Vec<PodConditionView>,
    /// `status.containerStatuses[*].{name, ready, restartCount}`.
    #[serde(
        default,
        deserialize_with = "shrunk_vec",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub container_statuses: Vec<ContainerStatusView>,
    /// `status.initContainerStatuses[*].{name, ready, restartCount}`.
    #[serde(
        default,
        deserialize_with = "shrunk_vec",
        skip_serializing_if = "Vec::is_empty"
    )]
    pub init_container_statuses: Vec<ContainerStatusView>,
    /// `status.startTime`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub start_time: Option<Time>,
}

/// Projected pod condition.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PodConditionView {
    /// Condition type, e.g. `Ready`.
    #[serde(rename = "type", default, deserialize_with = "null_as_default")]
    pub type_: String,
    /// `True`, `False` or `Unknown`.
    #[serde(default, deserialize_with = "null_as_default")]
    pub status: String,
    /// When the condition last changed status.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_transition_time: Option<Time>,
}

/// Projected container status.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContainerStatusView {
    /// Container name.
    #[serde(default, deserialize_with = "null_as_default")]
    pub name: String,
    /// Whether the container passes its readiness probe.
    #[serde(default, deserialize_with = "null_as_default")]
    pub ready: bool,
    /// Number of restarts.
    #[serde(default, deserialize_with = "null_as_default")]
    pub restart_count: i32,
}

impl k8s_openapi::Resource for PodView {
    const API_VERSION: &'static str = "v1";
    const GROUP: &'static str = "";
    const KIND: &'static str = "Pod";
    const VERSION: &'static str = "v1";
    const URL_PATH_SEGMENT: &'static str = "pods";
    type Scope = k8s_openapi::NamespaceResourceScope;
}

impl k8s_openapi::ListableResource for PodView {
    const LIST_KIND: &'static str = "PodList";
}

impl k8s_openapi::Metadata for PodView {
    type Ty = ObjectMeta;

    fn metadata(&self) -> &ObjectMeta {
        &self.metadata
    }

    fn metadata_mut(&mut self) -> &mut ObjectMeta {
        &mut self.metadata
    }
}

impl Serialize for PodView {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut s = serializer.serialize_struct("Pod", 5)?;
        s.serialize_field("apiVersion", "v1")?;
        s.serialize_field("kind", "Pod")?;
        s.serialize_field("metadata", &self.metadata)?;
        s.serialize_field("spec", &self.spec)?;
        s.serialize_field("status", &self.status)?;
        s.end()
    }
}

/// The metadata fields kept; everything else in the wire object is skipped unparsed.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct MetaWire {
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    namespace: Option<String>,
    #[serde(default)]
    uid: Option<String>,
    #[serde(default)]
    resource_version: Option<String>,
    #[serde(default)]
    generate_name: Option<String>,
    #[serde(default)]
    labels: Option<BTreeMap<String, String>>,
    #[serde(default)]
    annotations: Option<BTreeMap<String, String>>,
    #[serde(default)]
    owner_references: Option<Vec<OwnerReference>>,
    #[serde(default)]
    deletion_timestamp: Option<Time>,
    #[serde(default)]
    deletion_grace_period_seconds: Option<i64>,
    #[serde(default)]
    creation_timestamp: Option<Time>,
    #[serde(default)]
    finalizers: Option<Vec<String>>,
}

fn deserialize_meta<'de, D: Deserializer<'de>>(d: D) -> Result<ObjectMeta, D::Error> {
    let Some(w) = Option::<MetaWire>::deserialize(d)? else {
        return Ok(ObjectMeta::default());
    };
    Ok(ObjectMeta {
        name: w.name,
        namespace: w.namespace,
        uid: w.uid,
        resource_version: w.resource_version,
        generate_name: w.generate_name,
        labels: w.labels,
        annotations: w.annotations,
        owner_references: w.owner_references.map(shrink),
        deletion_timestamp: w.deletion_timestamp,
        deletion_grace_period_seconds: w.deletion_grace_period_seconds,
        creation_timestamp: w.creation_timestamp,
        finalizers: w.finalizers.map(shrink),
        ..ObjectMeta::default()
    })
}

fn null_as_default<'de, D, T>(d: D) -> Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + Default,
{
    Ok(Option::<T>::deserialize(d)?.unwrap_or_default())
}

fn shrunk_vec<'de, D, T>(d: D) -> Result<Vec<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    Ok(Option::<Vec<T>>::deserialize(d)?
        .map(shrink)
        .unwrap_or_default())
}

fn shrink<T>(mut v: Vec<T>) -> Vec<T> {
    v.shrink_to_fit();
    v
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A realistic Pod as served by kube-apiserver v1.33 (~2.3 KB of JSON once compacted).
    pub(crate) const FULL_POD_JSON: &str = include_str!("../tests/data/pod.json");

    #[test]
    fn deserializes_full_pod() {
        let pod: PodView = serde_json::from_str(FULL_POD_JSON).unwrap();
        let m = &pod.metadata;
        assert_eq!(m.name.as_deref(), Some("web-7c5ddbdf54-x2x7k"));
        assert_eq!(m.generate_name.as_deref(), Some("web-7c5ddbdf54-"));
        assert_eq!(m.namespace.as_deref(), Some("default"));
        assert_eq!(
            m.uid.as_deref(),
            Some("0d8f3a5e-9b8c-4f57-a1f8-2f4b1e6a7c11")
        );
        assert_eq!(m.resource_version.as_deref(), Some("48213"));
        assert_eq!(
            m.labels.as_ref().unwrap().get("pod-template-hash").unwrap(),
            "7c5ddbdf54"
        );
        assert_eq!(
            m.annotations
                .as_ref()
                .unwrap()
                .get("controller.kubernetes.io/pod-deletion-cost")
                .unwrap(),
            "10"
        );
        let owner = &m.owner_references.as_ref().unwrap()[0];
        assert_eq!(owner.kind, "ReplicaSet");
        assert_eq!(owner.name, "web-7c5ddbdf54");
        assert_eq!(owner.controller, Some(true));
        assert_eq!(owner.block_owner_deletion, Some(true));
        assert!(m.managed_fields.is_none(), "managedFields must be dropped");
        assert!(m.creation_timestamp.is_some());
        assert_eq!(m.deletion_grace_period_seconds, Some(30));
        assert!(m.deletion_timestamp.is_some());
        assert_eq!(
            m.finalizers.as_deref(),
            Some(&["example.com/keep".to_string()][..])
        );

        assert_eq!(pod.spec.node_name.as_deref(), Some("kind-worker"));
        assert_eq!(pod.spec.init_containers.len(), 1);
        assert_eq!(
            pod.spec.init_containers[0].restart_policy.as_deref(),
            Some("Always")
        );

        let s = &pod.status;
        assert_eq!(s.phase.as_deref(), Some("Running"));
        assert_eq!(s.conditions.len(), 5);
        let ready = s.conditions.iter().find(|c| c.type_ == "Ready").unwrap();
        assert_eq!(ready.status, "True");
        assert_eq!(
            ready.last_transition_time.as_ref().unwrap().0.to_string(),
            "2024-05-01T10:00:12Z"
        );
        assert_eq!(s.container_statuses.len(), 1);
        assert_eq!(s.container_statuses[0].restart_count, 2);
        assert!(s.container_statuses[0].ready);
        assert_eq!(s.init_container_statuses[0].name, "istio-proxy");
        assert_eq!(s.init_container_statuses[0].restart_count, 1);
        assert!(s.start_time.is_some());
    }

    #[test]
    fn nulls_and_missing_sections_default() {
        let pod: PodView =
            serde_json::from_str(r#"{"metadata":null,"spec":null,"status":null}"#).unwrap();
        assert_eq!(pod, PodView::default());
        let pod: PodView = serde_json::from_str("{}").unwrap();
        assert_eq!(pod, PodView::default());
    }

    /// Found by `tests/it/pod_view_fuzz.rs`: a null scalar (Go's encoding/json and k8s-openapi read
    /// it as the zero value) made the whole pod, and so the whole pod list, fail to decode.
    #[test]
    fn null_scalars_are_zero_values() {
        let pod: PodView = serde_json::from_str(
            r#"{"spec": {"initContainers": [{"name": null}]},
                "status": {"conditions": [{"type": null, "status": null}],
                           "containerStatuses": [{"name": null, "ready": null, "restartCount": null}]}}"#,
        )
        .unwrap();
        assert_eq!(pod.spec.init_containers, vec![InitContainerView::default()]);
        assert_eq!(pod.status.conditions, vec![PodConditionView::default()]);
        assert_eq!(
            pod.status.container_statuses,
            vec![ContainerStatusView::default()]
        );
    }

    #[test]
    fn roundtrips_through_serialize() {
        let pod: PodView = serde_json::from_str(FULL_POD_JSON).unwrap();
        let json = serde_json::to_value(&pod).unwrap();
        assert_eq!(json["kind"], "Pod");
        assert_eq!(json["apiVersion"], "v1");
        let back: PodView = serde_json::from_value(json).unwrap();
        assert_eq!(back, pod);
    }

    #[test]
    fn resource_constants() {
        use k8s_openapi::Resource;
        assert_eq!(PodView::API_VERSION, "v1");
        assert_eq!(PodView::KIND, "Pod");
        assert_eq!(PodView::URL_PATH_SEGMENT, "pods");
        assert_eq!(<PodView as kube::Resource>::plural(&()), "pods");
    }
}
