//! `kcm --use-service-account-credentials=true` (kubeadm's default) against the embedded test
//! cluster: kcm creates its controllers' ServiceAccounts in kube-system, asks the
//! TokenRequest API for their tokens, and each controller then writes as its own
//! ServiceAccount — the audit log names `system:serviceaccount:kube-system:deployment-controller`
//! for the Deployment's status and the ReplicaSet's creation, and `…:replicaset-controller` for
//! the pods — while a Deployment rolls out to its ReplicaSet and pods.

use std::time::Duration;

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::ServiceAccount;
use kcm_testenv::{TestCluster, TestEnvConfig};
use kube::api::{Api, ListParams, PostParams};

use crate::common::{Kcm, deployment, wait_until};

const NS: &str = "default";

/// The users the audit log names for writes of `resource` (`deployments/status`, …).
fn writers(audit: &str, resource: &str) -> Vec<String> {
    let mut users: Vec<String> = audit
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .filter(|e| {
            let o = &e["objectRef"];
            let r = match o["subresource"].as_str() {
                Some(sub) => format!("{}/{sub}", o["resource"].as_str().unwrap_or("")),
                None => o["resource"].as_str().unwrap_or("").to_string(),
            };
            r == resource
        })
        .filter_map(|e| e["user"]["username"].as_str().map(str::to_string))
        .collect();
    users.sort();
    users.dedup();
    users
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn controllers_run_as_their_service_accounts() {
    let dir = std::env::temp_dir().join(format!("kcm-sa-credentials-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let audit = dir.join("audit.log");
    let _ = std::fs::remove_file(&audit);
    let cluster = TestCluster::builder()
        .nodes(1)
        .pod_ready_after(Duration::from_millis(100))
        .env_config(TestEnvConfig {
            audit_log_path: Some(audit.clone()),
            ..TestEnvConfig::default()
        })
        .start()
        .await
        .expect("test cluster");
    let client = cluster.client();
    let kcm = Kcm::start(
        cluster.env().kubeconfig_path(),
        dir.join("kcm.log"),
        &[
            "--use-service-account-credentials=true",
            "--leader-elect=false",
        ],
    );

    let accounts: Api<ServiceAccount> = Api::namespaced(client.clone(), "kube-system");
    wait_until(
        "the controllers' service accounts",
        Duration::from_secs(30),
        async || {
            let mut names: Vec<String> = accounts
                .list(&ListParams::default())
                .await
                .map(|l| {
                    l.items
                        .into_iter()
                        .filter_map(|a| a.metadata.name)
                        .collect()
                })
                .unwrap_or_default();
            names.sort();
            names.contains(&"deployment-controller".to_string())
                && names.contains(&"replicaset-controller".to_string())
        },
    )
    .await;

    let deployments: Api<Deployment> = Api::namespaced(client.clone(), NS);
    deployments
        .create(&PostParams::default(), &deployment(NS, "web", 2))
        .await
        .expect("create deployment");
    let replicasets: Api<ReplicaSet> = Api::namespaced(client.clone(), NS);
    wait_until(
        "the Deployment available with its ReplicaSet",
        Duration::from_secs(30),
        async || {
            let owned = replicasets
                .list(&ListParams::default())
                .await
                .is_ok_and(|l| {
                    l.items.iter().any(|rs| {
                        rs.metadata.owner_references.iter().flatten().any(|o| {
                            o.kind == "Deployment" && o.name == "web" && o.controller == Some(true)
                        })
                    })
                });
            let available = deployments
                .get("web")
                .await
                .is_ok_and(|d| d.status.and_then(|s| s.available_replicas) == Some(2));
            owned && available
        },
    )
    .await;

    let text = std::fs::read_to_string(&audit).expect("audit log");
    let sa = |name: &str| vec![format!("system:serviceaccount:kube-system:{name}")];
    assert_eq!(
        writers(&text, "replicasets"),
        sa("deployment-controller"),
        "{}",
        kcm.text()
    );
    assert_eq!(
        writers(&text, "deployments/status"),
        sa("deployment-controller")
    );
    // the pods: the replicaset controller creates them; the simulated kubelet writes their status
    assert_eq!(writers(&text, "pods"), sa("replicaset-controller"));
    assert_eq!(
        writers(&text, "serviceaccounts/token"),
        vec!["system:anonymous".to_string()],
        "kcm's own (root) client asks for the tokens"
    );
    drop(kcm);
    let _ = std::fs::remove_dir_all(&dir);
}
