//! A rolling update on an embedded kcm-testenv cluster with simulated scheduler and kubelets:
//! the Deployment and ReplicaSet controllers bring up 3 pods, then a new image rolls out one pod
//! at a time (default strategy, 25% of 3: maxSurge 1, maxUnavailable 0), the old ReplicaSet
//! scaled down as the new one becomes ready.
//! Run: `cargo run -p kcm-deployment --example rollout`

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use kcm_deployment::DeploymentController;
use kcm_informer::{CancellationToken, InformerFactory, InformerOptions};
use kcm_replicaset::ReplicaSetController;
use kcm_testenv::TestCluster;
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};
use serde_json::json;

async fn show_rollout(api: &Api<Deployment>, rss: &Api<ReplicaSet>) -> anyhow::Result<()> {
    let (start, mut last) = (Instant::now(), String::new());
    while start.elapsed() < Duration::from_secs(30) {
        let mut line = String::new();
        for rs in rss.list(&ListParams::default()).await?.items {
            let ready = rs.status.and_then(|s| s.ready_replicas).unwrap_or(0);
            let (name, want) = (rs.metadata.name.unwrap_or_default(), rs.spec.replicas);
            line += &format!("  {name} {ready}/{}", want.unwrap_or(0));
        }
        if line != last {
            println!("{:>5} ms {line}", start.elapsed().as_millis());
            last = line;
        }
        let d = api.get("web").await?;
        let s = d.status.unwrap_or_default();
        let done = [s.replicas, s.updated_replicas, s.available_replicas] == [Some(3); 3];
        if done && s.observed_generation == d.metadata.generation {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    anyhow::bail!("the rollout did not complete in 30 s (last: {last})")
}

const WEB: &str = r#"{"metadata": {"name": "web"}, "spec": {"replicas": 3,
  "selector": {"matchLabels": {"app": "web"}},
  "template": {"metadata": {"labels": {"app": "web"}},
               "spec": {"containers": [{"name": "web", "image": "nginx:1.29"}]}}}}"#;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let ms = Duration::from_millis(100);
    let cluster = TestCluster::builder()
        .pod_ready_after(ms)
        .max_grace(ms)
        .start()
        .await?;
    let client = cluster.client();
    let factory = InformerFactory::new(client.clone(), InformerOptions::default());
    let dc = DeploymentController::new(client.clone(), &factory, Default::default())?;
    let rc = ReplicaSetController::new(client.clone(), &factory, Default::default())?;
    let cancel = CancellationToken::new();
    factory.start(&cancel); // after every controller asked for its informers
    let dc = tokio::spawn(dc.run(cancel.clone()));
    let rc = tokio::spawn(rc.run(cancel.clone()));

    let api: Api<Deployment> = Api::namespaced(client.clone(), "default");
    let rss: Api<ReplicaSet> = Api::namespaced(client, "default");
    let web: Deployment = serde_json::from_str(WEB)?;
    api.create(&PostParams::default(), &web).await?;
    println!("created Deployment web: 3 replicas of nginx:1.29");
    show_rollout(&api, &rss).await?;

    let containers = json!([{"name": "web", "image": "nginx:1.30"}]);
    let image = json!({"spec": {"template": {"spec": {"containers": containers}}}});
    let patch = Patch::Strategic(image);
    api.patch("web", &PatchParams::default(), &patch).await?;
    println!("image changed to nginx:1.30");
    show_rollout(&api, &rss).await?;

    cancel.cancel();
    tokio::try_join!(dc, rc)?;
    factory.shutdown().await;
    cluster.shutdown().await;
    Ok(())
}
