//! Issue 18, "never stall": a failed status write is retried with backoff. The status write
//! after the last pod of a ReplicaSet appeared fails twice (the PUT and the PUT of
//! `updateReplicaSetStatus`'s own retry), with 503s or with bare 409s (no change on the
//! server, so no event follows); the status must still arrive within seconds.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::*;
use kcm_testenv::registry::StorageId;
use kcm_testenv::{ApiError, ApiServer, HookDecision, RequestHook, RequestInfo};

const WAIT: Duration = Duration::from_secs(30);

/// How soon after the last failure the status must be written: a few backoffs of the default
/// controller rate limiter (5 ms doubling), with room for a slow machine.
const RECOVERY: Duration = Duration::from_secs(5);

/// Fails the first `times` status writes of the ReplicaSet `web` made once `pods` pods exist.
#[derive(Debug)]
struct FailStatusWrites {
    server: std::sync::Weak<ApiServer>,
    pods: usize,
    times: usize,
    error: ApiError,
    failures: AtomicUsize,
}

impl RequestHook for FailStatusWrites {
    fn before(&self, req: &RequestInfo) -> HookDecision {
        let targeted = req.verb == "update"
            && req.resource == "replicasets"
            && req.subresource.as_deref() == Some("status")
            && req.name.as_deref() == Some("web");
        let all_pods = self
            .server
            .upgrade()
            .is_some_and(|s| s.store.count(StorageId::PODS) >= self.pods);
        if targeted && all_pods && self.failures.load(Ordering::SeqCst) < self.times {
            self.failures.fetch_add(1, Ordering::SeqCst);
            return HookDecision::Fail {
                error: self.error.clone(),
                retry_after: None,
            };
        }
        HookDecision::Continue
    }
}

async fn status_write_failure_is_retried(error: ApiError) {
    let cluster = api_server().await;
    let env = cluster.env();
    // kube's default client retries 429/503/504 itself; the controller's retry is under test.
    let mut config = kube::Config::new(env.url().parse().expect("server URL"));
    config.default_retry = false;
    let client = kube::Client::try_from(config).expect("client");
    let hook = Arc::new(FailStatusWrites {
        server: Arc::downgrade(env.server()),
        pods: 3,
        times: 2,
        error,
        failures: AtomicUsize::new(0),
    });
    env.set_hook(Some(hook.clone()));
    let running = Running::start(client.clone()).await;
    create_rs(&client, "web", 3).await;

    eventually("two failed status writes", WAIT, || async {
        (hook.failures.load(Ordering::SeqCst) == 2).then_some(())
    })
    .await;
    let failed = Instant::now();
    let rs = eventually("status.replicas 3", WAIT, || async {
        let rs = get_rs(&client, "web").await;
        (rs.status.as_ref().map_or(0, |s| s.replicas) == 3).then_some(rs)
    })
    .await;
    assert!(
        failed.elapsed() < RECOVERY,
        "the status write was retried only after {:?}",
        failed.elapsed()
    );
    let status = rs.status.unwrap_or_default();
    assert_eq!(status.observed_generation, rs.metadata.generation);
    assert_eq!(active_pods(&client, "web").await.len(), 3);
    assert_eq!(env.counters().count("create", "pods"), 3, "no extra pods");
    running.stop().await;
    cluster.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_write_failing_with_503_is_retried_with_backoff() {
    status_write_failure_is_retried(ApiError::new(
        503,
        "ServiceUnavailable",
        "the server is currently unable to handle the request",
    ))
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn status_write_failing_with_a_bare_conflict_is_retried_with_backoff() {
    status_write_failure_is_retried(ApiError::new(
        409,
        "Conflict",
        "Operation cannot be fulfilled on replicasets.apps \"web\": the object has been \
         modified; please apply your changes to the latest version and try again",
    ))
    .await;
}
