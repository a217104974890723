//! Pure builders of the pod status a kubelet writes at each stage of a pod's life (upstream
//! `pkg/kubelet/status/generate.go` and `kubelet_pods.go` `generateAPIPodStatus`,
//! `convertToAPIContainerStatuses`), as JSON for a `/status` merge patch. A container that was
//! never created reports the image as the spec writes it; a created one the runtime's
//! normalised reference.

use k8s_openapi::api::core::v1::{Container, Pod};
use serde_json::{Value, json};

use super::image_pull::{back_off_message, pull_error};
use super::image_reference::normalize_image;

/// Where a pod is in its simulated life.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Stage {
    /// Admitted, sandbox and containers being created (phase Pending).
    Creating,
    /// Containers running; `ready` is false for never-ready pods.
    Running {
        /// Whether the containers pass readiness.
        ready: bool,
    },
    /// Containers crashed `restarts` times and wait for a restart (phase Running, CrashLoopBackOff).
    CrashLoop {
        /// Restart count.
        restarts: i32,
        /// Current back-off text (Go duration, `10s`).
        backoff: String,
        /// When the last run started and finished.
        last_started: String,
        /// When the last run ended.
        last_finished: String,
    },
    /// Some images cannot be pulled (phase Pending, sandbox up): those containers wait with
    /// `ErrImagePull`, or `ImagePullBackOff` while the kubelet backs off; the other containers
    /// of the same kind run. While init containers fail, the app containers wait
    /// `PodInitializing`.
    PullFailing {
        /// The containers whose image fails.
        failing: Vec<String>,
        /// Whether they are init containers.
        init: bool,
        /// Failed pulls so far.
        failures: u32,
        /// Backing off (`ImagePullBackOff`) rather than just failed (`ErrImagePull`).
        backing_off: bool,
    },
    /// Containers exited; `exit_code` 0 gives phase Succeeded, otherwise Failed.
    Terminated {
        /// The exit code of every container.
        exit_code: i32,
        /// When they exited.
        finished_at: String,
    },
}

/// What the runtime knows about a pod.
#[derive(Debug, Clone)]
pub(crate) struct Runtime {
    /// Node InternalIP.
    pub host_ip: String,
    /// Pod IP once the sandbox is up.
    pub pod_ip: Option<String>,
    /// When the kubelet admitted the pod.
    pub start_time: String,
    /// When the containers started.
    pub containers_started_at: String,
    /// `containerd://<id>` per container, in spec order.
    pub container_ids: Vec<String>,
}

/// A stable fake `imageID` (`<repo>@sha256:<64 hex>`) derived from the image name.
pub(crate) fn image_id(image: &str) -> String {
    use std::hash::{Hash, Hasher};
    let normalized = normalize_image(image);
    let repo = normalized
        .split('@')
        .next()
        .unwrap_or("")
        .rsplit_once(':')
        .filter(|(_, tag)| !tag.contains('/'))
        .map(|(r, _)| r.to_string())
        .unwrap_or_else(|| normalized.clone());
    let mut hex = String::with_capacity(64);
    for i in 0u8..4 {
        let mut h = std::collections::hash_map::DefaultHasher::new();
        (normalized.as_str(), i).hash(&mut h);
        hex.push_str(&format!("{:016x}", h.finish()));
    }
    format!("{repo}@sha256:{hex}")
}

fn go_list(names: &[String]) -> String {
    format!("[{}]", names.join(" "))
}

fn condition(type_: &str, status: bool, reason: Option<&str>, message: Option<String>) -> Value {
    let mut c = json!({
        "type": type_,
        "status": if status { "True" } else { "False" },
        "lastProbeTime": null,
    });
    if let Some(obj) = c.as_object_mut() {
        if let Some(r) = reason {
            obj.insert("reason".into(), r.into());
        }
        if let Some(m) = message {
            obj.insert("message".into(), m.into());
        }
    }
    c
}

