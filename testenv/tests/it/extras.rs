//! Behaviour beyond the spec checks (`spec_*.rs`): binding, nodes,
//! dry run, deletecollection, Tables, metrics, HTTP errors, fault knobs.

use crate::common::{Watch, req, request_full, start};
use serde_json::{Value, json};

fn pod(name: &str) -> Value {
    json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "web"}},
           "spec": {"containers": [{"name": "c", "image": "nginx"}]}})
}

#[tokio::test]
async fn binding_assigns_a_node_once() {
    let cluster = start().await;
    req(
        &cluster,
        "POST",
        "/api/v1/namespaces/default/pods",
        Some(&pod("p")),
    )
    .await;
    let b = json!({"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "p"}, "target": {"kind": "Node", "name": "n1"}});
    let r = req(
        &cluster,
        "POST",
        "/api/v1/namespaces/default/pods/p/binding",
        Some(&b),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["status"].clone()),
        (201, json!("Success"))
    );
    let p = req(&cluster, "GET", "/api/v1/namespaces/default/pods/p", None)
        .await
        .json();
    assert_eq!(p["spec"]["nodeName"], "n1");
    assert_eq!(p["status"]["conditions"][0]["type"], "PodScheduled");
    let r = req(
        &cluster,
        "POST",
        "/api/v1/namespaces/default/pods/p/binding",
        Some(&b),
    )
    .await;
    assert_eq!(r.code, 409);
    let l = req(
        &cluster,
        "GET",
        "/api/v1/pods?fieldSelector=spec.nodeName%3Dn1",
        None,
    )
    .await
    .json();
    assert_eq!(l["items"].as_array().map(Vec::len), Some(1));
    cluster.shutdown().await;
}

#[tokio::test]
async fn nodes_are_cluster_scoped_with_status() {
    let cluster = start().await;
    let n = json!({"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"}, "status": {"conditions": [{"type": "Ready", "status": "True"}]}});
    let r = req(&cluster, "POST", "/api/v1/nodes", Some(&n)).await;
    assert_eq!(r.code, 201);
    assert!(r.json()["metadata"].get("namespace").is_none());
    // the main resource keeps the stored status; /status changes it
    let mut upd = r.json();
    upd["status"]["conditions"][0]["status"] = json!("False");
    let u = req(&cluster, "PUT", "/api/v1/nodes/n1", Some(&upd))
        .await
        .json();
    assert_eq!(u["status"]["conditions"][0]["status"], "True");
    let s = req(&cluster, "PUT", "/api/v1/nodes/n1/status", Some(&upd))
        .await
        .json();
    assert_eq!(s["status"]["conditions"][0]["status"], "False");
    assert_eq!(
        req(&cluster, "GET", "/api/v1/namespaces/default/nodes/n1", None)
            .await
            .code,
        404
    );
    cluster.shutdown().await;
}

#[tokio::test]
async fn dry_run_and_delete_collection() {
    let cluster = start().await;
    let before = cluster.env().resource_version();
    let r = req(
        &cluster,
        "POST",
        "/api/v1/namespaces/default/pods?dryRun=All",
        Some(&pod("dry")),
    )
    .await;
    assert_eq!(r.code, 201);
    assert_eq!(cluster.env().resource_version(), before);
    assert_eq!(
        req(&cluster, "GET", "/api/v1/namespaces/default/pods/dry", None)
            .await
            .code,
        404
    );
    for n in ["a", "b", "c"] {
        req(
            &cluster,
            "POST",
            "/api/v1/namespaces/default/pods",
            Some(&pod(n)),
        )
        .await;
    }
    let r = req(
        &cluster,
        "DELETE",
        "/api/v1/namespaces/default/pods?labelSelector=app%3Dweb",
        None,
    )
    .await;
    assert_eq!(r.code, 200);
    let l = req(&cluster, "GET", "/api/v1/namespaces/default/pods", None)
        .await
        .json();
    assert_eq!(l["items"], json!([]));
    cluster.shutdown().await;
}

