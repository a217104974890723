//! What one sync of a Foo does, decided from the Foo and the cached Deployment alone (the
//! decisions of upstream's `syncHandler`); the I/O is in [`crate::sync`].

use k8s_openapi::api::apps::v1::Deployment;

use crate::deployment::{is_controlled_by, new_deployment};
use crate::foo::{Foo, FooStatus};

/// Event reason when a Foo was synced (upstream `SuccessSynced`).
pub const REASON_SYNCED: &str = "Synced";
/// Event message when a Foo was synced (upstream `MessageResourceSynced`).
pub const MESSAGE_SYNCED: &str = "Foo synced successfully";
/// Event reason when the Deployment exists and another owner controls it (upstream
/// `ErrResourceExists`).
pub const REASON_RESOURCE_EXISTS: &str = "ErrResourceExists";

/// The message of an [`REASON_RESOURCE_EXISTS`] event and of the sync error (upstream
/// `MessageResourceExists`, `Resource %q already exists and is not managed by Foo`).
pub fn message_resource_exists(deployment: &str) -> String {
    format!("Resource {deployment:?} already exists and is not managed by Foo")
}

/// What to do about the Foo's Deployment.
#[derive(Debug, Clone, PartialEq)]
pub enum DeploymentPlan {
    /// `spec.deploymentName` is empty: nothing until the Foo changes (upstream logs the error and
    /// does not requeue).
    NoDeploymentName,
    /// No such Deployment yet: create this one.
    Create(Box<Deployment>),
    /// A Deployment of that name exists and the Foo does not control it: record a warning event
    /// with this message and fail the sync (it is retried with backoff).
    NotOwned(String),
    /// The Foo controls the Deployment but `spec.replicas` differ: write this update (the cached
    /// Deployment with the Foo's replicas, so the write conflicts if the cache was stale).
    Update(Box<Deployment>),
    /// The Deployment is as the Foo wants it.
    UpToDate,
}

/// Decides what the sync of `foo` does about `existing`, the Deployment named
/// `spec.deploymentName` in the Foo's namespace as the cache has it.
///
/// Differs from upstream's sample in one way: upstream replaces the whole Deployment with a
/// fresh [`new_deployment`] (no resourceVersion) when the replicas differ, which also drops
/// annotations the Deployment controller wrote; this keeps the cached object and changes only
/// `spec.replicas`.
pub fn plan(foo: &Foo, existing: Option<&Deployment>) -> DeploymentPlan {
    if foo.spec.deployment_name.is_empty() {
        return DeploymentPlan::NoDeploymentName;
    }
    let Some(existing) = existing else {
        return DeploymentPlan::Create(Box::new(new_deployment(foo)));
    };
    if !is_controlled_by(existing, foo) {
        return DeploymentPlan::NotOwned(message_resource_exists(&foo.spec.deployment_name));
    }
    let current = existing.spec.replicas;
    match foo.spec.replicas {
        Some(want) if current != Some(want) => {
            let mut updated = existing.clone();
            updated.spec.replicas = Some(want);
            DeploymentPlan::Update(Box::new(updated))
        }
        _ => DeploymentPlan::UpToDate,
    }
}

/// The status `foo` should have for `deployment`, or `None` when it already has it (upstream
/// writes the status on every sync; a write that changes nothing is left out here).
pub fn new_status(foo: &Foo, deployment: &Deployment) -> Option<FooStatus> {
    let available = deployment
        .status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0);
    let want = FooStatus {
        available_replicas: available,
    };
    (foo.status.as_ref() != Some(&want)).then_some(want)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::foo::testing::foo;
    use k8s_openapi::api::apps::v1::DeploymentStatus;

    fn with_replicas(mut d: Deployment, replicas: Option<i32>) -> Deployment {
        d.spec.replicas = replicas;
        d
    }

    #[test]
    fn plans() {
        let owner = foo("example-foo", "example-foo", Some(2));
        let owned = new_deployment(&owner);
        let mut foreign = owned.clone();
        foreign.metadata.owner_references = None;
        let mut other_uid = owned.clone();
        if let Some(refs) = other_uid.metadata.owner_references.as_mut() {
            refs[0].uid = "uid-old-foo".into();
        }
        let unset = foo("example-foo", "example-foo", None);
        let nameless = foo("example-foo", "", Some(2));
        let not_owned = DeploymentPlan::NotOwned(
            r#"Resource "example-foo" already exists and is not managed by Foo"#.into(),
        );
        let cases: Vec<(&str, &Foo, Option<Deployment>, DeploymentPlan)> = vec![
            ("no name", &nameless, None, DeploymentPlan::NoDeploymentName),
            (
                "no name, even if one exists",
                &nameless,
                Some(foreign.clone()),
                DeploymentPlan::NoDeploymentName,
            ),
            (
                "create",
                &owner,
                None,
                DeploymentPlan::Create(Box::new(owned.clone())),
            ),
            ("not owned", &owner, Some(foreign), not_owned.clone()),
            (
                "owned by a former Foo of that name",
                &owner,
                Some(other_uid),
                not_owned,
            ),
            (
                "up to date",
                &owner,
                Some(owned.clone()),
                DeploymentPlan::UpToDate,
            ),
            (
                "scale up",
                &owner,
                Some(with_replicas(owned.clone(), Some(1))),
                DeploymentPlan::Update(Box::new(owned.clone())),
            ),
            (
                "replicas defaulted by the server differ",
                &owner,
                Some(with_replicas(owned.clone(), None)),
                DeploymentPlan::Update(Box::new(owned.clone())),
            ),
            (
                "Foo without replicas leaves the Deployment's",
                &unset,
                Some(with_replicas(owned, Some(5))),
                DeploymentPlan::UpToDate,
            ),
        ];
        for (name, foo, existing, want) in cases {
            assert_eq!(plan(foo, existing.as_ref()), want, "{name}");
        }
    }

    #[test]
    fn update_keeps_what_others_wrote() {
        let owner = foo("f", "d", Some(4));
        let mut cached = with_replicas(new_deployment(&owner), Some(1));
        cached.metadata.resource_version = Some("42".into());
        cached.metadata.annotations = Some(
            [(
                "deployment.kubernetes.io/revision".to_string(),
                "1".to_string(),
            )]
            .into(),
        );
        let DeploymentPlan::Update(updated) = plan(&owner, Some(&cached)) else {
            panic!("an update expected");
        };
        assert_eq!(updated.metadata.resource_version.as_deref(), Some("42"));
        assert_eq!(updated.metadata.annotations, cached.metadata.annotations);
        assert_eq!(updated.spec.replicas, Some(4));
    }

    #[test]
    fn status_follows_available_replicas() {
        let mut f = foo("f", "d", Some(3));
        let mut d = new_deployment(&f);
        // No status yet on either side: the Foo reports 0 once.
        assert_eq!(
            new_status(&f, &d),
            Some(FooStatus {
                available_replicas: 0
            })
        );
        d.status = Some(DeploymentStatus {
            available_replicas: Some(2),
            ..DeploymentStatus::default()
        });
        assert_eq!(
            new_status(&f, &d),
            Some(FooStatus {
                available_replicas: 2
            })
        );
        f.status = Some(FooStatus {
            available_replicas: 2,
        });
        assert_eq!(new_status(&f, &d), None);
    }

    #[test]
    fn message_quotes_like_go() {
        assert_eq!(
            message_resource_exists("web"),
            r#"Resource "web" already exists and is not managed by Foo"#
        );
    }
}