/// Fill `lastTransitionTime`: kept from the pod's current condition of the same type and status,
/// `now` otherwise (upstream `updateLastTransitionTime`).
fn stamp(conditions: &mut [Value], pod: &Pod, now: &str) {
    let old = pod
        .status
        .as_ref()
        .and_then(|s| s.conditions.as_ref())
        .cloned()
        .unwrap_or_default();
    for c in conditions.iter_mut() {
        let t = c["type"].as_str().unwrap_or("").to_string();
        let s = c["status"].as_str().unwrap_or("").to_string();
        let kept = old
            .iter()
            .find(|o| o.type_ == t && o.status == s)
            .and_then(|o| o.last_transition_time.as_ref())
            .and_then(|t| serde_json::to_value(t).ok());
        if let Some(obj) = c.as_object_mut() {
            obj.insert(
                "lastTransitionTime".into(),
                kept.unwrap_or_else(|| Value::from(now)),
            );
        }
    }
}

/// A container the runtime never created: the spec's image, waiting with `reason` (upstream's
/// default waiting state).
fn never_created(c: &Container, reason: &str) -> Value {
    json!({
        "name": c.name,
        "image": c.image.clone().unwrap_or_default(),
        "imageID": "",
        "ready": false,
        "started": false,
        "restartCount": 0,
        "state": {"waiting": {"reason": reason}},
        "lastState": {},
    })
}

/// A container whose image cannot be pulled: `ErrImagePull` with the runtime's error, or
/// `ImagePullBackOff` while the kubelet backs off.
fn pull_waiting(c: &Container, backing_off: bool) -> Value {
    let image = c.image.clone().unwrap_or_default();
    let (reason, message) = if backing_off {
        ("ImagePullBackOff", back_off_message(&image))
    } else {
        ("ErrImagePull", pull_error(&image))
    };
    let mut s = never_created(c, reason);
    s["state"]["waiting"]["message"] = message.into();
    s
}