#[tokio::test]
async fn tables_metrics_and_http_errors() {
    let cluster = start().await;
    req(
        &cluster,
        "POST",
        "/api/v1/namespaces/default/pods",
        Some(&pod("p")),
    )
    .await;
    let accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json";
    let r = request_full(
        &cluster,
        "GET",
        "/api/v1/namespaces/default/pods?limit=500",
        "application/json",
        accept,
        b"",
    )
    .await;
    // a converted answer is plain JSON, as kube-apiserver writes it (spec_metadata.rs)
    assert_eq!(r.header("content-type"), Some("application/json"));
    let t = r.json();
    let cols: Vec<&str> = t["columnDefinitions"]
        .as_array()
        .expect("cols")
        .iter()
        .filter_map(|c| c["name"].as_str())
        .collect();
    assert_eq!(
        cols,
        vec![
            "Name",
            "Ready",
            "Status",
            "Restarts",
            "Age",
            "IP",
            "Node",
            "Nominated Node",
            "Readiness Gates"
        ]
    );
    assert_eq!(
        t["rows"][0]["cells"].as_array().map(|c| c[..4].to_vec()),
        Some(vec![json!("p"), json!("0/1"), json!("Pending"), json!("0")])
    );
    assert_eq!(t["rows"][0]["object"]["kind"], "PartialObjectMetadata");

    let m = req(&cluster, "GET", "/metrics", None).await;
    let text = String::from_utf8_lossy(&m.body).into_owned();
    assert!(
        text.contains("testenv_requests_total{verb=\"create\",resource=\"pods\",code=\"201\"} 1"),
        "{text}"
    );
    assert!(
        text.contains("testenv_requests_total{verb=\"list\",resource=\"pods\",code=\"200\"} 1"),
        "{text}"
    );
    let c = cluster.env().counters();
    assert_eq!((c.count("create", "pods"), c.writes()), (1, 1));

    let r = req(&cluster, "PUT", "/api/v1/namespaces/default/pods", None).await;
    assert_eq!(
        (r.code, r.json()["reason"].clone()),
        (405, json!("MethodNotAllowed"))
    );
    let r = request_full(
        &cluster,
        "GET",
        "/api/v1/namespaces/default/pods",
        "application/json",
        "application/vnd.kubernetes.protobuf",
        b"",
    )
    .await;
    assert_eq!(r.code, 406);
    let r = request_full(
        &cluster,
        "POST",
        "/api/v1/namespaces/default/pods",
        "application/vnd.kubernetes.protobuf",
        "application/json",
        b"x",
    )
    .await;
    assert_eq!(r.code, 415);
    let r = request_full(
        &cluster,
        "GET",
        "/api/v1/namespaces/default/pods",
        "application/json",
        "application/vnd.kubernetes.protobuf,application/json",
        b"",
    )
    .await;
    assert_eq!(r.code, 200);
    cluster.shutdown().await;
}

