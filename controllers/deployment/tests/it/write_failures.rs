//! Issue 18, "never stall": a write that fails must lead to a retry. Transient failures of the
//! scale-down of an old ReplicaSet (which upstream swallows) and of a history-cleanup delete
//! cost one backoff, not the progress-deadline requeue ten minutes later.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use crate::common::*;
use k8s_openapi::api::apps::v1::Deployment;
use kcm_testenv::registry::StorageId;
use kcm_testenv::{ApiError, ApiServer, HookDecision, RequestHook, RequestInfo, TestCluster};

/// How soon after the fault is over the controller must have moved again: a few backoffs of
/// the default controller rate limiter (5 ms doubling), with room for a slow machine.
const RECOVERY: Duration = Duration::from_secs(5);

fn unavailable() -> ApiError {
    ApiError::new(
        503,
        "ServiceUnavailable",
        "the server is currently unable to handle the request",
    )
}

/// A 409 with nothing changed on the server (its watch event lost, as it were).
fn bare_conflict(rs_name: &str) -> ApiError {
    ApiError::new(
        409,
        "Conflict",
        format!(
            "Operation cannot be fulfilled on replicasets.apps \"{rs_name}\": the object has been \
             modified; please apply your changes to the latest version and try again"
        ),
    )
}

/// The harness with a client that does not retry 429/503/504 itself (kube's default client
/// does, up to 15 times), so that the failure reaches the controller, as a 500 or a 409 does
/// and as a 503 does once the client's own retries run out.
async fn harness() -> Harness {
    let cluster = TestCluster::builder()
        .start()
        .await
        .expect("test cluster starts");
    let mut config = kube::Config::new(cluster.env().url().parse().expect("server URL"));
    config.default_retry = false;
    let client = kube::Client::try_from(config).expect("client");
    Harness::start_with(cluster, client).await
}

/// `status.availableReplicas` of the stored Deployment `default/web`.
fn stored_available(server: &ApiServer) -> i64 {
    server
        .store
        .get(StorageId::DEPLOYMENTS, "default/web")
        .map(|o| o.value())
        .and_then(|v| v["status"]["availableReplicas"].as_i64())
        .unwrap_or(0)
}

/// Fails every update of the ReplicaSet `rs` until one failure happens while the stored
/// Deployment already shows `available` available replicas, then lets everything through.
///
/// The new availability causes two syncs: the one that sees it (its scale-down fails, its
/// status write succeeds) and the one that status write triggers. Failing both makes the last
/// failed attempt come from a sync with nothing else to write, so no event can follow: the
/// shape of the stall of issue 18. (A single failure is retried by upstream too, through the
/// event of that status write.)
#[derive(Debug)]
struct FailUpdatesUntilQuiet {
    server: Weak<ApiServer>,
    rs: String,
    available: i64,
    error: ApiError,
    failures: AtomicUsize,
    over: AtomicBool,
}

impl RequestHook for FailUpdatesUntilQuiet {
    fn before(&self, req: &RequestInfo) -> HookDecision {
        let targeted = req.verb == "update"
            && req.resource == "replicasets"
            && req.subresource.is_none()
            && req.name.as_deref() == Some(self.rs.as_str());
        if !targeted || self.over.load(Ordering::SeqCst) {
            return HookDecision::Continue;
        }
        let caught_up = self
            .server
            .upgrade()
            .is_some_and(|s| stored_available(&s) >= self.available);
        self.failures.fetch_add(1, Ordering::SeqCst);
        if caught_up {
            self.over.store(true, Ordering::SeqCst);
        }
        HookDecision::Fail {
            error: self.error.clone(),
            retry_after: None,
        }
    }
}

/// Rollout 1 of `web` (2 replicas, maxSurge 1, maxUnavailable 0) completed; returns the
/// Deployment and its ReplicaSet's name.
async fn first_rollout(h: &Harness, history: Option<i32>) -> (Deployment, String) {
    let mut d = rolling("web", 2, 1, 0);
    d.spec.revision_history_limit = history;
    let d = h.create(&d).await;
    let old = h.first_replica_set(&d).await;
    let old_name = old.metadata.name.clone().unwrap_or_default();
    h.fake_rs_status(&old_name, 2, 2).await;
    wait_until("rollout 1 complete", || async {
        condition(&h.get("web").await, "Progressing")
            .is_some_and(|c| c.1 == "NewReplicaSetAvailable")
    })
    .await;
    (d, old_name)
}

/// Rolls `web` to nginx:2 and returns the new ReplicaSet's name (created with maxSurge = 1).
async fn start_rollout_2(h: &Harness, d: &Deployment) -> String {
    h.set_image("web", "nginx:2").await;
    let new = h.replica_set_with_image(d, "nginx:2").await;
    assert_eq!(spec_replicas(&new), 1);
    new.metadata.name.unwrap_or_default()
}

