//! The fault injector installed on a real test server: error bodies and headers over HTTP, timers,
//! counters, and the simulation converging under faults.

use std::sync::Arc;

use crate::sim_common::*;
use futures::StreamExt;
use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::Pod;
use kcm_testenv::faults::{FaultInjector, FaultKind, FaultSpec};
use kcm_testenv::{TestCluster, TestEnv};
use kube::Api;
use kube::api::{DeleteParams, PostParams, PropagationPolicy, WatchEvent, WatchParams};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio_util::sync::CancellationToken;

/// A bare HTTP/1.1 GET: status code, headers and JSON body.
async fn raw_get(env: &TestEnv, path: &str) -> (u16, Vec<(String, String)>, Value) {
    let mut s = tokio::net::TcpStream::connect(env.addr())
        .await
        .expect("connect");
    let req = format!(
        "GET {path} HTTP/1.1\r\nHost: test\r\nAccept: application/json\r\nConnection: close\r\n\r\n"
    );
    s.write_all(req.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    s.read_to_end(&mut buf).await.expect("read");
    let text = String::from_utf8_lossy(&buf).to_string();
    let (head, body) = text.split_once("\r\n\r\n").expect("head");
    let mut lines = head.lines();
    let code = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|c| c.parse().ok())
        .expect("status line");
    let headers = lines
        .filter_map(|l| l.split_once(": "))
        .map(|(k, v)| (k.to_ascii_lowercase(), v.to_string()))
        .collect();
    // The body may be chunked; take the JSON object inside.
    let start = body.find('{').unwrap_or(0);
    let end = body.rfind('}').map_or(body.len(), |e| e + 1);
    (
        code,
        headers,
        serde_json::from_str(&body[start..end]).unwrap_or(Value::Null),
    )
}

fn spec(s: &str) -> FaultSpec {
    FaultSpec::parse(s).expect("spec")
}

#[tokio::test]
async fn injected_errors_are_proper_status_responses() {
    let injector = Arc::new(FaultInjector::new(spec("error503=1@get:pods"), 7));
    let cluster = TestCluster::builder()
        .faults(injector.clone())
        .start()
        .await
        .expect("test cluster");
    let env = cluster.env();

    let (code, _, body) = raw_get(env, "/api/v1/namespaces/default/pods/x").await;
    assert_eq!(code, 503);
    assert_eq!(
        (
            body["kind"].as_str(),
            body["reason"].as_str(),
            body["code"].as_u64()
        ),
        (Some("Status"), Some("ServiceUnavailable"), Some(503))
    );
    // Out of scope: served normally.
    let (code, _, body) = raw_get(env, "/api/v1/namespaces/default/pods").await;
    assert_eq!((code, body["kind"].as_str()), (200, Some("PodList")));
    let (code, _, _) = raw_get(env, "/version").await;
    assert_eq!(code, 200, "non-resource requests are never faulted");

    injector.set_spec(spec("throttle=1@list"));
    let (code, headers, body) = raw_get(env, "/apis/apps/v1/namespaces/default/replicasets").await;
    assert_eq!(code, 429);
    assert_eq!(body["reason"], "TooManyRequests");
    assert_eq!(body["details"]["retryAfterSeconds"], 1);
    assert!(
        headers.iter().any(|(k, v)| k == "retry-after" && v == "1"),
        "{headers:?}"
    );

    injector.set_spec(spec("error500=1@get:replicasets"));
    let (code, _, body) = raw_get(env, "/apis/apps/v1/namespaces/default/replicasets/web").await;
    assert_eq!(
        (code, body["reason"].as_str()),
        (500, Some("InternalError"))
    );

    injector.set_spec(spec("conflict=1@update:pods"));
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    let p = pods
        .create(&PostParams::default(), &pod("c", &[]))
        .await
        .expect("create is not an update");
    match pods.replace("c", &PostParams::default(), &p).await {
        Err(kube::Error::Api(s)) => {
            assert_eq!((s.code, s.reason.as_str()), (409, "Conflict"));
            assert_eq!(
                s.message,
                "Operation cannot be fulfilled on pods \"c\": the object has been modified; please apply your changes to the latest version and try again"
            );
        }
        other => panic!("expected a conflict, got {other:?}"),
    }
    injector.set_spec(FaultSpec::default());
    // The conflict came with a concurrent change: the copy read before it is stale now.
    let p = pods.get("c").await.expect("get");
    pods.replace("c", &PostParams::default(), &p)
        .await
        .expect("no faults any more");

    assert_eq!(injector.count(FaultKind::Error503), 1);
    assert_eq!(injector.count(FaultKind::Throttle), 1);
    assert_eq!(injector.count(FaultKind::Error500), 1);
    assert_eq!(injector.count(FaultKind::Conflict), 1);
    cluster.shutdown().await;
}

