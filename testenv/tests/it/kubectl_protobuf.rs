//! kubectl's imperative creates send protobuf bodies; the server decodes them like JSON.

use crate::common;
use tokio::process::Command;

async fn kubectl(kubeconfig: &std::path::Path, cache: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kubeconfig)
        .arg("--cache-dir")
        .arg(cache)
        .args(args)
        .output()
        .await
        .expect("run kubectl");
    assert!(
        out.status.success(),
        "kubectl {args:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
async fn kubectl_create_deployment_and_namespace_with_protobuf_bodies() {
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
    let mut env = common::server::Server::start("kubectl-pb").await;
    let ns = env.ns("pb").await;
    let demo = env.ns_name("demo");
    let cache = std::env::temp_dir().join(format!("kcm-testenv-{ns}"));
    let kc = env.kubeconfig();
    assert_eq!(
        kubectl(
            &kc,
            &cache,
            &[
                "-n",
                &ns,
                "create",
                "deployment",
                "web",
                "--image=nginx",
                "--replicas=3"
            ]
        )
        .await
        .trim(),
        "deployment.apps/web created"
    );
    assert_eq!(
        kubectl(&kc, &cache, &["create", "namespace", &demo])
            .await
            .trim(),
        format!("namespace/{demo} created")
    );
    let json = kubectl(
        &kc,
        &cache,
        &["-n", &ns, "get", "deployment", "web", "-o", "json"],
    )
    .await;
    let d: serde_json::Value = serde_json::from_str(&json).expect("json");
    assert_eq!(d["spec"]["replicas"], 3);
    assert_eq!(d["spec"]["selector"]["matchLabels"]["app"], "web");
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx"
    );
    // Server defaults applied after decoding, as for a JSON body.
    assert_eq!(d["spec"]["strategy"]["type"], "RollingUpdate");
    assert_eq!(d["spec"]["revisionHistoryLimit"], 10);
    let _ = std::fs::remove_dir_all(cache);
    env.finish().await;
}

/// Every built-in kind's protobuf body decodes (by schema and the Go types' protobuf tags): the
/// imperative creates a test author reaches for, an Ingress (an inlined struct nested on the
/// wire), a token, and `auth can-i` (a SelfSubjectAccessReview).
#[tokio::test]
async fn kubectl_creates_of_every_kind_with_protobuf_bodies() {
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
    let mut env = common::server::Server::start("kubectl-pb-kinds").await;
    let ns = env.ns("pbk").await;
    let cache = std::env::temp_dir().join(format!("kcm-testenv-{ns}"));
    let kc = env.kubeconfig();
    let n = ["-n", ns.as_str()];
    for (args, want) in [
        (
            vec!["create", "configmap", "c", "--from-literal=a=b"],
            "configmap/c created",
        ),
        (
            vec!["create", "secret", "generic", "s", "--from-literal=a=b"],
            "secret/s created",
        ),
        (
            vec!["create", "job", "j", "--image=busybox"],
            "job.batch/j created",
        ),
        (
            vec!["create", "serviceaccount", "sa"],
            "serviceaccount/sa created",
        ),
        (
            vec!["create", "service", "clusterip", "svc", "--tcp=80:8080"],
            "service/svc created",
        ),
        (
            vec!["create", "ingress", "i", "--rule=a.example.com/=svc:80"],
            "ingress.networking.k8s.io/i created",
        ),
    ] {
        let out = kubectl(&kc, &cache, &[&n[..], &args[..]].concat()).await;
        assert_eq!(out.trim(), want);
    }
    let secret: serde_json::Value = serde_json::from_str(
        &kubectl(
            &kc,
            &cache,
            &[&n[..], &["get", "secret", "s", "-o", "json"]].concat(),
        )
        .await,
    )
    .expect("json");
    assert_eq!(
        (secret["type"].clone(), secret["data"]["a"].clone()),
        (serde_json::json!("Opaque"), serde_json::json!("Yg=="))
    );
    let ing: serde_json::Value = serde_json::from_str(
        &kubectl(
            &kc,
            &cache,
            &[&n[..], &["get", "ingress", "i", "-o", "json"]].concat(),
        )
        .await,
    )
    .expect("json");
    assert_eq!(
        ing["spec"]["rules"][0]["http"]["paths"][0]["backend"]["service"]["name"],
        "svc"
    );
    let token = kubectl(&kc, &cache, &[&n[..], &["create", "token", "sa"]].concat()).await;
    assert_eq!(token.trim().split('.').count(), 3);
    assert_eq!(
        kubectl(
            &kc,
            &cache,
            &[&n[..], &["auth", "can-i", "create", "pods"]].concat()
        )
        .await
        .trim(),
        "yes"
    );
    let _ = std::fs::remove_dir_all(cache);
    env.finish().await;
}
