//! Regression test of the write fence with real `kcm` processes: two replicas elect a leader on
//! the embedded test cluster, the leader is stopped (SIGSTOP) for longer than its lease while
//! every Deployment is scaled, the standby takes over, and the old leader is continued
//! (SIGCONT) with the scale-ups queued. Before the fence, the resumed leader went on syncing
//! for up to its renew deadline and wrote beside the new one (issue #24: 85 writes after the
//! standby's takeover, and 7 pods for a Deployment of 5 with maxSurge 1). Now it must send no
//! write after it resumes, step down at once, and every Deployment must end with exactly its
//! replicas.

use std::time::{Duration, Instant};

use k8s_openapi::api::apps::v1::Deployment;
use k8s_openapi::api::coordination::v1::Lease;
use k8s_openapi::api::core::v1::{Namespace, Pod};
use kube::api::{Api, ListParams, Patch, PatchParams, PostParams};

use crate::common::{Kcm, all_available, cluster_and_log_dir, deployment, sent_writes, wait_until};

const NS: &str = "paused";
const LEASE: &str = "kcm-paused";
const DEPLOYMENTS: usize = 4;

/// The candidate identity a kcm process announced.
fn identity(k: &Kcm) -> Option<String> {
    k.text()
        .lines()
        .find(|l| l.contains("attempting to acquire leader lease"))
        .and_then(|l| l.split("identity=\"").nth(1))
        .and_then(|r| r.split('"').next())
        .map(str::to_string)
}

async fn holder(leases: &Api<Lease>) -> String {
    leases
        .get_opt(LEASE)
        .await
        .ok()
        .flatten()
        .and_then(|l| l.spec)
        .and_then(|s| s.holder_identity)
        .unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_leader_resumed_after_its_lease_writes_nothing_and_steps_down() {
    let (cluster, dir) = cluster_and_log_dir("kcm-paused-leader").await;
    let client = cluster.client();
    let kubeconfig = cluster.env().kubeconfig_path().to_path_buf();
    let lease = format!("--leader-elect-resource-name={LEASE}");
    let args = [
        "--controllers=*",
        "--leader-elect=true",
        "--leader-elect-resource-namespace=default",
        lease.as_str(),
        "--leader-elect-lease-duration=2s",
        "--leader-elect-renew-deadline=1500ms",
        "--leader-elect-retry-period=300ms",
    ];
    let kcms = [
        Kcm::start(&kubeconfig, dir.join("kcm-0.log"), &args),
        Kcm::start(&kubeconfig, dir.join("kcm-1.log"), &args),
    ];

    let namespaces: Api<Namespace> = Api::all(client.clone());
    let ns: Namespace =
        serde_json::from_value(serde_json::json!({"metadata": {"name": NS}})).expect("ns");
    namespaces
        .create(&PostParams::default(), &ns)
        .await
        .expect("namespace");
    let deployments: Api<Deployment> = Api::namespaced(client.clone(), NS);
    for i in 0..DEPLOYMENTS {
        deployments
            .create(
                &PostParams::default(),
                &deployment(NS, &format!("web-{i}"), 3),
            )
            .await
            .expect("create deployment");
    }
    let leases: Api<Lease> = Api::namespaced(client.clone(), "default");
    wait_until("a leader", Duration::from_secs(30), async || {
        !holder(&leases).await.is_empty()
    })
    .await;
    wait_until(
        "3 available pods each",
        Duration::from_secs(60),
        async || all_available(&deployments, DEPLOYMENTS, 3).await,
    )
    .await;

    let leader = holder(&leases).await;
    let old = kcms
        .iter()
        .position(|k| identity(k).as_deref() == Some(leader.as_str()))
        .expect("the leader is one of the two processes");
    kcms[old].signal("-STOP");
    let paused = Instant::now();
    wait_until(
        "the standby to take over",
        Duration::from_secs(20),
        async || {
            let h = holder(&leases).await;
            !h.is_empty() && h != leader
        },
    )
    .await;
    let scale = Patch::Merge(serde_json::json!({"spec": {"replicas": 5}}));
    for i in 0..DEPLOYMENTS {
        deployments
            .patch(&format!("web-{i}"), &PatchParams::default(), &scale)
            .await
            .expect("scale");
    }
    // Let the scale-ups reach the stopped leader's watches; the new leader starts acting.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let before_resume = kcms[old].text().len();
    kcms[old].signal("-CONT");
    let resumed = Instant::now();
    eprintln!(
        "leader paused for {:.1}s",
        resumed.duration_since(paused).as_secs_f64()
    );

    // It steps down at once: its first renewal finds the new holder.
    let mut old_kcm = kcms;
    let exited = {
        let child = &mut old_kcm[old].child;
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Some(status) = child.try_wait().expect("wait") {
                break Some(status);
            }
            if Instant::now() > deadline {
                break None;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let stepped_down = resumed.elapsed();
    let log = old_kcm[old].text();
    let after = &log[before_resume.min(log.len())..];
    let sent: Vec<&str> = sent_writes(after).collect();
    let fenced = after
        .lines()
        .filter(|l| l.contains("result=\"fenced\""))
        .count();
    std::fs::write(dir.join("after-resume.log"), after).expect("keep the log");
    eprintln!(
        "old leader: exited {exited:?} {:.2}s after resuming; {} writes sent and {fenced} fenced after resuming",
        stepped_down.as_secs_f64(),
        sent.len()
    );
    assert!(
        sent.is_empty(),
        "the resumed leader sent writes after its lease passed on:\n{}",
        sent.join("\n")
    );
    assert!(
        exited.is_some(),
        "the resumed leader did not give up its term"
    );
    assert!(
        after.contains("stepping down at once"),
        "the old leader did not step down on seeing the new holder:\n{after}"
    );

    wait_until(
        "5 available pods each",
        Duration::from_secs(60),
        async || all_available(&deployments, DEPLOYMENTS, 5).await,
    )
    .await;
    let pods: Api<Pod> = Api::namespaced(client.clone(), NS);
    for i in 0..DEPLOYMENTS {
        let name = format!("web-{i}");
        let list = pods
            .list(&ListParams::default().labels(&format!("app={name}")))
            .await
            .expect("pods");
        let live = list
            .items
            .iter()
            .filter(|p| p.metadata.deletion_timestamp.is_none())
            .count();
        assert_eq!(live, 5, "{name}: pods beyond its replicas");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
