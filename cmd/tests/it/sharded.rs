//! `kcm --sharding=namespace` with real processes on the embedded test cluster: three replicas
//! form a ring and split the namespaces; every Deployment rolls out with exactly its pods; each
//! namespace is written by one replica only; a replica killed with SIGKILL has its namespaces
//! taken over by the others, which finish a scale-up there, again with exactly the pods asked
//! for. kcm-testenv ignores the shard selector (as kube-apiserver with `ShardedListAndWatch` off),
//! so each replica filters on the client.

use std::collections::{BTreeMap, BTreeSet};
use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};

use crate::common::{Kcm, all_available, cluster_and_log_dir, deployment, sent_writes, wait_until};

const RING: &str = "kcm-sharded";
const NAMESPACES: usize = 6;
const PER_NAMESPACE: usize = 2;

/// Namespace names as teams pick them (sequential names like `team-1` … `team-6` hash close
/// together and mostly share an owner: docs/sharding.md, "Limits").
fn namespace(i: usize) -> String {
    [
        "frontend",
        "payments",
        "search",
        "billing",
        "auth",
        "analytics",
    ][i % 6]
        .to_string()
}

/// The namespaces a log's sent writes went to (`"API write"` lines not refused by the fence).
fn written_namespaces(log: &str) -> BTreeSet<String> {
    sent_writes(log)
        .filter_map(|l| l.split("object=\"").nth(1))
        .filter_map(|rest| rest.split('/').next())
        .map(str::to_string)
        .collect()
}

/// Whether the ring's three Leases acknowledge one and the same ring.
async fn ring_formed(leases: &Api<Lease>, members: usize) -> bool {
    let Ok(list) = leases
        .list(&ListParams::default().labels(&format!("sharding.kcm.io/ring={RING}")))
        .await
    else {
        return false;
    };
    let applied: BTreeSet<String> = list
        .items
        .iter()
        .filter_map(|l| l.metadata.annotations.as_ref())
        .filter_map(|a| a.get("sharding.kcm.io/applied-ring").cloned())
        .collect();
    list.items.len() == members && applied.len() == 1 && applied.iter().all(|a| !a.is_empty())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_split_namespaces_and_take_over_a_killed_ones() {
    let (cluster, dir) = cluster_and_log_dir("kcm-sharded").await;
    let client = cluster.client();
    let kubeconfig = cluster.env().kubeconfig_path().to_path_buf();
    let ring = format!("--leader-elect-resource-name={RING}");
    let args = [
        "--sharding=namespace",
        "--leader-elect-resource-namespace=default",
        ring.as_str(),
        "--leader-elect-lease-duration=2s",
        "--leader-elect-renew-deadline=1500ms",
        "--leader-elect-retry-period=300ms",
    ];
    let mut kcms: Vec<Kcm> = (0..3)
        .map(|i| Kcm::start(&kubeconfig, dir.join(format!("kcm-{i}.log")), &args))
        .collect();
    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
    wait_until("a ring of three", Duration::from_secs(60), async || {
        ring_formed(&leases, 3).await
    })
    .await;

    let namespaces: Api<Namespace> = Api::all(client.clone());
    for i in 0..NAMESPACES {
        let ns: Namespace =
            serde_json::from_value(serde_json::json!({"metadata": {"name": namespace(i)}}))
                .expect("ns");
        namespaces
            .create(&PostParams::default(), &ns)
            .await
            .expect("namespace");
        let api: Api<Deployment> = Api::namespaced(client.clone(), &namespace(i));
        for j in 0..PER_NAMESPACE {
            api.create(
                &PostParams::default(),
                &deployment(&namespace(i), &format!("web-{j}"), 3),
            )
            .await
            .expect("create deployment");
        }
    }
    wait_until(
        "3 available pods each",
        Duration::from_secs(90),
        async || all_available(&Api::all(client.clone()), NAMESPACES * PER_NAMESPACE, 3).await,
    )
    .await;

    // Each namespace was written by exactly one replica, and every replica had some.
    let owners = |kcms: &[Kcm]| {
        let mut owners: BTreeMap<String, Vec<usize>> = BTreeMap::new();
        for (i, k) in kcms.iter().enumerate() {
            for ns in written_namespaces(&k.text()) {
                owners.entry(ns).or_default().push(i);
            }
        }
        owners
    };
    let before = owners(&kcms);
    eprintln!("writers per namespace: {before:?}");
    assert_eq!(before.len(), NAMESPACES, "{before:?}");
    for (ns, writers) in &before {
        assert_eq!(writers.len(), 1, "{ns} written by replicas {writers:?}");
    }
    let writers: BTreeSet<usize> = before.values().flatten().copied().collect();
    assert!(
        writers.len() >= 2,
        "the namespaces are shared out: {before:?}"
    );
    let pods: Api<Pod> = Api::all(client.clone());
    let count = pods.list(&ListParams::default()).await.expect("pods");
    assert_eq!(count.items.len(), NAMESPACES * PER_NAMESPACE * 3);

    // SIGKILL the replica that wrote to the most namespaces; the others take over and scale.
    let victim = (0..3)
        .max_by_key(|i| before.values().filter(|w| w.contains(i)).count())
        .expect("a replica");
    let orphaned: Vec<String> = before
        .iter()
        .filter(|(_, w)| w.contains(&victim))
        .map(|(ns, _)| ns.clone())
        .collect();
    let _ = kcms[victim].child.kill();
    let _ = kcms[victim].child.wait();
    let killed = Instant::now();
    let marks: Vec<usize> = kcms.iter().map(|k| k.text().len()).collect();
    let scale = Patch::Merge(serde_json::json!({"spec": {"replicas": 5}}));
    for i in 0..NAMESPACES {
        let api: Api<Deployment> = Api::namespaced(client.clone(), &namespace(i));
        for j in 0..PER_NAMESPACE {
            api.patch(&format!("web-{j}"), &PatchParams::default(), &scale)
                .await
                .expect("scale");
        }
    }
    wait_until(
        "5 available pods each",
        Duration::from_secs(90),
        async || all_available(&Api::all(client.clone()), NAMESPACES * PER_NAMESPACE, 5).await,
    )
    .await;
    eprintln!(
        "replica {victim} killed; its namespaces {orphaned:?} scaled by the others within {:.1}s",
        killed.elapsed().as_secs_f64()
    );
    let mut after: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    for (i, k) in kcms.iter().enumerate().filter(|(i, _)| *i != victim) {
        let text = k.text();
        for ns in written_namespaces(&text[marks[i].min(text.len())..]) {
            after.entry(ns).or_default().push(i);
        }
    }
    eprintln!("writers per namespace after the kill: {after:?}");
    for ns in &orphaned {
        let writers = after.get(ns).cloned().unwrap_or_default();
        assert_eq!(
            writers.len(),
            1,
            "{ns} written by {writers:?} after the kill"
        );
    }
    let count = pods.list(&ListParams::default()).await.expect("pods");
    assert_eq!(
        count.items.len(),
        NAMESPACES * PER_NAMESPACE * 5,
        "exactly the pods asked for"
    );
    kcms.clear();
}
