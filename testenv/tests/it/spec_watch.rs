//! Spec checks 35–40 (README.md, "Agreement with kube-apiserver v1.37.2"): watch, over real
//! HTTP.
//! They run on an embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see
//! testenv/README.md, "Agreement with kube-apiserver v1.37.2").

use crate::common::server::Server;
use crate::common::spec::{pod, rv};
use crate::common::{Watch, patch, req};
use serde_json::{Value, json};

#[tokio::test]
async fn checks_35_40_watch() {
    let env = Server::start("watch").await;
    let t1 = env.ns("t1").await;
    req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t1}/pods"),
        Some(&pod("old", "web")),
    )
    .await;
    let l = req(&env, "GET", &format!("/api/v1/namespaces/{t1}/pods"), None)
        .await
        .json();
    let lrv = rv(&l);
    let mut w = Watch::open(&env, &format!("/api/v1/namespaces/{t1}/pods?watch=true&resourceVersion={lrv}&allowWatchBookmarks=true&timeoutSeconds=30")).await;
    assert_eq!(w.code, 200);
    assert_eq!(
        w.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case("transfer-encoding"))
            .map(|(_, v)| v.as_str()),
        Some("chunked")
    );
    let p = req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t1}/pods"),
        Some(&pod("p1", "web")),
    )
    .await
    .json();
    let line = w.next_raw().await.expect("line");
    let e: Value = serde_json::from_str(&line).expect("json line");
    assert_eq!(
        (
            e["type"].clone(),
            e["object"]["kind"].clone(),
            e["object"]["apiVersion"].clone()
        ),
        (json!("ADDED"), json!("Pod"), json!("v1"))
    );
    assert!(rv(&e["object"]) > lrv);
    req(
        &env,
        "DELETE",
        &format!("/api/v1/namespaces/{t1}/pods/p1"),
        None,
    )
    .await;
    // a pod's delete is two writes even without grace (an unscheduled pod): the deletion
    // timestamp with grace 0 (MODIFIED), then the removal (DELETED, the last state, a new RV)
    let m = w.next().await.expect("modified");
    assert_eq!(
        (
            m["type"].clone(),
            m["object"]["metadata"]["deletionGracePeriodSeconds"].clone()
        ),
        (json!("MODIFIED"), json!(0))
    );
    assert!(m["object"]["metadata"]["deletionTimestamp"].is_string());
    assert!(rv(&m["object"]) > rv(&p));
    let e = w.next().await.expect("deleted");
    assert_eq!(e["type"], "DELETED");
    assert_eq!(e["object"]["metadata"]["deletionGracePeriodSeconds"], 0);
    assert!(rv(&e["object"]) > rv(&m["object"]));

    // 36: no RV → ADDED per existing pod first
    let mut w = Watch::open(
        &env,
        &format!("/api/v1/namespaces/{t1}/pods?watch=true&timeoutSeconds=30"),
    )
    .await;
    let e = w.next().await.expect("added");
    assert_eq!(
        (e["type"].clone(), e["object"]["metadata"]["name"].clone()),
        (json!("ADDED"), json!("old"))
    );

    // 37: compacted history → one ERROR line then EOF. A real server replays from etcd back
    // to its last compaction (every 5 minutes), so when revision 1 expires there is not ours
    // to choose.
    let te = env.testenv_only("check 37, a watch from compacted history (set_watch_window)");
    if let Some(te) = te {
        te.set_watch_window(1);
    }
    req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t1}/pods"),
        Some(&pod("p2", "web")),
    )
    .await;
    req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t1}/pods"),
        Some(&pod("p3", "web")),
    )
    .await;
    if let Some(te) = te {
        let mut w = Watch::open(
            &env,
            &format!("/api/v1/namespaces/{t1}/pods?watch=true&resourceVersion=1"),
        )
        .await;
        assert_eq!(w.code, 200);
        let e = w.next().await.expect("error");
        assert_eq!(
            (
                e["type"].clone(),
                e["object"]["code"].clone(),
                e["object"]["reason"].clone(),
                e["object"]["kind"].clone()
            ),
            (
                json!("ERROR"),
                json!(410),
                json!("Expired"),
                json!("Status")
            )
        );
        assert!(
            e["object"]["message"]
                .as_str()
                .expect("m")
                .starts_with("too old resource version: 1 (")
        );
        assert!(w.next_raw().await.is_none());
        te.set_watch_window(1000);
    }

    // 38: bookmark before the deadline, then a clean close. The bookmark carries the
    // resource's progress, so pods must change after the watch's revision: a pod in another
    // namespace does, without an event on this watch.
    let t2 = env.ns("t2").await;
    let cur = env.resource_version().await;
    let mut w = Watch::open(&env, &format!("/api/v1/namespaces/{t1}/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion={cur}")).await;
    let elsewhere = req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t2}/pods"),
        Some(&pod("elsewhere", "web")),
    )
    .await
    .json();
    let e = w.next().await.expect("bookmark");
    assert_eq!(
        (
            e["type"].clone(),
            e["object"]["kind"].clone(),
            e["object"]["apiVersion"].clone()
        ),
        (json!("BOOKMARK"), json!("Pod"), json!("v1"))
    );
    assert!(rv(&e["object"]) >= rv(&elsewhere));
    // kube-apiserver's one-second bookmark buckets may repeat it before the deadline; nothing
    // else comes, then the stream ends
    while let Some(line) = w.next_raw().await {
        let again: Value = serde_json::from_str(&line).expect("json line");
        assert_eq!(again["type"], "BOOKMARK", "{line}");
    }
    // with no change to pods there is nothing to claim (a real server's cache may also move
    // on etcd progress notifications, which are not ours to trigger)
    if let Some(te) = env.testenv_only("check 38, no bookmark without progress") {
        let cur = te.resource_version();
        let mut w = Watch::open(&env, &format!("/api/v1/namespaces/{t1}/pods?watch=true&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion={cur}")).await;
        assert!(w.next_raw().await.is_none());
    }

    // 39: streaming list
    let mut w = Watch::open(&env, &format!("/api/v1/namespaces/{t1}/pods?watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=&timeoutSeconds=30")).await;
    let mut added = 0;
    loop {
        let e = w.next().await.expect("event");
        if e["type"] == "BOOKMARK" {
            assert_eq!(
                e["object"]["metadata"]["annotations"]["k8s.io/initial-events-end"],
                "true"
            );
            break;
        }
        assert_eq!(e["type"], "ADDED");
        added += 1;
    }
    assert_eq!(added, 3);
    let r = req(
        &env,
        "GET",
        &format!("/api/v1/namespaces/{t1}/pods?watch=true&sendInitialEvents=true"),
        None,
    )
    .await;
    assert_eq!(r.code, 422);
    assert!(
        r.json()["message"]
            .as_str()
            .expect("m")
            .contains("sendInitialEvents requires setting resourceVersionMatch to NotOlderThan")
    );

    // 40: leaving the selector is DELETED with the old labels and the new RV
    let cur = env.resource_version().await;
    let mut w = Watch::open(&env, &format!("/api/v1/namespaces/{t1}/pods?watch=true&labelSelector=app%3Dweb&resourceVersion={cur}&timeoutSeconds=30")).await;
    let p = req(
        &env,
        "GET",
        &format!("/api/v1/namespaces/{t1}/pods/p2"),
        None,
    )
    .await
    .json();
    let m = patch(
        &env,
        &format!("/api/v1/namespaces/{t1}/pods/p2"),
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"app": "db"}}}),
    )
    .await
    .json();
    let e = w.next().await.expect("deleted");
    assert_eq!(
        (
            e["type"].clone(),
            e["object"]["metadata"]["labels"]["app"].clone()
        ),
        (json!("DELETED"), json!("web"))
    );
    assert_eq!(rv(&e["object"]), rv(&m));
    assert!(rv(&m) > rv(&p));
    patch(
        &env,
        &format!("/api/v1/namespaces/{t1}/pods/p2"),
        "application/merge-patch+json",
        &json!({"metadata": {"labels": {"app": "web"}}}),
    )
    .await;
    assert_eq!(w.next().await.expect("added")["type"], "ADDED");
    env.finish().await;
}