/// kube-controller-manager sends DeleteOptions as protobuf (its clients speak protobuf); they
/// are honoured as the JSON form is: a precondition that does not hold is a 409.
#[tokio::test]
async fn delete_options_in_protobuf_are_honoured() {
    let cluster = start().await;
    let created = req(
        &cluster,
        "POST",
        "/api/v1/namespaces/default/pods",
        Some(&pod("p")),
    )
    .await;
    assert_eq!(created.code, 201);
    // k8s\0, Unknown{typeMeta{"v1", "DeleteOptions"}, raw DeleteOptions{preconditions{uid}}}
    let with_uid = |uid: &str| {
        let pre = [&[0x0a, uid.len() as u8][..], uid.as_bytes()].concat();
        let raw = [&[0x12, pre.len() as u8][..], &pre].concat();
        [
            &b"k8s\0\x0a\x13\x0a\x02v1\x12\x0dDeleteOptions"[..],
            &[0x12, raw.len() as u8],
            &raw,
            b"\x1a\x00\x22\x00",
        ]
        .concat()
    };
    let path = "/api/v1/namespaces/default/pods/p";
    let pb = "application/vnd.kubernetes.protobuf";
    let r = request_full(&cluster, "DELETE", path, pb, "application/json", b"x").await;
    assert_eq!(r.code, 415, "{}", String::from_utf8_lossy(&r.body));
    let r = request_full(
        &cluster,
        "DELETE",
        path,
        pb,
        "application/json",
        &with_uid("wrong"),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["reason"].clone()),
        (409, json!("Conflict"))
    );
    let uid = created.json()["metadata"]["uid"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let r = request_full(
        &cluster,
        "DELETE",
        path,
        pb,
        "application/json",
        &with_uid(&uid),
    )
    .await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    cluster.shutdown().await;
}

#[tokio::test]
async fn drop_watches_ends_streams_and_events_v1_view() {
    let cluster = start().await;
    let cur = cluster.env().resource_version();
    let mut w = Watch::open(
        &cluster,
        &format!("/api/v1/namespaces/default/pods?watch=true&resourceVersion={cur}"),
    )
    .await;
    cluster.env().drop_watches();
    assert!(w.next_raw().await.is_none());
    let ev = json!({"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "e1"}, "eventTime": "2025-01-01T00:00:00.000000Z",
                    "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}, "note": "hello", "reason": "R", "action": "A",
                    "reportingController": "c", "reportingInstance": "i", "type": "Normal"});
    let r = req(
        &cluster,
        "POST",
        "/apis/events.k8s.io/v1/namespaces/default/events",
        Some(&ev),
    )
    .await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["note"], "hello");
    let core = req(
        &cluster,
        "GET",
        "/api/v1/namespaces/default/events/e1",
        None,
    )
    .await
    .json();
    assert_eq!(
        (
            core["message"].clone(),
            core["involvedObject"]["name"].clone(),
            core["reportingComponent"].clone()
        ),
        (json!("hello"), json!("p"), json!("c"))
    );
    cluster.shutdown().await;
}

#[derive(Debug, Default)]
struct FailCreates(std::sync::atomic::AtomicU32);

impl kcm_testenv::RequestHook for FailCreates {
    fn before(&self, req: &kcm_testenv::RequestInfo) -> kcm_testenv::HookDecision {
        use std::sync::atomic::Ordering;
        if req.verb == "create" && req.resource == "pods" && self.0.load(Ordering::SeqCst) > 0 {
            self.0.fetch_sub(1, Ordering::SeqCst);
            return kcm_testenv::HookDecision::Fail {
                error: kcm_testenv::ApiError::new(429, "TooManyRequests", "slow down"),
                retry_after: Some(1),
            };
        }
        kcm_testenv::HookDecision::Continue
    }
}

#[tokio::test]
async fn request_hook_injects_failures() {
    let cluster = start().await;
    cluster.env().set_hook(Some(std::sync::Arc::new(FailCreates(
        std::sync::atomic::AtomicU32::new(1),
    ))));
    let r = req(
        &cluster,
        "POST",
        "/api/v1/namespaces/default/pods",
        Some(&pod("p")),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["reason"].clone(), r.header("retry-after")),
        (429, json!("TooManyRequests"), Some("1"))
    );
    let r = req(
        &cluster,
        "POST",
        "/api/v1/namespaces/default/pods",
        Some(&pod("p")),
    )
    .await;
    assert_eq!(r.code, 201);
    let c = cluster.env().counters();
    assert_eq!(
        c.requests
            .get(&("create".to_string(), "pods".to_string(), 429)),
        Some(&1)
    );
    assert_eq!(c.count("create", "pods"), 2);
    cluster.shutdown().await;
}
