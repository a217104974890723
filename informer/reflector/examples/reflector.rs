//! A reflector against an embedded kcm-testenv API server: the initial list arrives as
//! `Replaced` deltas closed by `ListComplete`, then the watch delivers `Added`, `Updated` and
//! `Deleted` in order.
//!
//! `cargo run -p kcm-reflector --example reflector`

use futures::StreamExt;
use k8s_openapi::api::coordination::v1::{Lease, LeaseSpec};
use kcm_reflector::{CancellationToken, Delta, Reflector, ReflectorConfig};
use kcm_testenv::{TestEnv, TestEnvConfig};
use kube::api::{Api, DeleteParams, ObjectMeta, PostParams};

fn lease(name: &str, holder: &str) -> Lease {
    Lease {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some("default".into()),
            ..ObjectMeta::default()
        },
        spec: Some(LeaseSpec {
            holder_identity: Some(holder.into()),
            ..LeaseSpec::default()
        }),
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let env = TestEnv::start(TestEnvConfig::default()).await?;
    let api: Api<Lease> = Api::namespaced(env.client(), "default");
    for name in ["a", "b", "c"] {
        api.create(&PostParams::default(), &lease(name, "x"))
            .await?;
    }

    let cancel = CancellationToken::new();
    let reflector =
        Reflector::<Lease>::new(env.client(), Some("default"), ReflectorConfig::default());
    let last_rv = reflector.last_sync_resource_version();
    let mut deltas = Box::pin(reflector.deltas(cancel.clone()));

    // The initial list: one Replaced per object, then ListComplete.
    while let Some(delta) = deltas.next().await {
        println!("list:  {delta:?}");
        if matches!(delta, Delta::ListComplete { .. }) {
            break;
        }
    }
    println!("synced at resourceVersion {}", last_rv.get());

    // Changes made now arrive through the watch, in order.
    api.create(&PostParams::default(), &lease("d", "x")).await?;
    api.replace("d", &PostParams::default(), &{
        let mut d = api.get("d").await?;
        d.spec = Some(LeaseSpec {
            holder_identity: Some("y".into()),
            ..LeaseSpec::default()
        });
        d
    })
    .await?;
    api.delete("a", &DeleteParams::default()).await?;
    for _ in 0..3 {
        let delta = tokio::time::timeout(std::time::Duration::from_secs(10), deltas.next())
            .await?
            .expect("stream open");
        println!("watch: {delta:?}");
    }

    cancel.cancel();
    env.shutdown().await;
    Ok(())
}