#[tokio::test]
async fn compaction_timer_expires_old_watches() {
    let cluster = TestCluster::builder().start().await.expect("test cluster");
    let env = cluster.env();
    let pods: Api<Pod> = Api::namespaced(env.client(), "default");
    let rv0 = env.resource_version();
    pods.create(&PostParams::default(), &pod("a", &[]))
        .await
        .expect("create");
    let injector = Arc::new(FaultInjector::new(spec("compact-every=20ms"), 1));
    let token = CancellationToken::new();
    let task = injector.attach(env.server().clone(), token.clone());
    wait_for("a compaction", || async {
        (injector.count(FaultKind::Compact) > 0).then_some(())
    })
    .await;
    let gone = match pods
        .watch(&WatchParams::default().timeout(5), &rv0.to_string())
        .await
    {
        Err(kube::Error::Api(s)) => s.code == 410,
        Ok(stream) => {
            let mut stream = std::pin::pin!(stream);
            matches!(stream.next().await, Some(Ok(WatchEvent::Error(s))) if s.code == 410)
        }
        Err(e) => panic!("unexpected error {e}"),
    };
    assert!(gone, "a watch from before the compaction gets 410 Gone");
    assert!(
        injector
            .render_metrics()
            .contains("testenv_faults_injected_total{kind=\"compact\"}")
    );
    token.cancel();
    task.await.expect("attach task ends");
    cluster.shutdown().await;
}

#[tokio::test]
async fn simulation_converges_under_faults() {
    let injector = Arc::new(FaultInjector::new(
        spec(
            "error500=0.1@write,error503=0.05,conflict=0.2,throttle=0.05@write,latency=1ms..3ms,compact-every=300ms,restart-every=700ms",
        ),
        42,
    ));
    // The faults start once the nodes are registered.
    let cluster = TestCluster::builder()
        .simulation(fast_config())
        .faults(injector.clone())
        .start()
        .await
        .expect("test cluster");
    // The test's own writes go around the faults: retry until accepted.
    let pods: Api<Pod> = Api::namespaced(cluster.client(), "default");
    let rss: Api<ReplicaSet> = Api::namespaced(cluster.client(), "default");
    let rs: ReplicaSet = serde_json::from_value(json!({
        "metadata": {"name": "owner"},
        "spec": {"selector": {"matchLabels": {"app": "x"}}, "template": {"metadata": {"labels": {"app": "x"}}, "spec": {"containers": [{"name": "a", "image": "nginx"}]}}},
    }))
    .expect("rs");
    let rs = wait_for("rs created", || async {
        rss.create(&PostParams::default(), &rs).await.ok()
    })
    .await;
    for i in 0..4 {
        let mut p = pod(&format!("f-{i}"), &[]);
        p.metadata.owner_references = Some(vec![
            serde_json::from_value(json!({
                "apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "owner",
                "uid": rs.metadata.uid, "controller": true, "blockOwnerDeletion": true,
            }))
            .expect("ref"),
        ]);
        wait_for("pod created", || async {
            pods.create(&PostParams::default(), &p).await.ok()
        })
        .await;
    }
    for i in 0..4 {
        wait_pod(&pods, &format!("f-{i}"), is_ready).await;
    }
    let dp = DeleteParams {
        propagation_policy: Some(PropagationPolicy::Background),
        ..DeleteParams::default()
    };
    wait_for("rs deleted", || async {
        rss.delete("owner", &dp).await.ok()
    })
    .await;
    for i in 0..4 {
        wait_gone(&pods, &format!("f-{i}")).await;
    }
    let injected: u64 = FaultKind::ALL.iter().map(|k| injector.count(*k)).sum();
    assert!(injected > 0, "faults were injected along the way");
    cluster.shutdown().await;
}
