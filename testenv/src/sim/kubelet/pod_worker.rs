//! One pod's worker (upstream's pod workers and status manager, simulated): it follows the pod
//! through its stages ([`script`](super::script)), posts each status with the pod's uid as
//! precondition (repairing one someone else changed), writes the kubelet's events, and finishes
//! a graceful deletion with `DELETE gracePeriodSeconds=0`.

use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kube::Api;
use kube::api::{DeleteParams, Patch, PatchParams, Preconditions};
use serde_json::json;
use tokio::sync::watch;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use super::super::annotations::PodBehaviour;
use super::super::config::SimConfig;
use super::super::events;
use super::super::nodes::SimNode;
use super::super::timestamps::now_time;
use super::image_pull::{pull_error, with_default_tag};
use super::pod_status::{Runtime, Stage, build_status};
use super::script::{PullFailure, advance, pull_failure};

const RETRY: Duration = Duration::from_millis(100);

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

/// Follow one pod until its deletion is done or `token` is cancelled.
pub(super) async fn pod_worker(
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
        let pull = pull_failure(&pod, &config.missing_images);
        // The spec's images changed while a pull fails: pull again at once.
        if let Some(Stage::PullFailing { failing, init, .. }) = &stage
            && pull
                .as_ref()
                .is_none_or(|p| p.containers != *failing || p.init != *init)
        {
            next = Some(Instant::now());
        }
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
                    pull.as_ref(),
                    &config,
                );
                let starting = matches!(current, Stage::Creating | Stage::PullFailing { .. })
                    && !matches!(new_stage, Stage::PullFailing { .. });
                if starting {
                    rt.containers_started_at = now_time();
                    if config.events && !matches!(new_stage, Stage::Terminated { .. }) {
                        started_events(&client, &pod, &node.name);
                    }
                }
                if config.events
                    && let (Stage::PullFailing { backing_off, .. }, Some(p)) =
                        (&new_stage, pull.as_ref())
                {
                    pull_events(&client, &pod, &node.name, p, *backing_off);
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

/// The events of containers starting: the image present, the container created and started.
fn started_events(client: &kube::Client, pod: &Arc<Pod>, node: &str) {
    for c in pod.spec.iter().flat_map(|s| s.containers.iter()) {
        let (name, image) = (&c.name, c.image.as_deref().unwrap_or(""));
        let present = format!("Container image \"{image}\" already present on machine");
        emit(client, pod, node, Some(name), "Normal", "Pulled", present);
        let created = format!("Created container: {name}");
        emit(client, pod, node, Some(name), "Normal", "Created", created);
        let started = format!("Started container {name}");
        emit(client, pod, node, Some(name), "Normal", "Started", started);
    }
}

/// The events of images that cannot be pulled (upstream `image_manager.go` and
/// `kuberuntime_container.go`): a pull and its failure, or the back-off.
fn pull_events(
    client: &kube::Client,
    pod: &Arc<Pod>,
    node: &str,
    pull: &PullFailure,
    backing_off: bool,
) {
    let spec = pod.spec.as_ref();
    let containers = spec
        .iter()
        .flat_map(|s| {
            s.init_containers
                .iter()
                .flatten()
                .chain(s.containers.iter())
        })
        .filter(|c| pull.containers.contains(&c.name));
    for c in containers {
        let image = with_default_tag(c.image.as_deref().unwrap_or(""));
        let name = Some(c.name.as_str());
        if backing_off {
            let note = format!("Back-off pulling image \"{image}\"");
            emit(client, pod, node, name, "Normal", "BackOff", note);
            let note = "Error: ImagePullBackOff".to_string();
            emit(client, pod, node, name, "Warning", "Failed", note);
        } else {
            let note = format!("Pulling image \"{image}\"");
            emit(client, pod, node, name, "Normal", "Pulling", note);
            let error = pull_error(c.image.as_deref().unwrap_or(""));
            let note = format!("Failed to pull image \"{image}\": {error}");
            emit(client, pod, node, name, "Warning", "Failed", note);
            let note = "Error: ErrImagePull".to_string();
            emit(client, pod, node, name, "Warning", "Failed", note);
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
