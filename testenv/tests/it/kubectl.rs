//! The real `kubectl` against the server, with a fresh `--cache-dir`, in a namespace of its own.
//! On a real kube-apiserver with `KCM_SPEC_SERVER` (and `KUBECONFIG` for kubectl; see
//! testenv/README.md).

use crate::common;
use std::process::Stdio;
use std::time::Duration;

use crate::common::kubectl::Kubectl;
use crate::common::server::Server;
use crate::common::spec::NO_SCHEDULER;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const DEPLOY: &str = "apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
spec:
  selector:
    matchLabels: {app: web}
  template:
    metadata:
      labels: {app: web}
    spec:
      containers:
      - name: web
        image: nginx:1.25
";

fn header(out: &str) -> Vec<&str> {
    out.lines()
        .next()
        .unwrap_or("")
        .split_whitespace()
        .collect()
}

#[tokio::test]
async fn kubectl_suite() {
    if Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .await
        .is_err()
    {
        eprintln!("kubectl not installed; skipping");
        return;
    }
    let mut env = Server::start("kubectl").await;
    let ns = env.ns("suite").await;
    let k = Kubectl::new(env.kubeconfig(), &ns);
    let f = k.file("d.yaml", DEPLOY);

    assert!(k.ok(&["version"]).await.contains("Server Version: v1.37.2"));
    let ar = k.ok(&["api-resources"]).await;
    for want in ["deploy", "rs", "po", "ns", "ev", "leases"] {
        assert!(ar.split_whitespace().any(|w| w == want), "{want} in {ar}");
    }

    assert_eq!(
        k.ok(&["create", "-f", &f]).await.trim(),
        "deployment.apps/web created"
    );
    k.ok(&["delete", "-f", &f]).await;
    assert_eq!(
        k.ok(&["apply", "-f", &f]).await.trim(),
        "deployment.apps/web created"
    );
    assert_eq!(
        k.ok(&["apply", "-f", &f]).await.trim(),
        "deployment.apps/web unchanged"
    );
    let f2 = k.file("d2.yaml", &DEPLOY.replace("nginx:1.25", "nginx:1.26"));
    assert_eq!(
        k.ok(&["apply", "-f", &f2]).await.trim(),
        "deployment.apps/web configured"
    );

    // server-side apply: kubectl's own field manager, a conflict for another one, force
    let lease = "apiVersion: coordination.k8s.io/v1\nkind: Lease\nmetadata:\n  name: holder\nspec:\n  holderIdentity: a\n";
    let l = k.file("l.yaml", lease);
    assert_eq!(
        k.ok(&["apply", "--server-side", "-f", &l]).await.trim(),
        "lease.coordination.k8s.io/holder serverside-applied"
    );
    let l2 = k.file(
        "l2.yaml",
        &lease.replace("holderIdentity: a", "holderIdentity: b"),
    );
    let out = k
        .cmd(&["apply", "--server-side", "--field-manager=other", "-f", &l2])
        .output()
        .await
        .expect("run kubectl");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        !out.status.success()
            && err.contains(
                "Apply failed with 1 conflict: conflict with \"kubectl\": .spec.holderIdentity"
            ),
        "{err}"
    );
    assert_eq!(
        k.ok(&[
            "apply",
            "--server-side",
            "--field-manager=other",
            "--force-conflicts",
            "-f",
            &l2
        ])
        .await
        .trim(),
        "lease.coordination.k8s.io/holder serverside-applied"
    );
    assert_eq!(
        k.ok(&[
            "get",
            "lease",
            "holder",
            "-o",
            "jsonpath={.spec.holderIdentity}"
        ])
        .await,
        "b"
    );
    // from client-side to server-side apply: the fields the last client-side apply set are
    // taken over without --force-conflicts, and its annotation follows
    let m = k.file("m.yaml", &lease.replace("name: holder", "name: migrate"));
    assert_eq!(
        k.ok(&["apply", "-f", &m]).await.trim(),
        "lease.coordination.k8s.io/migrate created"
    );
    let m2 = k.file(
        "m2.yaml",
        &lease
            .replace("name: holder", "name: migrate")
            .replace("holderIdentity: a", "holderIdentity: c"),
    );
    assert_eq!(
        k.ok(&["apply", "--server-side", "-f", &m2]).await.trim(),
        "lease.coordination.k8s.io/migrate serverside-applied"
    );
    let last = k
        .ok(&[
            "get",
            "lease",
            "migrate",
            "-o",
            r"jsonpath={.metadata.annotations.kubectl\.kubernetes\.io/last-applied-configuration}",
        ])
        .await;
    assert!(last.contains(r#""holderIdentity":"c""#), "{last}");

    let get = k.ok(&["get", "deploy"]).await;
    assert_eq!(
        header(&get),
        vec!["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    );
    assert!(
        get.lines()
            .nth(1)
            .is_some_and(|l| l.starts_with("web ") && l.contains("0/1")),
        "{get}"
    );
    let wide = k.ok(&["get", "deploy", "-o", "wide"]).await;
    assert_eq!(
        header(&wide),
        vec![
            "NAME",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "AGE",
            "CONTAINERS",
            "IMAGES",
            "SELECTOR"
        ]
    );
    let yaml = k.ok(&["get", "deploy", "web", "-o", "yaml"]).await;
    assert!(
        yaml.contains("image: nginx:1.26") && yaml.contains("revisionHistoryLimit: 10"),
        "{yaml}"
    );

    assert_eq!(
        k.ok(&["scale", "deploy/web", "--replicas=3"]).await.trim(),
        "deployment.apps/web scaled"
    );
    assert_eq!(
        k.ok(&["get", "deploy", "web", "-o", "jsonpath={.spec.replicas}"])
            .await,
        "3"
    );
    assert_eq!(
        k.ok(&["rollout", "pause", "deploy/web"]).await.trim(),
        "deployment.apps/web paused"
    );
    assert_eq!(
        k.ok(&["get", "deploy", "web", "-o", "jsonpath={.spec.paused}"])
            .await,
        "true"
    );
    assert_eq!(
        k.ok(&["rollout", "resume", "deploy/web"]).await.trim(),
        "deployment.apps/web resumed"
    );
    assert_eq!(
        k.ok(&["get", "deploy", "web", "-o", "jsonpath={.spec.paused}"])
            .await,
        ""
    );
    assert_eq!(
        k.ok(&["set", "image", "deploy/web", "web=nginx:1.27"])
            .await
            .trim(),
        "deployment.apps/web image updated"
    );
    assert_eq!(
        k.ok(&["annotate", "deploy", "web", "team=a"]).await.trim(),
        "deployment.apps/web annotated"
    );
    k.ok(&[
        "patch",
        "deploy",
        "web",
        "--type",
        "merge",
        "-p",
        r#"{"spec":{"replicas":2}}"#,
    ])
    .await;
    k.ok(&[
        "patch",
        "deploy",
        "web",
        "--type",
        "json",
        "-p",
        r#"[{"op":"add","path":"/spec/minReadySeconds","value":1}]"#,
    ])
    .await;
    k.ok(&[
        "patch",
        "deploy",
        "web",
        "--type",
        "strategic",
        "-p",
        r#"{"spec":{"template":{"spec":{"containers":[{"name":"web","image":"nginx:1.28"}]}}}}"#,
    ])
    .await;
    let got = k.ok(&["get", "deploy", "web", "-o", "jsonpath={.spec.replicas} {.spec.minReadySeconds} {.spec.template.spec.containers[0].image} {.metadata.annotations.team}"]).await;
    assert_eq!(got, "2 1 nginx:1.28 a");
    let desc = k.ok(&["describe", "deploy", "web"]).await;
    assert!(
        desc.contains("Name:                   web")
            && desc.contains("Selector:               app=web"),
        "{desc}"
    );

    // rollout status, plain list+watch and streaming list (WatchListClient): report a
    // finished rollout written through /status, as the deployment controller would
    let d = common::req(
        &env,
        "GET",
        &format!("/apis/apps/v1/namespaces/{ns}/deployments/web"),
        None,
    )
    .await
    .json();
    let mut st = d.clone();
    st["status"] = serde_json::json!({"observedGeneration": d["metadata"]["generation"], "replicas": 2, "updatedReplicas": 2, "readyReplicas": 2, "availableReplicas": 2});
    let r = common::req(
        &env,
        "PUT",
        &format!("/apis/apps/v1/namespaces/{ns}/deployments/web/status"),
        Some(&st),
    )
    .await;
    assert_eq!(r.code, 200);
    let done = "deployment \"web\" successfully rolled out";
    assert!(
        k.ok(&["rollout", "status", "deploy/web", "--timeout=20s"])
            .await
            .contains(done)
    );
    let out = k
        .cmd(&["rollout", "status", "deploy/web", "--timeout=20s"])
        .env("KUBE_FEATURE_WatchListClient", "true")
        .output()
        .await
        .expect("run");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains(done));

    // get -w prints the new pod, then we stop it
    let mut child = k
        .cmd(&["get", "pods", "-w"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    // whether the pod is created before or after the watch starts, it is printed once as a row
    // a scheduler nobody runs keeps it Pending on a real cluster with simulated nodes too
    let overrides = format!(r#"{{"spec":{{"schedulerName":"{NO_SCHEDULER}"}}}}"#);
    k.ok(&["run", "p1", "--image=nginx", "--overrides", &overrides])
        .await;
    let mut seen = false;
    while let Ok(Ok(Some(l))) =
        tokio::time::timeout(Duration::from_secs(20), lines.next_line()).await
    {
        if l.starts_with("p1 ") {
            assert!(l.contains("Pending"), "{l}");
            seen = true;
            break;
        }
    }
    let _ = child.kill().await;
    assert!(seen, "get -w printed the pod");

    let pods = k.ok(&["get", "pods"]).await;
    assert_eq!(
        header(&pods),
        vec!["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    );
    assert_eq!(
        k.ok(&["delete", "pod", "p1"]).await.trim(),
        "pod \"p1\" deleted"
    );
    assert_eq!(
        k.ok(&["delete", "deploy", "web"]).await.trim(),
        "deployment.apps \"web\" deleted"
    );
    let out = k.cmd(&["get", "deploy"]).output().await.expect("run");
    assert!(String::from_utf8_lossy(&out.stderr).contains("No resources found"));
    env.finish().await;
}

/// `kubectl explain` reads the OpenAPI v3 documents (built-in kinds from upstream's own
/// documents in the Go module cache, else from the generated definitions, custom resources from
/// their CRDs) and `kubectl diff`
/// the dry-run patch and the documents' patch parameters.
#[tokio::test]
async fn kubectl_explain_and_diff() {
    if Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .await
        .is_err()
    {
        eprintln!("kubectl not installed; skipping");
        return;
    }
    let mut env = Server::start("kubectlapi").await;
    let ns = env.ns("x").await;
    let k = Kubectl::new(env.kubeconfig(), &ns);

    let out = k.ok(&["explain", "deployment.spec"]).await;
    assert!(
        out.contains("KIND:       Deployment")
            && out.contains("FIELD: spec <DeploymentSpec>")
            && out.contains("replicas\t<integer>")
            && out.contains("strategy\t<DeploymentStrategy>"),
        "{out}"
    );
    let out = k
        .ok(&["explain", "deployment.spec.template.spec.containers.image"])
        .await;
    assert!(out.contains("FIELD: image <string>"), "{out}");

    let group = env.group("w");
    env.track_crd(&format!("widgets.{group}"));
    let crd = k.file(
        "crd.yaml",
        &format!(
            "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.{group}
spec:
  group: {group}
  scope: Namespaced
  names: {{plural: widgets, singular: widget, kind: Widget}}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            description: what the widget should be
            properties:
              replicas: {{type: integer, description: how many}}
              color: {{type: string, enum: [red, blue]}}
"
        ),
    );
    k.ok(&["apply", "-f", &crd]).await;
    k.ok(&[
        "wait",
        "--for=condition=Established",
        &format!("crd/widgets.{group}"),
    ])
    .await;
    // kubectl finds it through aggregated discovery
    let names = k
        .ok(&["api-resources", "--api-group", &group, "-o", "name"])
        .await;
    assert_eq!(names.trim(), format!("widgets.{group}"));
    let api_version = format!("{group}/v1");
    // the CRD's document follows its establishment (a moment later on kube-apiserver)
    let mut out = String::new();
    for _ in 0..50 {
        let o = k
            .cmd(&["explain", "widgets.spec", "--api-version", &api_version])
            .output()
            .await
            .expect("run");
        out = String::from_utf8_lossy(&o.stdout).into_owned();
        if o.status.success() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    assert!(
        out.contains("KIND:       Widget")
            && out.contains("what the widget should be")
            && out.contains("replicas\t<integer>")
            && out.contains("how many"),
        "{out}"
    );
    let out = k
        .ok(&[
            "explain",
            "widgets.metadata.labels",
            "--api-version",
            &api_version,
        ])
        .await;
    assert!(out.contains("FIELD: labels <map[string]string>"), "{out}");

    let f = k.file("d.yaml", DEPLOY);
    k.ok(&["apply", "-f", &f]).await;
    let f2 = k.file("d2.yaml", &DEPLOY.replace("nginx:1.25", "nginx:1.26"));
    let out = k
        .cmd(&["diff", "-f", &f2])
        .output()
        .await
        .expect("run diff");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    let changed = |sign: char, image: &str| {
        text.lines()
            .any(|l| l.starts_with(sign) && l.trim_end().ends_with(&format!("image: {image}")))
    };
    assert!(
        changed('-', "nginx:1.25") && changed('+', "nginx:1.26"),
        "{text}"
    );
    // nothing was written
    let image = k
        .ok(&[
            "get",
            "deploy",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ])
        .await;
    assert_eq!(image, "nginx:1.25");
    env.finish().await;
}

/// `kubectl apply --server-side` and `kubectl diff --server-side`: the apply patch with the
/// field manager kubectl names, and its dry run.
#[tokio::test]
async fn kubectl_apply_server_side() {
    if Command::new("kubectl")
        .arg("version")
        .arg("--client")
        .output()
        .await
        .is_err()
    {
        eprintln!("kubectl not installed; skipping");
        return;
    }
    let mut env = Server::start("kubectlssa").await;
    let ns = env.ns("x").await;
    let k = Kubectl::new(env.kubeconfig(), &ns);
    let f = k.file("d.yaml", DEPLOY);
    assert_eq!(
        k.ok(&["apply", "--server-side", "-f", &f]).await.trim(),
        "deployment.apps/web serverside-applied"
    );
    let managers = k
        .ok(&[
            "get",
            "deploy",
            "web",
            "--show-managed-fields",
            "-o",
            "jsonpath={.metadata.managedFields[*].manager}",
        ])
        .await;
    assert!(
        managers.split_whitespace().any(|m| m == "kubectl"),
        "{managers}"
    );
    let f2 = k.file("d2.yaml", &DEPLOY.replace("nginx:1.25", "nginx:1.26"));
    let out = k
        .cmd(&["diff", "--server-side", "-f", &f2])
        .output()
        .await
        .expect("run diff");
    let text = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        text.lines()
            .any(|l| l.starts_with('+') && l.trim_end().ends_with("image: nginx:1.26")),
        "{text}"
    );
    assert_eq!(
        k.ok(&["apply", "--server-side", "-f", &f2]).await.trim(),
        "deployment.apps/web serverside-applied"
    );
    let image = k
        .ok(&[
            "get",
            "deploy",
            "web",
            "-o",
            "jsonpath={.spec.template.spec.containers[0].image}",
        ])
        .await;
    assert_eq!(image, "nginx:1.26");
    env.finish().await;
}
