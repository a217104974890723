//! kube-rs 5.0's discovery against the server: `Discovery::run_aggregated` (aggregated
//! discovery, two requests), `Discovery::run` (legacy discovery, one request per group
//! version) and `oneshot::group` must find the same kinds, capabilities and subresources, custom
//! resources included. On a real kube-apiserver with `KCM_SPEC_SERVER` (testenv/README.md).

use crate::common::crd::{install, two_versions};
use crate::common::server::Server;
use kube::discovery::{self, ApiCapabilities, ApiResource, Discovery, Scope, verbs};

fn find<'a>(
    found: &'a [(ApiResource, ApiCapabilities)],
    plural: &str,
) -> &'a (ApiResource, ApiCapabilities) {
    found
        .iter()
        .find(|(r, _)| r.plural == plural)
        .unwrap_or_else(|| panic!("{plural} not discovered"))
}

fn check_apps(d: &Discovery) {
    let apps = d.get("apps").expect("apps discovered");
    assert_eq!(apps.preferred_version(), Some("v1"));
    let found = apps.versioned_resources("v1");
    let (r, caps) = find(&found, "deployments");
    assert_eq!(
        (r.kind.as_str(), r.api_version.as_str()),
        ("Deployment", "apps/v1")
    );
    assert_eq!(caps.scope, Scope::Namespaced);
    for v in [
        verbs::CREATE,
        verbs::LIST,
        verbs::WATCH,
        verbs::PATCH,
        verbs::DELETE_COLLECTION,
    ] {
        assert!(caps.supports_operation(v), "deployments {v}");
    }
    let subs: Vec<&str> = caps
        .subresources
        .iter()
        .map(|(s, _)| s.plural.as_str())
        .collect();
    assert!(
        subs.contains(&"scale") && subs.contains(&"status"),
        "{subs:?}"
    );
    let core = d.get("").expect("core discovered");
    let found = core.versioned_resources("v1");
    let (ns, caps) = find(&found, "namespaces");
    assert_eq!(
        (ns.kind.as_str(), caps.scope.clone()),
        ("Namespace", Scope::Cluster)
    );
    assert!(!caps.supports_operation(verbs::DELETE_COLLECTION));
}

#[tokio::test]
async fn kube_rs_discovery_aggregated_and_legacy() {
    let env = Server::start("kubedisc").await;
    let group = env.group("w");
    install(&env, &two_versions(&group)).await;
    let client = env.client();

    let aggregated = Discovery::new(client.clone())
        .run_aggregated()
        .await
        .expect("aggregated discovery");
    let legacy = Discovery::new(client.clone())
        .run()
        .await
        .expect("legacy discovery");
    for d in [&aggregated, &legacy] {
        check_apps(d);
        let g = d.get(&group).expect("the CRD's group");
        let versions: Vec<&str> = g.versions().collect();
        assert_eq!(versions, ["v1", "v1beta1"]);
        let found = g.versioned_resources("v1");
        let (w, caps) = find(&found, "widgets");
        assert_eq!(w.kind, "Widget");
        assert!(caps.supports_operation(verbs::CREATE));
        assert_eq!(caps.subresources.len(), 2);
    }
    // the aggregated and legacy views agree on every group they both see
    let mut a: Vec<&str> = aggregated.groups().map(|g| g.name()).collect();
    let mut l: Vec<&str> = legacy.groups().map(|g| g.name()).collect();
    a.sort_unstable();
    l.sort_unstable();
    assert_eq!(a, l);

    let apps = discovery::group(&client, "apps")
        .await
        .expect("oneshot apps");
    let (r, _) = apps.recommended_kind("Deployment").expect("Deployment");
    assert_eq!(r.plural, "deployments");
    let crd_group = discovery::group(&client, &group)
        .await
        .expect("oneshot CRD group");
    assert_eq!(crd_group.preferred_version(), Some("v1"));
    env.finish().await;
}
