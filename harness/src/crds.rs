//! Installing CustomResourceDefinitions and waiting until the API server serves them.

use std::time::Duration;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, PostParams};

/// Creates `crd` (or finds it already there) and waits until its `Established` condition is
/// true, for at most `patience`.
pub(crate) async fn install(
    client: &kube::Client,
    crd: &CustomResourceDefinition,
    patience: Duration,
) -> anyhow::Result<()> {
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());
    let name = crd.metadata.name.clone().unwrap_or_default();
    match crds.create(&PostParams::default(), crd).await {
        Ok(_) => {}
        Err(kube::Error::Api(s)) if s.code == 409 => {}
        Err(e) => return Err(anyhow::Error::new(e).context(format!("installing the CRD {name}"))),
    }
    let deadline = tokio::time::Instant::now() + patience;
    loop {
        let current = crds.get(&name).await?;
        if established(&current) {
            return Ok(());
        }
        if tokio::time::Instant::now() > deadline {
            anyhow::bail!(
                "the CRD {name} was not established after {patience:?}; its conditions: {:?}",
                current.status.and_then(|s| s.conditions)
            );
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Whether the CRD's `Established` condition is `True`.
fn established(crd: &CustomResourceDefinition) -> bool {
    crd.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .is_some_and(|cs| {
            cs.iter()
                .any(|c| c.type_ == "Established" && c.status == "True")
        })
}
