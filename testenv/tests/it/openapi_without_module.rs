//! OpenAPI for a user who only added kcm-testenv to their `Cargo.toml`: without the Go module
//! cache (no `k8s.io/kubernetes@v1.37.2` under `$GOMODCACHE`, `$GOPATH/pkg/mod` or
//! `~/go/pkg/mod`) the built-in kinds' documents are built from the generated definitions, and
//! `kubectl explain` reads them. The test runs itself again in a child process whose
//! environment has no module cache (the server looks for it once per process).

use std::path::Path;
use std::process::Command;

use kcm_testenv::{TestEnv, TestEnvConfig};
use serde_json::{Value, json};

const CHILD: &str = "KCM_TESTENV_OPENAPI_CHILD";
const NAME: &str = "documents_without_the_module_cache";

/// The test's name as libtest knows it: its module path in the test binary, then its name.
fn test_name() -> String {
    let module = module_path!().split_once("::").map_or("", |(_, m)| m);
    format!("{module}::{NAME}")
}

async fn get(client: &kube::Client, path: &str) -> Value {
    let req = http::Request::get(path).body(Vec::new()).expect("request");
    let text = client.request_text(req).await.expect(path);
    serde_json::from_str(&text).expect("json")
}

#[tokio::test]
async fn documents_without_the_module_cache() {
    let Some(home) = std::env::var_os(CHILD) else {
        let home =
            std::env::temp_dir().join(format!("kcm-testenv-nomodule-{}", std::process::id()));
        std::fs::create_dir_all(&home).expect("home");
        let out = Command::new(std::env::current_exe().expect("test binary"))
            .args(["--exact", &test_name(), "--nocapture"])
            .env(CHILD, &home)
            .env("HOME", &home)
            .env("GOMODCACHE", home.join("no-module-cache"))
            .env_remove("GOPATH")
            .output()
            .expect("run the child");
        let _ = std::fs::remove_dir_all(&home);
        assert!(
            out.status.success() && String::from_utf8_lossy(&out.stdout).contains("1 passed"),
            "child failed:\n{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        return;
    };
    let env = TestEnv::start(TestEnvConfig::default())
        .await
        .expect("start");
    let client = env.client();

    // every built-in group version has its document in the index
    let index = get(&client, "/openapi/v3").await;
    for key in [
        "api",
        "api/v1",
        "apis",
        "apis/apps",
        "apis/apps/v1",
        "apis/apiregistration.k8s.io/v1",
        "apis/batch/v1",
        "version",
    ] {
        assert!(
            index["paths"][key]["serverRelativeURL"].is_string(),
            "{key}"
        );
    }
    let url = index["paths"]["apis/apps/v1"]["serverRelativeURL"]
        .as_str()
        .expect("url");
    let apps = get(&client, url).await;
    let deployment = &apps["components"]["schemas"]["io.k8s.api.apps.v1.Deployment"];
    assert_eq!(
        deployment["x-kubernetes-group-version-kind"],
        json!([{"group": "apps", "kind": "Deployment", "version": "v1"}])
    );
    assert!(deployment.get("description").is_none());
    let containers =
        &apps["components"]["schemas"]["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"];
    assert_eq!(containers["x-kubernetes-list-map-keys"], json!(["name"]));
    let item = &apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"];
    assert_eq!(
        item["patch"]["operationId"],
        "patchAppsV1NamespacedDeployment"
    );

    // the swagger document
    let v2 = get(&client, "/openapi/v2").await;
    assert_eq!(v2["swagger"], "2.0");
    assert_eq!(
        v2["definitions"]["io.k8s.api.core.v1.ConfigMap"]["properties"]["metadata"],
        json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"})
    );
    assert!(v2["paths"]["/api/v1/namespaces/{namespace}/configmaps"]["post"].is_object());

    // kubectl reads them (run beside the server: the test's runtime serves it meanwhile)
    if Command::new("kubectl")
        .args(["version", "--client"])
        .output()
        .is_ok()
    {
        let cache = Path::new(&home).join("kubectl-cache");
        let out = tokio::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(env.kubeconfig_path())
            .arg("--cache-dir")
            .arg(&cache)
            .args(["explain", "deployment.spec"])
            .output()
            .await
            .expect("kubectl");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success()
                && text.contains("KIND:       Deployment")
                && text.contains("replicas\t<integer>")
                && text.contains("strategy\t<DeploymentStrategy>"),
            "{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    } else {
        eprintln!("kubectl not installed; kubectl explain not checked");
    }
    env.shutdown().await;
}
