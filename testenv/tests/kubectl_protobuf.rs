//! kubectl's imperative creates send protobuf bodies; the server decodes them like JSON.

mod common;

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
