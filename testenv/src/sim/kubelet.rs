//! The simulated kubelets: one pod worker per bound pod writes `/status` through the pod's life
//! (Pending/ContainerCreating, Running/Ready, crash loop, failure) and finishes graceful deletions
//! with `DELETE gracePeriodSeconds=0` and a uid precondition.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kcm_util::go_duration::format_go_duration;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use serde_json::json;
use tokio::sync::{mpsc, watch};
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::annotations::PodBehaviour;
use super::config::SimConfig;
use super::events;
use super::informer::{Change, spawn_informer};
use super::nodes::{NodeSet, SimNode};
use super::pod_status::{Runtime, Stage, build_status};
use super::timestamps::now_time;

const RETRY: Duration = Duration::from_millis(100);

/// Run the kubelets of every simulated node until `token` is cancelled.
pub(crate) async fn run(
    client: kube::Client,
    nodes: Arc<NodeSet>,
    config: Arc<SimConfig>,
    token: CancellationToken,
) {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let (_cache, informer) = spawn_informer(Api::<Pod>::all(client.clone()), tx, token.clone());
    let mut workers: HashMap<String, (watch::Sender<Arc<Pod>>, CancellationToken)> = HashMap::new();
    loop {
        let change = tokio::select! {
            _ = token.cancelled() => break,
            c = rx.recv() => match c { Some(c) => c, None => break },
        };
        match change {
            Change::Applied(pod) => {
                let Some(uid) = pod.metadata.uid.clone() else {
                    continue;
                };
                if let Some((tx, _)) = workers.get(&uid) {
                    tx.send_replace(pod);
                    continue;
                }
                let node_name = pod.spec.as_ref().and_then(|s| s.node_name.clone());
                let Some(node) = node_name.and_then(|n| nodes.get(&n).cloned()) else {
                    continue;
                };
                let (ptx, prx) = watch::channel(pod);
                let child = token.child_token();
                tokio::spawn(pod_worker(
                    client.clone(),
                    node,
                    config.clone(),
                    prx,
                    child.clone(),
                ));
                workers.insert(uid, (ptx, child));
            }
            Change::Deleted(pod) => {
                if let Some((_, t)) = pod.metadata.uid.as_ref().and_then(|u| workers.remove(u)) {
                    t.cancel();
                }
            }
        }
    }
    for (_, (_, t)) in workers {
        t.cancel();
    }
    let _ = informer.await;
}

