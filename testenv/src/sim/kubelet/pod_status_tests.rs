//! Tests of the kubelet's pod statuses, stage by stage.

use k8s_openapi::api::core::v1::Pod;
use serde_json::{Value, json};

use super::image_pull::{back_off_message, pull_error};
use super::image_reference::normalize_image;
use super::pod_status::{Runtime, Stage, build_status, image_id};

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

fn pulling(failing: &[&str], init: bool, backing_off: bool) -> Stage {
    Stage::PullFailing {
        failing: failing.iter().map(|s| s.to_string()).collect(),
        init,
        failures: 1,
        backing_off,
    }
}

#[test]
fn image_pull_failures() {
    let now = "2025-01-01T00:00:05Z";
    let mut p = pod();
    if let Some(spec) = p.spec.as_mut() {
        spec.containers[0].image = Some("webserver:404".into());
    }
    let failed = build_status(&p, &rt(), &pulling(&["app"], false, false), now);
    assert_eq!(failed["phase"], "Pending");
    let c0 = &failed["containerStatuses"][0];
    assert_eq!(
        c0["image"], "webserver:404",
        "never created: the spec's image"
    );
    assert_eq!(c0["imageID"], "");
    assert_eq!(c0["started"], false);
    assert_eq!(c0["state"]["waiting"]["reason"], "ErrImagePull");
    assert_eq!(
        c0["state"]["waiting"]["message"],
        pull_error("webserver:404")
    );
    assert!(c0.get("containerID").is_none());
    // The other container runs, ready.
    let c1 = &failed["containerStatuses"][1];
    assert_eq!(c1["state"]["running"]["startedAt"], "2025-01-01T00:00:02Z");
    assert_eq!(c1["ready"], true);
    assert_eq!(cond(&failed, "PodReadyToStartContainers")["status"], "True");
    assert_eq!(cond(&failed, "Initialized")["status"], "True");
    assert_eq!(cond(&failed, "Ready")["status"], "False");
    assert_eq!(
        cond(&failed, "Ready")["message"],
        "containers with unready status: [app]"
    );
    assert_eq!(
        cond(&failed, "ContainersReady")["reason"],
        "ContainersNotReady"
    );
    assert_eq!(failed["podIP"], "10.244.1.2");

    let backing_off = build_status(&p, &rt(), &pulling(&["app"], false, true), now);
    let waiting = &backing_off["containerStatuses"][0]["state"]["waiting"];
    assert_eq!(waiting["reason"], "ImagePullBackOff");
    assert_eq!(waiting["message"], back_off_message("webserver:404"));

    // An init container that fails: app containers wait PodInitializing.
    let init: Pod = serde_json::from_value(json!({
        "metadata": {"name": "web-1", "namespace": "default", "uid": "u1"},
        "spec": {"initContainers": [{"name": "setup", "image": "tool:404"}],
                 "containers": [{"name": "app", "image": "nginx"}]},
    }))
    .expect("pod");
    let s = build_status(&init, &rt(), &pulling(&["setup"], true, false), now);
    assert_eq!(s["phase"], "Pending");
    assert_eq!(
        s["initContainerStatuses"][0]["state"]["waiting"]["reason"],
        "ErrImagePull"
    );
    assert_eq!(
        s["containerStatuses"][0]["state"]["waiting"]["reason"],
        "PodInitializing"
    );
    assert_eq!(s["containerStatuses"][0]["image"], "nginx");
    assert_eq!(cond(&s, "Initialized")["status"], "False");
    assert_eq!(
        cond(&s, "Initialized")["message"],
        "containers with incomplete status: [setup]"
    );
    assert_eq!(
        cond(&s, "Ready")["message"],
        "containers with unready status: [app]"
    );
}
