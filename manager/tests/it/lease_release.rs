//! What a leading kcm leaves in its Lease when it is stopped (SIGTERM's path: the stop token),
//! in-process against the embedded test cluster: with `ControllerManagerReleaseLeaderElectionLockOnExit`
//! (alpha, off in v1.37) the Lease is given up once the controllers stopped (holder cleared,
//! duration 1 s), so a standby takes over within a retry period; without it, as upstream, the
//! Lease keeps naming kcm until it expires.

use std::time::Duration;

use k8s_openapi::api::coordination::v1::Lease;
use kcm_manager::{Exit, Manager};
use kcm_testenv::{TestCluster, TestEnv};
use kube::api::Api;

use crate::common::{in_process, namespace_reader};

/// Runs a leading kcm until it holds `lease`, stops it, and returns its exit and the Lease.
async fn lead_then_stop(env: &TestEnv, lease: &str, gates: &str) -> (Exit, Lease) {
    let name = format!("--leader-elect-resource-name={lease}");
    let mut args = vec![
        "--secure-port=0",
        "--controllers=nsreader",
        "--leader-elect=true",
        "--leader-elect-resource-namespace=default",
        &name,
        "--leader-elect-retry-period=200ms",
    ];
    if !gates.is_empty() {
        args.push(gates);
    }
    let manager = Manager::new("kcm").controller(namespace_reader::namespace_reader());
    let (stop, run) = in_process::spawn(manager, &args, env.kubeconfig_path()).await;
    let leases: Api<Lease> = Api::namespaced(env.client(), "default");
    let mut held = false;
    for _ in 0..100 {
        let holder = leases
            .get_opt(lease)
            .await
            .expect("get lease")
            .and_then(|l| l.spec)
            .and_then(|s| s.holder_identity)
            .unwrap_or_default();
        if !holder.is_empty() {
            held = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(held, "kcm never took the Lease");
    stop.cancel();
    let exit = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .expect("kcm stops")
        .expect("no panic")
        .expect("runs");
    (exit, leases.get(lease).await.expect("lease"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stopped_leader_gives_its_lease_up_only_with_the_gate() {
    let cluster = TestCluster::builder()
        .start()
        .await
        .expect("test cluster starts");
    let env = cluster.env();

    let (exit, kept) = lead_then_stop(env, "kept", "").await;
    assert_eq!(exit, Exit::Stopped);
    let spec = kept.spec.expect("spec");
    assert!(
        spec.holder_identity.is_some_and(|h| !h.is_empty()),
        "without the gate the Lease keeps its holder, as upstream's"
    );
    assert_eq!(spec.lease_duration_seconds, Some(15));

    let gate = "--feature-gates=ControllerManagerReleaseLeaderElectionLockOnExit=true";
    let (exit, released) = lead_then_stop(env, "released", gate).await;
    assert_eq!(exit, Exit::Stopped);
    let spec = released.spec.expect("spec");
    assert_eq!(spec.holder_identity.as_deref(), Some(""));
    assert_eq!(spec.lease_duration_seconds, Some(1));
    assert_eq!(
        spec.lease_transitions,
        Some(0),
        "a release keeps the transition count"
    );
}