/// Plays the ReplicaSet controller and kubelets (every desired pod exists and is available)
/// until rollout 2 completes.
async fn drive_to_completion(h: &Harness, d: &Deployment) {
    wait_until("rollout 2 complete", || async {
        for rs in h.owned_replica_sets(d).await {
            let n = spec_replicas(&rs);
            let st = rs.status.clone().unwrap_or_default();
            if st.replicas != n || st.available_replicas.unwrap_or(0) != n {
                h.fake_rs_status(rs.metadata.name.as_deref().unwrap_or_default(), n, n)
                    .await;
            }
        }
        let cur = h.get("web").await;
        let st = cur.status.clone().unwrap_or_default();
        condition(&cur, "Progressing").is_some_and(|c| c.1 == "NewReplicaSetAvailable")
            && st.updated_replicas == Some(2)
            && st.replicas == Some(2)
            && st.available_replicas == Some(2)
    })
    .await;
}

async fn scale_down_failure_is_retried(error: impl Fn(&str) -> ApiError) {
    let h = harness().await;
    let env = h.env();
    let (d, old_name) = first_rollout(&h, None).await;
    let hook = Arc::new(FailUpdatesUntilQuiet {
        server: Arc::downgrade(env.server()),
        rs: old_name.clone(),
        available: 3,
        error: error(&old_name),
        failures: AtomicUsize::new(0),
        over: AtomicBool::new(false),
    });
    env.set_hook(Some(hook.clone()));
    let new_name = start_rollout_2(&h, &d).await;

    // The new pod becomes available: 3 available, 2 wanted, so the old ReplicaSet may lose one.
    h.fake_rs_status(&new_name, 1, 1).await;
    wait_until("the scale-down failed in a quiet sync", || async {
        hook.over.load(Ordering::SeqCst)
    })
    .await;
    let over = Instant::now();
    // Nothing else happens on the cluster: only a retry of the key can move the rollout now.
    wait_until("old ReplicaSet scaled down after the failure", || async {
        spec_replicas(&h.replica_sets().get(&old_name).await.expect("old rs")) == 1
    })
    .await;
    assert!(
        over.elapsed() < RECOVERY,
        "the scale-down was retried only after {:?}",
        over.elapsed()
    );
    // At least the two failures described on the hook; under load a sync more may fail before
    // the stored Deployment shows the new availability. The last one is always in a quiet sync.
    assert!(hook.failures.load(Ordering::SeqCst) >= 2);

    drive_to_completion(&h, &d).await;
    h.wait_for_event(
        "web",
        "ScalingReplicaSet",
        &format!("Scaled down replica set {old_name} from 1 to 0"),
    )
    .await;
    // The retry added no write or event of its own: the old ReplicaSet was scaled down once
    // per step, as without the failure.
    let scaled_down: Vec<String> = h
        .events_for("web")
        .await
        .into_iter()
        .filter(|(_, r, m)| {
            r == "ScalingReplicaSet"
                && m.starts_with(&format!("Scaled down replica set {old_name} "))
        })
        .map(|(_, _, m)| m)
        .collect();
    assert_eq!(
        scaled_down,
        vec![
            format!("Scaled down replica set {old_name} from 2 to 1"),
            format!("Scaled down replica set {old_name} from 1 to 0"),
        ]
    );
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_down_failing_with_503_is_retried_with_backoff() {
    scale_down_failure_is_retried(|_| unavailable()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn scale_down_failing_with_a_bare_conflict_is_retried_with_backoff() {
    scale_down_failure_is_retried(bare_conflict).await;
}

/// Fails the first delete of the ReplicaSet `rs` with a 503.
#[derive(Debug)]
struct FailFirstDelete {
    rs: String,
    failed: AtomicBool,
}

impl RequestHook for FailFirstDelete {
    fn before(&self, req: &RequestInfo) -> HookDecision {
        if req.verb == "delete"
            && req.resource == "replicasets"
            && req.name.as_deref() == Some(self.rs.as_str())
            && !self.failed.swap(true, Ordering::SeqCst)
        {
            return HookDecision::Fail {
                error: unavailable(),
                retry_after: None,
            };
        }
        HookDecision::Continue
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn history_cleanup_delete_failing_with_503_is_retried_with_backoff() {
    let h = harness().await;
    let env = h.env();
    let (d, old_name) = first_rollout(&h, Some(0)).await;
    let hook = Arc::new(FailFirstDelete {
        rs: old_name.clone(),
        failed: AtomicBool::new(false),
    });
    env.set_hook(Some(hook.clone()));
    start_rollout_2(&h, &d).await;
    drive_to_completion(&h, &d).await;
    wait_until("the cleanup delete failed", || async {
        hook.failed.load(Ordering::SeqCst)
    })
    .await;
    let failed = Instant::now();
    // revisionHistoryLimit 0: the drained old ReplicaSet goes once the rollout is complete.
    wait_until("old ReplicaSet deleted", || async {
        h.replica_sets()
            .get_opt(&old_name)
            .await
            .expect("get")
            .is_none()
    })
    .await;
    assert!(
        failed.elapsed() < RECOVERY,
        "the delete was retried only after {:?}",
        failed.elapsed()
    );
    h.shutdown().await;
}
