//! The `Foo` custom resource (`samplecontroller.k8s.io/v1alpha1`, namespaced) and its CRD.
//!
//! The Rust type comes from kube's `CustomResource` derive, the CRD from the type:
//! [`crd`] is what `sample-controller crd` prints and what `artifacts/crd.yaml` holds.

use std::collections::BTreeMap;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::{CustomResource, CustomResourceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

/// The API group of [`Foo`].
pub const GROUP: &str = "samplecontroller.k8s.io";
/// The served (and stored) version of [`Foo`].
pub const VERSION: &str = "v1alpha1";

/// The annotation kube-apiserver requires on CRDs of groups under `k8s.io` and `kubernetes.io`
/// (a URL of the approving review, or a reason starting with `unapproved`).
pub const API_APPROVED_ANNOTATION: &str = "api-approved.kubernetes.io";

/// What a `Foo` asks for: a Deployment named `deploymentName` with `replicas` pods.
#[derive(CustomResource, Deserialize, Serialize, Clone, Debug, Default, PartialEq, JsonSchema)]
#[kube(
    group = "samplecontroller.k8s.io",
    version = "v1alpha1",
    kind = "Foo",
    plural = "foos",
    namespaced,
    status = "FooStatus",
    doc = "A Foo: a Deployment the sample controller creates and scales for it.",
    printcolumn = r#"{"name":"Deployment","type":"string","jsonPath":".spec.deploymentName"}"#,
    printcolumn = r#"{"name":"Replicas","type":"integer","jsonPath":".spec.replicas"}"#,
    printcolumn = r#"{"name":"Available","type":"integer","jsonPath":".status.availableReplicas"}"#
)]
#[serde(rename_all = "camelCase")]
pub struct FooSpec {
    /// The name of the Deployment the Foo owns (in the Foo's namespace).
    pub deployment_name: String,
    /// The Deployment's `spec.replicas`; absent leaves the Deployment's own default (1).
    #[schemars(range(min = 1, max = 10))]
    pub replicas: Option<i32>,
}

/// What the controller last saw of the Foo's Deployment.
#[derive(Deserialize, Serialize, Clone, Debug, Default, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct FooStatus {
    /// The Deployment's `status.availableReplicas`.
    pub available_replicas: i32,
}

impl Foo {
    /// The Foo's `status.availableReplicas`, 0 before the controller wrote it.
    pub fn available_replicas(&self) -> i32 {
        self.status.as_ref().map_or(0, |s| s.available_replicas)
    }
}

/// The CustomResourceDefinition of [`Foo`], as installed in a cluster.
///
/// `samplecontroller.k8s.io` is under `k8s.io`, a group kube-apiserver protects: the CRD says
/// in [`API_APPROVED_ANNOTATION`] that it is not an approved Kubernetes API.
pub fn crd() -> CustomResourceDefinition {
    let mut crd = Foo::crd();
    crd.metadata.annotations = Some(BTreeMap::from([(
        API_APPROVED_ANNOTATION.to_string(),
        "unapproved, the kcm-rs sample controller's example resource".to_string(),
    )]));
    crd
}

/// [`crd`] as YAML (the content of `artifacts/crd.yaml`).
///
/// # Errors
///
/// Only if serde_yaml cannot serialize the CRD.
pub fn crd_yaml() -> Result<String, serde_yaml::Error> {
    serde_yaml::to_string(&crd())
}

/// Foos for the unit tests.
#[cfg(test)]
pub(crate) mod testing {
    use super::{Foo, FooSpec};

    /// A Foo in `default` with UID `uid-<name>`.
    pub(crate) fn foo(name: &str, deployment: &str, replicas: Option<i32>) -> Foo {
        let mut foo = Foo::new(
            name,
            FooSpec {
                deployment_name: deployment.to_string(),
                replicas,
            },
        );
        foo.metadata.namespace = Some("default".into());
        foo.metadata.uid = Some(format!("uid-{name}"));
        foo
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use kube::Resource;

    #[test]
    fn store_key_is_namespace_and_name() {
        let foo = testing::foo("example-foo", "d", None);
        assert_eq!(
            kcm_store::Object::key(&foo).to_string(),
            "default/example-foo"
        );
        assert_eq!(Foo::api_version(&()), "samplecontroller.k8s.io/v1alpha1");
    }

    #[test]
    fn crd_is_upstreams_shape() {
        let crd = crd();
        assert_eq!(
            crd.metadata.name.as_deref(),
            Some("foos.samplecontroller.k8s.io")
        );
        assert_eq!(crd.spec.scope, "Namespaced");
        assert_eq!(crd.spec.names.kind, "Foo");
        let [version] = crd.spec.versions.as_slice() else {
            panic!("one version expected: {:?}", crd.spec.versions);
        };
        assert!(version.served && version.storage);
        assert!(
            version
                .subresources
                .as_ref()
                .is_some_and(|s| s.status.is_some())
        );
        let schema = serde_json::to_value(&version.schema).expect("schema serializes");
        let spec = &schema["openAPIV3Schema"]["properties"]["spec"];
        assert_eq!(spec["properties"]["deploymentName"]["type"], "string");
        assert_eq!(spec["properties"]["replicas"]["type"], "integer");
        // k8s-openapi holds the bounds as f64: they serialize as 1.0 and 10.0
        assert_eq!(
            spec["properties"]["replicas"]["minimum"].as_f64(),
            Some(1.0)
        );
        assert_eq!(
            spec["properties"]["replicas"]["maximum"].as_f64(),
            Some(10.0)
        );
        assert_eq!(spec["required"], serde_json::json!(["deploymentName"]));
        let status = &schema["openAPIV3Schema"]["properties"]["status"];
        assert_eq!(status["properties"]["availableReplicas"]["type"], "integer");
    }

    #[test]
    fn crd_is_marked_unapproved() {
        let crd = crd();
        let annotation = crd
            .metadata
            .annotations
            .as_ref()
            .and_then(|a| a.get(API_APPROVED_ANNOTATION));
        assert!(annotation.is_some_and(|v| v.starts_with("unapproved")));
    }
}
