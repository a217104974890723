//! Pure builders of the pod status a kubelet writes at each stage of a pod's life (upstream
//! `pkg/kubelet/status/generate.go` and `kubelet_pods.go` `generateAPIPodStatus`), as JSON for a
//! `/status` merge patch.

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

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

/// The normalised image reference containerd reports (`nginx` → `docker.io/library/nginx:latest`).
pub(crate) fn normalize_image(image: &str) -> String {
    let (name, digest) = match image.split_once('@') {
        Some((n, d)) => (n, Some(d)),
        None => (image, None),
    };
    let first = name.split('/').next().unwrap_or("");
    let has_registry =
        name.contains('/') && (first.contains('.') || first.contains(':') || first == "localhost");
    let mut full = if has_registry {
        name.to_string()
    } else if name.contains('/') {
        format!("docker.io/{name}")
    } else {
        format!("docker.io/library/{name}")
    };
    let last = full.rsplit('/').next().unwrap_or("");
    if digest.is_none() && !last.contains(':') {
        full.push_str(":latest");
    }
    match digest {
        Some(d) => format!("{full}@{d}"),
        None => full,
    }
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

    let container_status = |i: usize, c: &k8s_openapi::api::core::v1::Container| -> Value {
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
        match stage {
            Stage::Creating => {
                s["state"] = json!({"waiting": {"reason": "ContainerCreating"}});
            }
            Stage::Running { ready } => {
                s["imageID"] = image_id(&image).into();
                s["containerID"] = id.into();
                s["ready"] = (*ready).into();
                s["started"] = true.into();
                s["state"] = json!({"running": {"startedAt": rt.containers_started_at}});
            }
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
    let init_statuses: Vec<Value> = init_containers
        .iter()
        .map(|c| {
            let image = c.image.clone().unwrap_or_default();
            let mut s = json!({
                "name": c.name,
                "image": normalize_image(&image),
                "imageID": "",
                "ready": false,
                "started": false,
                "restartCount": 0,
                "state": {"waiting": {"reason": "PodInitializing"}},
                "lastState": {},
            });
            if initialized {
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

    let unready = || {
        Some(format!(
            "containers with unready status: {}",
            go_list(&names)
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
            go_list(&init_names)
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

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Pod {
        serde_json::from_value(json!({
            "metadata": {"name": "web-1", "namespace": "default", "uid": "u1"},
            "spec": {"containers": [{"name": "app", "image": "nginx"}, {"name": "side", "image": "quay.io/x/y:1"}]},
            "status": {"conditions": [{"type": "PodScheduled", "status": "True", "lastTransitionTime": "2025-01-01T00:00:00Z"}]}
        }))
        .expect("pod")
    }

    fn rt() -> Runtime {
        Runtime {
            host_ip: "172.18.0.2".into(),
            pod_ip: Some("10.244.1.2".into()),
            start_time: "2025-01-01T00:00:01Z".into(),
            containers_started_at: "2025-01-01T00:00:02Z".into(),
            container_ids: vec!["containerd://a".into(), "containerd://b".into()],
        }
    }

    fn cond<'a>(s: &'a Value, t: &str) -> &'a Value {
        s["conditions"]
            .as_array()
            .and_then(|l| l.iter().find(|c| c["type"] == t))
            .expect("condition")
    }

    #[test]
    fn image_normalization() {
        for (i, want) in [
            ("nginx", "docker.io/library/nginx:latest"),
            ("nginx:1.27", "docker.io/library/nginx:1.27"),
            ("bitnami/redis", "docker.io/bitnami/redis:latest"),
            ("quay.io/x/y:1", "quay.io/x/y:1"),
            ("localhost:5000/a", "localhost:5000/a:latest"),
            ("registry.k8s.io/pause:3.10", "registry.k8s.io/pause:3.10"),
        ] {
            assert_eq!(normalize_image(i), want, "{i}");
        }
        assert!(image_id("nginx").starts_with("docker.io/library/nginx@sha256:"));
        assert_eq!(image_id("nginx"), image_id("nginx"));
        assert_eq!(
            image_id("nginx").len(),
            "docker.io/library/nginx@sha256:".len() + 64
        );
    }

    #[test]
    fn stages() {
        let now = "2025-01-01T00:00:05Z";
        let creating = build_status(&pod(), &rt(), &Stage::Creating, now);
        assert_eq!(creating["phase"], "Pending");
        assert_eq!(
            creating["containerStatuses"][0]["state"]["waiting"]["reason"],
            "ContainerCreating"
        );
        assert!(creating.get("podIP").is_none());
        assert_eq!(cond(&creating, "Ready")["reason"], "ContainersNotReady");
        assert_eq!(
            cond(&creating, "Ready")["message"],
            "containers with unready status: [app side]"
        );
        assert_eq!(
            cond(&creating, "PodReadyToStartContainers")["status"],
            "False"
        );
        // PodScheduled keeps its transition time; others get now.
        assert_eq!(
            cond(&creating, "PodScheduled")["lastTransitionTime"],
            "2025-01-01T00:00:00Z"
        );
        assert_eq!(cond(&creating, "Initialized")["lastTransitionTime"], now);

        let running = build_status(&pod(), &rt(), &Stage::Running { ready: true }, now);
        assert_eq!(running["phase"], "Running");
        assert_eq!(running["podIP"], "10.244.1.2");
        assert_eq!(running["podIPs"][0]["ip"], "10.244.1.2");
        assert_eq!(running["hostIPs"][0]["ip"], "172.18.0.2");
        for t in [
            "PodReadyToStartContainers",
            "Initialized",
            "Ready",
            "ContainersReady",
            "PodScheduled",
        ] {
            assert_eq!(cond(&running, t)["status"], "True", "{t}");
        }
        let c0 = &running["containerStatuses"][0];
        assert_eq!(c0["image"], "docker.io/library/nginx:latest");
        assert_eq!(c0["containerID"], "containerd://a");
        assert_eq!(
            (c0["ready"].clone(), c0["started"].clone()),
            (json!(true), json!(true))
        );
        assert_eq!(c0["state"]["running"]["startedAt"], "2025-01-01T00:00:02Z");

        let never = build_status(&pod(), &rt(), &Stage::Running { ready: false }, now);
        assert_eq!(never["phase"], "Running");
        assert_eq!(cond(&never, "Ready")["status"], "False");
        assert_eq!(never["containerStatuses"][0]["started"], true);
        assert_eq!(never["containerStatuses"][0]["ready"], false);

        let crash = build_status(
            &pod(),
            &rt(),
            &Stage::CrashLoop {
                restarts: 3,
                backoff: "40s".into(),
                last_started: "a".into(),
                last_finished: "b".into(),
            },
            now,
        );
        let c0 = &crash["containerStatuses"][0];
        assert_eq!(c0["restartCount"], 3);
        assert_eq!(c0["state"]["waiting"]["reason"], "CrashLoopBackOff");
        assert_eq!(
            c0["state"]["waiting"]["message"],
            "back-off 40s restarting failed container=app pod=web-1_default(u1)"
        );
        assert_eq!(c0["lastState"]["terminated"]["exitCode"], 1);
        assert_eq!(cond(&crash, "Ready")["status"], "False");

        let failed = build_status(
            &pod(),
            &rt(),
            &Stage::Terminated {
                exit_code: 1,
                finished_at: now.into(),
            },
            now,
        );
        assert_eq!(failed["phase"], "Failed");
        assert_eq!(
            failed["containerStatuses"][0]["state"]["terminated"]["exitCode"],
            1
        );
        assert_eq!(
            failed["containerStatuses"][0]["state"]["terminated"]["reason"],
            "Error"
        );
        assert_eq!(cond(&failed, "Ready")["reason"], "PodFailed");
        let done = build_status(
            &pod(),
            &rt(),
            &Stage::Terminated {
                exit_code: 0,
                finished_at: now.into(),
            },
            now,
        );
        assert_eq!(done["phase"], "Succeeded");
        assert_eq!(cond(&done, "Ready")["reason"], "PodCompleted");
        assert_eq!(cond(&done, "Initialized")["reason"], "PodCompleted");
    }
}
