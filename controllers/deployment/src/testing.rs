//! Builders shared by the unit tests (mirroring upstream's `newDeployment`, `newReplicaSet`,
//! `rs(...)` fixtures).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStatus, DeploymentStrategy, ReplicaSet, ReplicaSetSpec,
    ReplicaSetStatus, RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;

/// Seconds since the epoch -> `Time`.
pub fn ts(secs: i64) -> Time {
    Time(Timestamp::from_second(secs).expect("valid test timestamp"))
}

/// Seconds since the epoch -> `Timestamp`.
pub fn at(secs: i64) -> Timestamp {
    Timestamp::from_second(secs).expect("valid test timestamp")
}

/// A labels map.
pub fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| ((*k).to_string(), (*v).to_string()))
        .collect()
}

/// A pod template with one container running `image`, labelled `foo=bar`.
pub fn template(image: &str) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(labels(&[("foo", "bar")])),
            ..Default::default()
        }),
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "app".into(),
                image: Some(image.into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
    }
}

/// `IntOrString::Int`.
pub fn int(v: i32) -> IntOrString {
    IntOrString::Int(v)
}

/// `IntOrString::String`.
pub fn pct(v: &str) -> IntOrString {
    IntOrString::String(v.to_string())
}

/// A RollingUpdate deployment (`newDeployment` in upstream tests) with `foo=bar` selector.
pub fn rolling_deployment(
    name: &str,
    replicas: i32,
    max_surge: Option<IntOrString>,
    max_unavailable: Option<IntOrString>,
) -> Deployment {
    Deployment {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            uid: Some(format!("uid-{name}")),
            annotations: Some(BTreeMap::new()),
            ..Default::default()
        },
        spec: DeploymentSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels(&[("foo", "bar")])),
                ..Default::default()
            },
            strategy: Some(DeploymentStrategy {
                type_: Some("RollingUpdate".into()),
                rolling_update: Some(RollingUpdateDeployment {
                    max_surge,
                    max_unavailable,
                }),
            }),
            template: template("nginx"),
            ..Default::default()
        },
        status: Some(DeploymentStatus::default()),
    }
}

/// A Recreate deployment.
pub fn recreate_deployment(name: &str, replicas: i32) -> Deployment {
    let mut d = rolling_deployment(name, replicas, None, None);
    {
        let spec = &mut d.spec;
        spec.strategy = Some(DeploymentStrategy {
            type_: Some("Recreate".into()),
            rolling_update: None,
        });
    }
    d
}

/// A ReplicaSet `name` with `spec.replicas`, `status.availableReplicas`, created at `created`.
pub fn rs(name: &str, replicas: i32, available: i32, created: i64) -> ReplicaSet {
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            uid: Some(format!("uid-{name}")),
            creation_timestamp: Some(ts(created)),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            selector: LabelSelector {
                match_labels: Some(labels(&[("foo", "bar")])),
                ..Default::default()
            },
            template: Some(template(name)),
            ..Default::default()
        },
        status: Some(ReplicaSetStatus {
            replicas,
            available_replicas: Some(available),
            ..Default::default()
        }),
    }
}

/// Sets `status.replicas`.
pub fn with_status_replicas(mut r: ReplicaSet, n: i32) -> ReplicaSet {
    if let Some(s) = r.status.as_mut() {
        s.replicas = n;
    }
    r
}

/// Adds an annotation.
pub fn with_annotation(mut r: ReplicaSet, k: &str, v: &str) -> ReplicaSet {
    r.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(k.into(), v.into());
    r
}

/// Sets the deployment's strategy surge/unavailable.
pub fn set_rolling(d: &mut Deployment, surge: IntOrString, unav: IntOrString) {
    {
        let spec = &mut d.spec;
        spec.strategy = Some(DeploymentStrategy {
            type_: Some("RollingUpdate".into()),
            rolling_update: Some(RollingUpdateDeployment {
                max_surge: Some(surge),
                max_unavailable: Some(unav),
            }),
        });
    }
}

/// Mutable access to the spec of a test deployment.
pub fn spec_mut(d: &mut Deployment) -> &mut DeploymentSpec {
    &mut d.spec
}

/// Mutable access to the status of a test deployment.
pub fn status_mut(d: &mut Deployment) -> &mut DeploymentStatus {
    d.status.get_or_insert_with(Default::default)
}
