//! The audit log over real HTTP: every answered write, and only writes, is appended in
//! kube-apiserver's format with its User-Agent, object and response code.

use k8s_openapi::api::coordination::v1::Lease;
use kcm_testenv::{TestEnv, TestEnvConfig};
use kube::api::{Api, DeleteParams, PostParams};

#[tokio::test]
async fn answered_writes_are_logged_with_their_writer_and_code() {
    let dir = std::env::temp_dir().join(format!("kcm-testenv-audit-http-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let path = dir.join("audit.log");
    let _ = std::fs::remove_file(&path);
    let env = TestEnv::start(TestEnvConfig {
        audit_log_path: Some(path.clone()),
        ..TestEnvConfig::default()
    })
    .await
    .expect("testenv");
    let mut config = kube::Config::new(env.url().parse().expect("url"));
    config.headers.push((
        http::header::USER_AGENT,
        http::HeaderValue::from_static("audit-test shard-member/a_1"),
    ));
    let client = kube::Client::try_from(config).expect("client");
    let leases: Api<Lease> = Api::namespaced(client, "default");
    let lease = Lease {
        metadata: kube::api::ObjectMeta {
            name: Some("l".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    let created = leases
        .create(&PostParams::default(), &lease)
        .await
        .expect("create");
    leases
        .create(&PostParams::default(), &lease)
        .await
        .expect_err("exists");
    leases.get("l").await.expect("get");
    leases
        .replace("l", &PostParams::default(), &created)
        .await
        .expect("update");
    leases
        .delete("l", &DeleteParams::default())
        .await
        .expect("delete");

    let text = std::fs::read_to_string(&path).expect("audit log");
    let events: Vec<serde_json::Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    let seen: Vec<(String, i64)> = events
        .iter()
        .filter(|e| e["userAgent"] == "audit-test shard-member/a_1")
        .map(|e| {
            (
                e["verb"].as_str().unwrap_or_default().to_string(),
                e["responseStatus"]["code"].as_i64().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        seen,
        [
            ("create".to_string(), 201),
            ("create".to_string(), 409),
            ("update".to_string(), 200),
            ("delete".to_string(), 200),
        ],
        "the get is not logged: {text}"
    );
    let update = &events[events.len() - 2];
    assert_eq!(update["objectRef"]["resource"], "leases");
    assert_eq!(update["objectRef"]["namespace"], "default");
    assert_eq!(update["objectRef"]["name"], "l");
    assert_eq!(update["stage"], "ResponseComplete");
    assert!(
        update["requestURI"].as_str().is_some_and(
            |u| u.starts_with("/apis/coordination.k8s.io/v1/namespaces/default/leases/l")
        ),
        "{update}"
    );
    assert!(update["requestReceivedTimestamp"].as_str() <= update["stageTimestamp"].as_str());
    env.shutdown().await;
    let _ = std::fs::remove_dir_all(&dir);
}