/// The full status for `stage`. `now` is an RFC 3339 timestamp at second precision.
pub(crate) fn build_status(pod: &Pod, rt: &Runtime, stage: &Stage, now: &str) -> Value {
    let spec = pod.spec.as_ref();
    let containers = spec.map(|s| s.containers.clone()).unwrap_or_default();
    let init_containers = spec
        .and_then(|s| s.init_containers.clone())
        .unwrap_or_default();
    let names: Vec<String> = containers.iter().map(|c| c.name.clone()).collect();
    let init_names: Vec<String> = init_containers.iter().map(|c| c.name.clone()).collect();

    let (phase, ready, sandbox, initialized) = match stage {
        Stage::Creating => ("Pending", false, false, init_names.is_empty()),
        Stage::PullFailing { init, .. } => ("Pending", false, true, !init),
        Stage::Running { ready } => ("Running", *ready, true, true),
        Stage::CrashLoop { .. } => ("Running", false, true, true),
        Stage::Terminated { exit_code, .. } => (
            if *exit_code == 0 {
                "Succeeded"
            } else {
                "Failed"
            },
            false,
            false,
            true,
        ),
    };

    let container_status = |i: usize, c: &Container| -> Value {
        let image = c.image.clone().unwrap_or_default();
        let id = rt.container_ids.get(i).cloned().unwrap_or_default();
        let mut s = json!({
            "name": c.name,
            "image": normalize_image(&image),
            "imageID": "",
            "ready": false,
            "started": false,
            "restartCount": 0,
            "state": {},
            "lastState": {},
        });
        let running = |s: &mut Value, ready: bool| {
            s["imageID"] = image_id(&image).into();
            s["containerID"] = id.clone().into();
            s["ready"] = ready.into();
            s["started"] = true.into();
            s["state"] = json!({"running": {"startedAt": rt.containers_started_at}});
        };
        match stage {
            Stage::Creating => return never_created(c, "ContainerCreating"),
            Stage::PullFailing { init: true, .. } => return never_created(c, "PodInitializing"),
            Stage::PullFailing {
                failing,
                backing_off,
                ..
            } => {
                if failing.contains(&c.name) {
                    return pull_waiting(c, *backing_off);
                }
                running(&mut s, true);
            }
            Stage::Running { ready } => running(&mut s, *ready),
            Stage::CrashLoop {
                restarts,
                backoff,
                last_started,
                last_finished,
            } => {
                s["imageID"] = image_id(&image).into();
                s["containerID"] = id.into();
                s["restartCount"] = (*restarts).into();
                s["state"] = json!({"waiting": {
                    "reason": "CrashLoopBackOff",
                    "message": format!(
                        "back-off {backoff} restarting failed container={} pod={}_{}({})",
                        c.name,
                        pod.metadata.name.as_deref().unwrap_or(""),
                        pod.metadata.namespace.as_deref().unwrap_or(""),
                        pod.metadata.uid.as_deref().unwrap_or(""),
                    ),
                }});
                s["lastState"] = json!({"terminated": {
                    "exitCode": 1,
                    "reason": "Error",
                    "startedAt": last_started,
                    "finishedAt": last_finished,
                    "containerID": s["containerID"].clone(),
                }});
            }
            Stage::Terminated {
                exit_code,
                finished_at,
            } => {
                s["imageID"] = image_id(&image).into();
                s["containerID"] = id.clone().into();
                s["state"] = json!({"terminated": {
                    "exitCode": exit_code,
                    "reason": if *exit_code == 0 { "Completed" } else { "Error" },
                    "startedAt": rt.containers_started_at,
                    "finishedAt": finished_at,
                    "containerID": id,
                }});
            }
        }
        s
    };
    let container_statuses: Vec<Value> = containers
        .iter()
        .enumerate()
        .map(|(i, c)| container_status(i, c))
        .collect();
    let init_failing = match stage {
        Stage::PullFailing {
            failing,
            init: true,
            backing_off,
            ..
        } => Some((failing, *backing_off)),
        _ => None,
    };
    let init_statuses: Vec<Value> = init_containers
        .iter()
        .map(|c| {
            if let Some((failing, backing_off)) = init_failing
                && failing.contains(&c.name)
            {
                return pull_waiting(c, backing_off);
            }
            let image = c.image.clone().unwrap_or_default();
            let mut s = never_created(c, "PodInitializing");
            if initialized || init_failing.is_some() {
                s["image"] = normalize_image(&image).into();
                s["imageID"] = image_id(&image).into();
                s["ready"] = true.into();
                s["state"] = json!({"terminated": {
                    "exitCode": 0,
                    "reason": "Completed",
                    "startedAt": rt.start_time,
                    "finishedAt": rt.containers_started_at,
                }});
            }
            s
        })
        .collect();

    // Containers that run are ready unless the pod is not; those whose image fails are not.
    let unready_names: Vec<String> = match stage {
        Stage::PullFailing {
            failing,
            init: false,
            ..
        } => names
            .iter()
            .filter(|n| failing.contains(n))
            .cloned()
            .collect(),
        _ => names.clone(),
    };
    let incomplete_names: Vec<String> = match stage {
        Stage::PullFailing {
            failing,
            init: true,
            ..
        } => init_names
            .iter()
            .filter(|n| failing.contains(n))
            .cloned()
            .collect(),
        _ => init_names.clone(),
    };
    let unready = || {
        Some(format!(
            "containers with unready status: {}",
            go_list(&unready_names)
        ))
    };
    let (ready_reason, ready_message) = match stage {
        Stage::Terminated { exit_code: 0, .. } => (Some("PodCompleted"), None),
        Stage::Terminated { .. } => (Some("PodFailed"), None),
        _ if ready => (None, None),
        _ => (Some("ContainersNotReady"), unready()),
    };
    let initialized_reason = match stage {
        Stage::Terminated { exit_code: 0, .. } => Some("PodCompleted"),
        _ if !initialized => Some("ContainersNotInitialized"),
        _ => None,
    };
    let initialized_message = (!initialized).then(|| {
        format!(
            "containers with incomplete status: {}",
            go_list(&incomplete_names)
        )
    });
    let mut conditions = vec![
        condition("PodReadyToStartContainers", sandbox, None, None),
        condition(
            "Initialized",
            initialized,
            initialized_reason,
            initialized_message,
        ),
        condition("Ready", ready, ready_reason, ready_message.clone()),
        condition("ContainersReady", ready, ready_reason, ready_message),
        condition("PodScheduled", true, None, None),
    ];
    stamp(&mut conditions, pod, now);

    let mut status = json!({
        "phase": phase,
        "conditions": conditions,
        "hostIP": rt.host_ip,
        "hostIPs": [{"ip": rt.host_ip}],
        "startTime": rt.start_time,
        "containerStatuses": container_statuses,
    });
    if !init_statuses.is_empty() {
        status["initContainerStatuses"] = Value::from(init_statuses);
    }
    if let Some(ip) = &rt.pod_ip
        && !matches!(stage, Stage::Creating)
    {
        status["podIP"] = ip.as_str().into();
        status["podIPs"] = json!([{"ip": ip}]);
    }
    status
}
