//! The ReplicaSet controller on an embedded kcm-testenv cluster with simulated scheduler and
//! kubelets: it creates 3 pods, replaces a pod deleted by hand, then scales down to 1, writing
//! the ReplicaSet's status all along.
//! Run: `cargo run -p kcm-replicaset --example replicaset`

use std::time::{Duration, Instant};

use k8s_openapi::api::{apps::v1::ReplicaSet, core::v1::Pod};
use kcm_controller::pod_util::is_pod_ready;
use kcm_informer::{CancellationToken, InformerFactory, InformerOptions};
use kcm_replicaset::ReplicaSetController;
use kcm_testenv::TestCluster;
use kube::api::{Api, DeleteParams, ListParams, Patch, PatchParams, PostParams};

async fn show_until(rss: &Api<ReplicaSet>, pods: &Api<Pod>, want: usize) -> anyhow::Result<()> {
    let (start, mut last) = (Instant::now(), String::new());
    while start.elapsed() < Duration::from_secs(30) {
        let status = rss.get("web").await?.status.unwrap_or_default();
        let list = pods.list(&ListParams::default()).await?.items;
        let ready = status.ready_replicas.unwrap_or(0);
        let mut line = format!("status: {ready}/{} ready; pods:", status.replicas);
        for p in &list {
            line += &format!(" {}", p.metadata.name.as_deref().unwrap_or_default());
        }
        if line != last {
            println!("{:>5} ms  {line}", start.elapsed().as_millis());
            last = line;
        }
        let all_ready = list.len() == want && list.iter().all(is_pod_ready);
        if all_ready && usize::try_from(ready) == Ok(want) {
            return Ok(());
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    anyhow::bail!("not converged in 30 s (last: {last})")
}

const WEB: &str = r#"{"metadata": {"name": "web"}, "spec": {"replicas": 3,
  "selector": {"matchLabels": {"app": "web"}},
  "template": {"metadata": {"labels": {"app": "web"}},
               "spec": {"containers": [{"name": "web", "image": "nginx"}]}}}}"#;

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    // Pods turn Ready 200 ms after binding; a graceful deletion takes at most 2 s.
    let cluster = TestCluster::builder().nodes(3).start().await?;
    let client = cluster.client();
    let factory = InformerFactory::new(client.clone(), InformerOptions::default());
    let controller = ReplicaSetController::new(client.clone(), &factory, Default::default())?;
    let cancel = CancellationToken::new();
    factory.start(&cancel); // after the controller asked for its informers
    let task = tokio::spawn(controller.run(cancel.clone()));

    let rss: Api<ReplicaSet> = Api::namespaced(client.clone(), "default");
    let pods: Api<Pod> = Api::namespaced(client, "default");
    let web: ReplicaSet = serde_json::from_str(WEB)?;
    rss.create(&PostParams::default(), &web).await?;
    println!("created ReplicaSet web with 3 replicas");
    show_until(&rss, &pods, 3).await?;

    let list = pods.list(&ListParams::default()).await?.items;
    let victim = list[0].metadata.name.clone().unwrap_or_default();
    pods.delete(&victim, &DeleteParams::default().grace_period(0))
        .await?;
    println!("deleted pod {victim} by hand");
    show_until(&rss, &pods, 3).await?;

    let scale = Patch::Merge(serde_json::json!({"spec": {"replicas": 1}}));
    rss.patch("web", &PatchParams::default(), &scale).await?;
    println!("scaled to 1");
    show_until(&rss, &pods, 1).await?;

    cancel.cancel();
    task.await?;
    factory.shutdown().await;
    cluster.shutdown().await;
    Ok(())
}