fn random_container_id() -> String {
    format!(
        "containerd://{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// Whether the pod has reached phase Succeeded or Failed.
fn is_terminal(pod: &Pod) -> bool {
    matches!(
        pod.status.as_ref().and_then(|s| s.phase.as_deref()),
        Some("Succeeded" | "Failed")
    )
}

struct IpGuard(Arc<SimNode>, Option<String>);
impl Drop for IpGuard {
    fn drop(&mut self) {
        if let Some(ip) = &self.1 {
            self.0.release_ip(ip);
        }
    }
}

async fn pod_worker(
    client: kube::Client,
    node: Arc<SimNode>,
    config: Arc<SimConfig>,
    mut pod_rx: watch::Receiver<Arc<Pod>>,
    token: CancellationToken,
) {
    let first = pod_rx.borrow_and_update().clone();
    let ns = first.metadata.namespace.clone().unwrap_or_default();
    let name = first.metadata.name.clone().unwrap_or_default();
    let uid = first.metadata.uid.clone().unwrap_or_default();
    let api: Api<Pod> = Api::namespaced(client.clone(), &ns);
    let behaviour =
        PodBehaviour::from_annotations(first.metadata.annotations.as_ref(), config.pod_ready_after);
    for problem in PodBehaviour::problems(first.metadata.annotations.as_ref()) {
        tracing::warn!(pod = %format!("{ns}/{name}"), %problem, "sim: ignoring malformed annotation");
    }
    let container_count = first.spec.as_ref().map_or(0, |s| s.containers.len());
    let container_names: Vec<String> = first
        .spec
        .iter()
        .flat_map(|s| s.containers.iter().map(|c| c.name.clone()))
        .collect();
    let container_images: Vec<String> = first
        .spec
        .iter()
        .flat_map(|s| {
            s.containers
                .iter()
                .map(|c| c.image.clone().unwrap_or_default())
        })
        .collect();
    let restart_never = first
        .spec
        .as_ref()
        .and_then(|s| s.restart_policy.as_deref())
        == Some("Never");
    // A pod already running (the simulation restarted against a live server) is adopted as it is:
    // same IP, same containers, no second start.
    let status = first.status.clone().unwrap_or_default();
    let running = status.phase.as_deref() == Some("Running")
        && !behaviour.crash_loop
        && status
            .pod_ip
            .as_deref()
            .is_some_and(|ip| node.reserve_ip(ip));
    let ip = if running {
        IpGuard(node.clone(), status.pod_ip.clone())
    } else {
        IpGuard(node.clone(), node.allocate_ip())
    };
    let now = now_time();
    let mut rt = Runtime {
        host_ip: node.host_ip.clone(),
        pod_ip: ip.1.clone(),
        start_time: now.clone(),
        containers_started_at: now,
        container_ids: (0..container_count)
            .map(|_| random_container_id())
            .collect(),
    };
    if running {
        if let Some(t) = &status.start_time {
            rt.start_time = serde_json::to_value(t)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or(rt.start_time);
        }
        let ids: Vec<String> = status
            .container_statuses
            .iter()
            .flatten()
            .filter_map(|c| c.container_id.clone())
            .collect();
        if ids.len() == container_count {
            rt.container_ids = ids;
        }
        let started = status
            .container_statuses
            .iter()
            .flatten()
            .find_map(|c| c.state.as_ref()?.running.as_ref()?.started_at.as_ref())
            .and_then(|t| serde_json::to_value(t).ok())
            .and_then(|v| v.as_str().map(str::to_string));
        if let Some(t) = started {
            rt.containers_started_at = t;
        }
    }

    // A pod that is already finished keeps its status; only its deletion is handled.
    let mut stage = if is_terminal(&first) {
        None
    } else if running {
        Some(Stage::Running {
            ready: !behaviour.never_ready,
        })
    } else {
        Some(Stage::Creating)
    };
    let mut next: Option<Instant> = match &stage {
        Some(Stage::Creating) => Some(Instant::now() + behaviour.ready_after),
        Some(_) => behaviour.fail_after.map(|d| Instant::now() + d),
        None => None,
    };
    let mut crash_backoff = config.crash_loop_backoff;
    let mut dirty = matches!(stage, Some(Stage::Creating));
    let mut terminating_at: Option<Instant> = None;
    let mut deleted = false;
    let mut ready_rx = node.subscribe_ready();
    let mut retry_at: Option<Instant> = None;
    let mut last_written_rv: u64 = 0;
    let mut backoff_events: Vec<(String, i32)> = Vec::new();

    loop {
        let node_up = *ready_rx.borrow_and_update();
        let pod = pod_rx.borrow_and_update().clone();
        if terminating_at.is_none() && pod.metadata.deletion_timestamp.is_some() {
            let grace = pod
                .metadata
                .deletion_grace_period_seconds
                .unwrap_or(0)
                .max(0) as u64;
            let wait = Duration::from_secs(grace).min(config.max_grace);
            terminating_at = Some(Instant::now() + wait);
            if config.events
                && matches!(stage, Some(Stage::Running { .. } | Stage::CrashLoop { .. }))
            {
                for c in &container_names {
                    emit(
                        &client,
                        &pod,
                        &node.name,
                        Some(c),
                        "Normal",
                        "Killing",
                        format!("Stopping container {c}"),
                    );
                }
            }
        }
        // Like the kubelet's status manager, repair a status someone else changed (the node
        // lifecycle controller marking pods NotReady, a stale write).
        if node_up
            && !dirty
            && terminating_at.is_none()
            && rv_number(&pod) > last_written_rv
            && let Some(s) = &stage
            && reported_ready(&pod) != matches!(s, Stage::Running { ready: true })
        {
            dirty = true;
        }
        let now_i = Instant::now();
        if node_up && !deleted {
            // Advance the script.
            if let Some(t) = terminating_at
                && t <= now_i
            {
                let exit_code = match &stage {
                    Some(Stage::Terminated { exit_code, .. }) => *exit_code,
                    _ => 0,
                };
                if stage.is_some() {
                    let s = Stage::Terminated {
                        exit_code,
                        finished_at: now_time(),
                    };
                    let status = build_status(&pod, &rt, &s, &now_time());
                    let patch = json!({"metadata": {"uid": uid}, "status": status});
                    let _ = api
                        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                        .await;
                }
                let dp = DeleteParams {
                    grace_period_seconds: Some(0),
                    preconditions: Some(Preconditions {
                        uid: Some(uid.clone()),
                        resource_version: None,
                    }),
                    ..DeleteParams::default()
                };
                // A 409 (uid precondition: the pod was replaced) ends with its DELETED event,
                // which cancels this worker; an injected one is retried.
                match api.delete(&name, &dp).await {
                    Ok(_) => deleted = true,
                    Err(kube::Error::Api(s)) if s.code == 404 => deleted = true,
                    Err(e) => {
                        tracing::debug!(pod = %name, error = %e, "sim kubelet: delete failed");
                        retry_at = Some(Instant::now() + RETRY);
                    }
                }
            } else if let (Some(t), Some(current)) = (next, stage.clone())
                && t <= now_i
                && terminating_at.is_none()
            {
                let (new_stage, after) = advance(
                    &current,
                    &behaviour,
                    restart_never,
                    &mut crash_backoff,
                    &config,
                );
                if matches!(current, Stage::Creating) {
                    rt.containers_started_at = now_time();
                    if config.events && !matches!(new_stage, Stage::Terminated { .. }) {
                        for (c, image) in container_names.iter().zip(&container_images) {
                            emit(
                                &client,
                                &pod,
                                &node.name,
                                Some(c),
                                "Normal",
                                "Pulled",
                                format!("Container image \"{image}\" already present on machine"),
                            );
                            emit(
                                &client,
                                &pod,
                                &node.name,
                                Some(c),
                                "Normal",
                                "Created",
                                format!("Created container: {c}"),
                            );
                            emit(
                                &client,
                                &pod,
                                &node.name,
                                Some(c),
                                "Normal",
                                "Started",
                                format!("Started container {c}"),
                            );
                        }
                    }
                }
                if config.events && matches!(new_stage, Stage::CrashLoop { .. }) {
                    backoff_events =
                        backoff_event(&client, &pod, &node.name, &container_names, backoff_events)
                            .await;
                }
                stage = Some(new_stage);
                next = after.map(|d| Instant::now() + d);
                dirty = true;
            }
            if dirty && retry_at.is_none_or(|r| r <= now_i) && !deleted {
                if let Some(s) = &stage {
                    let status = build_status(&pod, &rt, s, &now_time());
                    let patch = json!({"metadata": {"uid": uid}, "status": status});
                    match api
                        .patch_status(&name, &PatchParams::default(), &Patch::Merge(&patch))
                        .await
                    {
                        Ok(written) => {
                            dirty = false;
                            retry_at = None;
                            last_written_rv = rv_number(&written);
                        }
                        Err(kube::Error::Api(s)) if s.code == 404 => deleted = true,
                        Err(e) => {
                            tracing::debug!(pod = %name, error = %e, "sim kubelet: status write failed");
                            retry_at = Some(Instant::now() + RETRY);
                        }
                    }
                } else {
                    dirty = false;
                }
            }
        }
        // Sleep until the next thing to do.
        let mut wake: Option<Instant> = None;
        if node_up && !deleted {
            // While terminating, the script no longer advances.
            let next = if terminating_at.is_some() { None } else { next };
            for t in [terminating_at, next, retry_at].into_iter().flatten() {
                wake = Some(wake.map_or(t, |w| w.min(t)));
            }
        }
        let sleep = async {
            match wake {
                Some(t) => tokio::time::sleep_until(t).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = token.cancelled() => return,
            r = pod_rx.changed() => if r.is_err() { return },
            r = ready_rx.changed() => {
                if r.is_err() { return }
                // Back from a failure: post the full status again.
                if *ready_rx.borrow() { dirty = true; }
            }
            _ = sleep => {}
        }
    }
}

/// The `BackOff` warning of every container: created once, then repeated (count + 1).
async fn backoff_event(
    client: &kube::Client,
    pod: &Pod,
    node: &str,
    containers: &[String],
    mut seen: Vec<(String, i32)>,
) -> Vec<(String, i32)> {
    let ns = pod.metadata.namespace.clone().unwrap_or_default();
    let name = pod.metadata.name.clone().unwrap_or_default();
    let uid = pod.metadata.uid.clone().unwrap_or_default();
    for (i, c) in containers.iter().enumerate() {
        if let Some((event, count)) = seen.get_mut(i) {
            *count += 1;
            if events::repeat_event(client, &ns, event, *count).await {
                continue;
            }
        }
        let message = format!("Back-off restarting failed container {c} in pod {name}_{ns}({uid})");
        let created =
            events::kubelet_event(client, pod, node, Some(c), "Warning", "BackOff", message).await;
        if let Some(event) = created {
            if i < seen.len() {
                seen[i] = (event, 1);
            } else {
                seen.push((event, 1));
            }
        }
    }
    seen
}

/// Write a kubelet event in the background.
fn emit(
    client: &kube::Client,
    pod: &Arc<Pod>,
    node: &str,
    container: Option<&str>,
    type_: &'static str,
    reason: &'static str,
    message: String,
) {
    let (client, pod, node) = (client.clone(), pod.clone(), node.to_string());
    let container = container.map(str::to_string);
    tokio::spawn(async move {
        events::kubelet_event(
            &client,
            &pod,
            &node,
            container.as_deref(),
            type_,
            reason,
            message,
        )
        .await;
    });
}

fn rv_number(pod: &Pod) -> u64 {
    pod.metadata
        .resource_version
        .as_deref()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

fn reported_ready(pod: &Pod) -> bool {
    pod.status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .and_then(|c| c.iter().find(|c| c.type_ == "Ready"))
        .is_some_and(|c| c.status == "True")
}

/// The stage after `current` and the delay before the one after it.
///
/// A crashing container of a pod with `restartPolicy: Never` is not restarted: the pod fails.
fn advance(
    current: &Stage,
    behaviour: &PodBehaviour,
    restart_never: bool,
    crash_backoff: &mut Duration,
    config: &SimConfig,
) -> (Stage, Option<Duration>) {
    let now = now_time();
    match current {
        Stage::Creating if behaviour.crash_loop && restart_never => (
            Stage::Terminated {
                exit_code: 1,
                finished_at: now,
            },
            None,
        ),
        Stage::Creating if behaviour.crash_loop => {
            let b = *crash_backoff;
            (
                Stage::CrashLoop {
                    restarts: 1,
                    backoff: format_go_duration(b),
                    last_started: now.clone(),
                    last_finished: now,
                },
                Some(b),
            )
        }
        Stage::Creating => (
            Stage::Running {
                ready: !behaviour.never_ready,
            },
            behaviour.fail_after,
        ),
        Stage::CrashLoop { restarts, .. } => {
            *crash_backoff = (*crash_backoff * 2).min(config.crash_loop_max_backoff);
            let b = *crash_backoff;
            (
                Stage::CrashLoop {
                    restarts: restarts + 1,
                    backoff: format_go_duration(b),
                    last_started: now.clone(),
                    last_finished: now,
                },
                Some(b),
            )
        }
        Stage::Running { .. } => (
            Stage::Terminated {
                exit_code: 1,
                finished_at: now,
            },
            None,
        ),
        Stage::Terminated { .. } => (current.clone(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn behaviour() -> PodBehaviour {
        PodBehaviour::from_annotations(None, Duration::from_millis(200))
    }

    #[test]
    fn scripts() {
        let config = SimConfig::default();
        let mut b = config.crash_loop_backoff;
        let (s, after) = advance(&Stage::Creating, &behaviour(), false, &mut b, &config);
        assert_eq!((s, after), (Stage::Running { ready: true }, None));

        let mut never = behaviour();
        never.never_ready = true;
        never.fail_after = Some(Duration::from_secs(3));
        let (s, after) = advance(&Stage::Creating, &never, false, &mut b, &config);
        assert_eq!(
            (s.clone(), after),
            (
                Stage::Running { ready: false },
                Some(Duration::from_secs(3))
            )
        );
        let (s, after) = advance(&s, &never, false, &mut b, &config);
        assert!(matches!(s, Stage::Terminated { exit_code: 1, .. }));
        assert_eq!(after, None);

        let mut crash = behaviour();
        crash.crash_loop = true;
        let (mut s, _) = advance(&Stage::Creating, &crash, false, &mut b, &config);
        let mut restarts = vec![];
        let mut backoffs = vec![];
        for _ in 0..6 {
            if let Stage::CrashLoop {
                restarts: r,
                backoff,
                ..
            } = &s
            {
                restarts.push(*r);
                backoffs.push(backoff.clone());
            }
            s = advance(&s, &crash, false, &mut b, &config).0;
        }
        assert_eq!(restarts, vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(backoffs, vec!["1s", "2s", "4s", "8s", "10s", "10s"]);

        let (s, after) = advance(&Stage::Creating, &crash, true, &mut b, &config);
        assert!(
            matches!(s, Stage::Terminated { exit_code: 1, .. }),
            "restartPolicy Never: {s:?}"
        );
        assert_eq!(after, None);
    }
}
