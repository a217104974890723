//! The Deployment a Foo owns (upstream's `newDeployment`) and the ownership test
//! (`metav1.IsControlledBy`).

use std::collections::BTreeMap;

use k8s_openapi::api::apps::v1::{Deployment, DeploymentSpec};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, OwnerReference};
use kube::Resource;

use crate::foo::Foo;

/// The image of the Deployment's one container, as upstream's sample.
pub const IMAGE: &str = "nginx:latest";

/// The labels of the Deployment's selector and pod template: `app=nginx` and
/// `controller=<foo name>`.
pub fn labels(foo: &Foo) -> BTreeMap<String, String> {
    BTreeMap::from([
        ("app".to_string(), "nginx".to_string()),
        (
            "controller".to_string(),
            foo.metadata.name.clone().unwrap_or_default(),
        ),
    ])
}

/// The Deployment `foo` asks for: `spec.deploymentName` in the Foo's namespace, `spec.replicas`
/// replicas of one nginx container, controlled by the Foo (so deleting the Foo deletes it).
pub fn new_deployment(foo: &Foo) -> Deployment {
    let labels = labels(foo);
    Deployment {
        metadata: ObjectMeta {
            name: Some(foo.spec.deployment_name.clone()),
            namespace: foo.metadata.namespace.clone(),
            owner_references: foo.controller_owner_ref(&()).map(|r| {
                vec![OwnerReference {
                    // as metav1.NewControllerRef: the owner waits for it in foreground deletion
                    block_owner_deletion: Some(true),
                    ..r
                }]
            }),
            ..ObjectMeta::default()
        },
        spec: DeploymentSpec {
            replicas: foo.spec.replicas,
            selector: LabelSelector {
                match_labels: Some(labels.clone()),
                ..LabelSelector::default()
            },
            template: PodTemplateSpec {
                metadata: Some(ObjectMeta {
                    labels: Some(labels),
                    ..ObjectMeta::default()
                }),
                spec: Some(PodSpec {
                    containers: vec![Container {
                        name: "nginx".to_string(),
                        image: Some(IMAGE.to_string()),
                        ..Container::default()
                    }],
                    ..PodSpec::default()
                }),
            },
            ..DeploymentSpec::default()
        },
        ..Deployment::default()
    }
}

/// The controller reference of `deployment`, if any.
pub fn controller_of(deployment: &Deployment) -> Option<&OwnerReference> {
    deployment
        .metadata
        .owner_references
        .iter()
        .flatten()
        .find(|r| r.controller == Some(true))
}

/// Whether `deployment`'s controller reference is `foo` (same UID).
pub fn is_controlled_by(deployment: &Deployment, foo: &Foo) -> bool {
    match (controller_of(deployment), foo.metadata.uid.as_deref()) {
        (Some(r), Some(uid)) => r.uid == uid,
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::foo::testing::foo;

    #[test]
    fn new_deployment_is_owned_and_labelled() {
        let d = new_deployment(&foo("example-foo", "example-foo", Some(3)));
        assert_eq!(d.metadata.name.as_deref(), Some("example-foo"));
        assert_eq!(d.metadata.namespace.as_deref(), Some("default"));
        let owner = controller_of(&d).expect("a controller reference");
        assert_eq!(
            (
                owner.api_version.as_str(),
                owner.kind.as_str(),
                owner.name.as_str()
            ),
            ("samplecontroller.k8s.io/v1alpha1", "Foo", "example-foo")
        );
        assert_eq!(
            (owner.uid.as_str(), owner.block_owner_deletion),
            ("uid-example-foo", Some(true))
        );
        let spec = d.spec;
        assert_eq!(spec.replicas, Some(3));
        let want = BTreeMap::from([
            ("app".to_string(), "nginx".to_string()),
            ("controller".to_string(), "example-foo".to_string()),
        ]);
        assert_eq!(spec.selector.match_labels.as_ref(), Some(&want));
        assert_eq!(spec.template.metadata.and_then(|m| m.labels), Some(want));
        let containers = spec.template.spec.expect("pod spec").containers;
        assert_eq!(containers.len(), 1);
        assert_eq!(containers[0].image.as_deref(), Some(IMAGE));
    }

    #[test]
    fn replicas_left_to_the_deployment_default_when_absent() {
        let d = new_deployment(&foo("f", "d", None));
        assert_eq!(d.spec.replicas, None);
    }

    #[test]
    fn controlled_by_compares_uids() {
        let owner = foo("a", "d", Some(1));
        let d = new_deployment(&owner);
        assert!(is_controlled_by(&d, &owner));
        // A Foo of the same name recreated (new UID) does not own the old Deployment.
        let mut recreated = owner.clone();
        recreated.metadata.uid = Some("uid-other".into());
        assert!(!is_controlled_by(&d, &recreated));
        // A Deployment without owner references is nobody's.
        let mut orphan = d.clone();
        orphan.metadata.owner_references = None;
        assert!(!is_controlled_by(&orphan, &owner));
    }
}
