//! The sample controller's tests start with kcm-harness: kcm-testenv in-process (2 simulated
//! nodes whose pods become Ready), or the cluster of `KCM_TEST_KUBECONFIG`; the Foo CRD
//! installed, a namespace of the test's own, and the controllers running in-process on
//! kcm-manager (as the binary runs them) scoped to that namespace.

use k8s_openapi::api::core::v1::Event;
use kcm_harness::Harness;
use kcm_sample_controller::{FooControllerConfig, controllers, crd};
use kube::api::ListParams;

/// `0` on a cluster whose kube-controller-manager runs the Deployment and ReplicaSet
/// controllers: the tests then do not run kcm's.
pub const BUILTIN_ENV: &str = "KCM_SAMPLE_BUILTIN_CONTROLLERS";

/// The harness with the Foo CRD and the sample's controllers (kcm's two beside them unless
/// [`BUILTIN_ENV`] is `0`), in a namespace `<prefix>-<random>`.
pub async fn start(prefix: &'static str) -> anyhow::Result<Harness> {
    let with_builtin = std::env::var(BUILTIN_ENV).as_deref() != Ok("0");
    controllers(FooControllerConfig::default(), with_builtin)
        .into_iter()
        .fold(Harness::new(prefix).crd(crd()), |h, c| h.controller(c))
        .start()
        .await
}

/// The events of the Foo named `name`, as `(type, reason, message, source component)`.
pub async fn events_of(h: &Harness, name: &str) -> anyhow::Result<Vec<[String; 4]>> {
    let events = h.api::<Event>().list(&ListParams::default()).await?;
    Ok(events
        .items
        .into_iter()
        .filter(|e| e.involved_object.name.as_deref() == Some(name))
        .filter(|e| e.involved_object.kind.as_deref() == Some("Foo"))
        .map(|e| {
            [
                e.type_.unwrap_or_default(),
                e.reason.unwrap_or_default(),
                e.message.unwrap_or_default(),
                e.source.and_then(|s| s.component).unwrap_or_default(),
            ]
        })
        .collect())
}
