//! Spec checks 30–34 (README.md, "Agreement with kube-apiserver v1.37.2"): list, selectors
//! and pagination, over real HTTP.
//! They run on an embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see
//! testenv/README.md, "Agreement with kube-apiserver v1.37.2").

use crate::common::req;
use crate::common::server::Server;
use crate::common::spec::{pod, rv};
use serde_json::json;

#[tokio::test]
async fn checks_30_34_list() {
    let env = Server::start("list").await;
    let t1 = env.ns("t1").await;
    for i in 0..5 {
        req(
            &env,
            "POST",
            &format!("/api/v1/namespaces/{t1}/pods"),
            Some(&pod(&format!("w{i}"), "web")),
        )
        .await;
    }
    req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t1}/pods"),
        Some(&pod("d0", "db")),
    )
    .await;
    let l = req(
        &env,
        "GET",
        &format!("/api/v1/namespaces/{t1}/pods?labelSelector=app%3Dweb"),
        None,
    )
    .await
    .json();
    assert_eq!(l["items"].as_array().map(Vec::len), Some(5));
    let l = req(
        &env,
        "GET",
        &format!("/api/v1/namespaces/{t1}/pods?labelSelector=app%20in%20(web,db),!tier"),
        None,
    )
    .await
    .json();
    let items = l["items"].as_array().expect("items");
    assert_eq!(items.len(), 6);
    assert!(items.iter().all(|i| rv(i) <= rv(&l)));
    assert_eq!(l["kind"], "PodList");
    let r = req(
        &env,
        "GET",
        &format!("/api/v1/namespaces/{t1}/pods?fieldSelector=spec.foo%3Dbar"),
        None,
    )
    .await;
    assert_eq!(
        (
            r.code,
            r.json()["reason"].clone(),
            r.json()["message"].clone()
        ),
        (
            400,
            json!("BadRequest"),
            json!("field label not supported: spec.foo")
        )
    );
    let l = req(
        &env,
        "GET",
        &format!("/api/v1/namespaces/{t1}/pods?fieldSelector=metadata.name%3Dw2"),
        None,
    )
    .await
    .json();
    assert_eq!(l["items"].as_array().map(Vec::len), Some(1));
    let l = req(
        &env,
        "GET",
        &format!("/api/v1/namespaces/{t1}/pods?fieldSelector=status.phase%3DPending"),
        None,
    )
    .await
    .json();
    assert_eq!(l["items"].as_array().map(Vec::len), Some(6));
    let p = req(
        &env,
        "GET",
        &format!("/api/v1/namespaces/{t1}/pods?labelSelector=app%3Dweb&limit=2"),
        None,
    )
    .await
    .json();
    assert_eq!(p["items"].as_array().map(Vec::len), Some(2));
    assert!(
        p["metadata"]["continue"]
            .as_str()
            .is_some_and(|c| !c.is_empty())
    );
    assert!(p["metadata"].get("remainingItemCount").is_none());
    let p1 = req(
        &env,
        "GET",
        &format!("/api/v1/namespaces/{t1}/pods?limit=2"),
        None,
    )
    .await
    .json();
    assert_eq!(p1["metadata"]["remainingItemCount"], 4);
    req(
        &env,
        "POST",
        &format!("/api/v1/namespaces/{t1}/pods"),
        Some(&pod("a-new", "web")),
    )
    .await;
    let mut names: Vec<String> = p1["items"]
        .as_array()
        .expect("i")
        .iter()
        .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string())
        .collect();
    let mut cont = p1["metadata"]["continue"].as_str().expect("c").to_string();
    let first_cont = cont.clone();
    loop {
        let p = req(
            &env,
            "GET",
            &format!("/api/v1/namespaces/{t1}/pods?limit=2&continue={cont}"),
            None,
        )
        .await
        .json();
        assert_eq!(
            p["metadata"]["resourceVersion"],
            p1["metadata"]["resourceVersion"]
        );
        names.extend(
            p["items"]
                .as_array()
                .expect("i")
                .iter()
                .map(|i| i["metadata"]["name"].as_str().unwrap_or("").to_string()),
        );
        match p["metadata"]["continue"].as_str() {
            Some(c) => cont = c.to_string(),
            None => break,
        }
    }
    assert_eq!(names, vec!["d0", "w0", "w1", "w2", "w3", "w4"]);
    // a real server expires continue tokens only when etcd compacts (every 5 minutes)
    if let Some(te) =
        env.testenv_only("check 33, an expired continue token (expire_continue_tokens)")
    {
        te.expire_continue_tokens();
        let r = req(
            &env,
            "GET",
            &format!("/api/v1/namespaces/{t1}/pods?limit=2&continue={first_cont}"),
            None,
        )
        .await;
        let s = r.json();
        assert_eq!((r.code, s["reason"].clone()), (410, json!("Expired")));
        assert!(s["message"].as_str().expect("m").starts_with(
            "The provided continue parameter is too old to display a consistent list result."
        ));
        assert!(
            s["metadata"]["continue"]
                .as_str()
                .is_some_and(|c| !c.is_empty())
        );
    }
    let r = req(
        &env,
        "GET",
        &format!("/api/v1/namespaces/{t1}/pods?resourceVersionMatch=Exact"),
        None,
    )
    .await;
    let s = r.json();
    assert_eq!(
        (
            r.code,
            s["details"]["group"].clone(),
            s["details"]["kind"].clone(),
            s["details"]["causes"][0]["field"].clone()
        ),
        (
            422,
            json!("meta.k8s.io"),
            json!("ListOptions"),
            json!("resourceVersionMatch")
        )
    );
    env.finish().await;
}

/// Check 55: a page that fills exactly. With a key after it (one the selector does not match) the
/// page carries a `continue` token and the next page is empty with none (etcd3's `GetList` and the
/// watch cache both count the keys left, not the matches left); without one, the full page is
/// the last. A filtered list never carries `remainingItemCount`, an unfiltered one does.
#[tokio::test]
async fn check_55_a_page_that_fills_exactly() {
    let env = Server::start("page").await;
    let ns = env.ns("p").await;
    let pods = format!("/api/v1/namespaces/{ns}/pods");
    for name in ["a0", "a1", "a2"] {
        assert_eq!(
            req(&env, "POST", &pods, Some(&pod(name, "web"))).await.code,
            201
        );
    }
    // Nothing after the third web pod yet: the full page is the last one.
    let l = req(
        &env,
        "GET",
        &format!("{pods}?labelSelector=app%3Dweb&limit=3"),
        None,
    )
    .await
    .json();
    assert_eq!(l["items"].as_array().map(Vec::len), Some(3));
    assert_eq!(l["metadata"].get("continue"), None, "{l}");
    let l = req(&env, "GET", &format!("{pods}?limit=3"), None)
        .await
        .json();
    assert_eq!(l["metadata"].get("continue"), None, "{l}");
    assert_eq!(l["metadata"].get("remainingItemCount"), None, "{l}");
    // A pod the selector does not match, after them in key order.
    assert_eq!(
        req(&env, "POST", &pods, Some(&pod("z0", "db"))).await.code,
        201
    );
    let l = req(
        &env,
        "GET",
        &format!("{pods}?labelSelector=app%3Dweb&limit=3"),
        None,
    )
    .await
    .json();
    assert_eq!(l["items"].as_array().map(Vec::len), Some(3));
    let token = l["metadata"]["continue"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!token.is_empty(), "a key follows the page: {l}");
    assert_eq!(l["metadata"].get("remainingItemCount"), None, "{l}");
    let next = req(
        &env,
        "GET",
        &format!("{pods}?labelSelector=app%3Dweb&limit=3&continue={token}"),
        None,
    )
    .await
    .json();
    assert_eq!(next["items"].as_array().map(Vec::len), Some(0), "{next}");
    assert_eq!(next["metadata"].get("continue"), None, "{next}");
    // Unfiltered, the same page counts the key left.
    let l = req(&env, "GET", &format!("{pods}?limit=3"), None)
        .await
        .json();
    assert!(
        l["metadata"]["continue"]
            .as_str()
            .is_some_and(|c| !c.is_empty()),
        "{l}"
    );
    assert_eq!(l["metadata"]["remainingItemCount"], json!(1), "{l}");
}
