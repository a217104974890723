//! Custom resource checks C1–C4: a CustomResourceDefinition's life (create, conditions,
//! discovery, name conflicts, validation, deletion removing its objects), over real HTTP.
//! They run on an embedded TestEnv, or on a real kube-apiserver with `KCM_SPEC_SERVER` (see
//! testenv/README.md, "Custom resources").

use crate::common::crd::{
    CRDS, condition, install, namespaced_widgets, wait_for, widget, widget_crd,
    widgets_in_namespace,
};
use crate::common::server::Server;
use crate::common::spec::rv;
use crate::common::{Watch, patch, req};
use serde_json::{Value, json};

fn conditions(crd: &Value) -> Vec<(String, String, String)> {
    crd["status"]["conditions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            let s = |k: &str| c[k].as_str().unwrap_or("").to_string();
            (s("type"), s("status"), s("reason"))
        })
        .collect()
}

fn cond(t: &str, s: &str, r: &str) -> (String, String, String) {
    (t.to_string(), s.to_string(), r.to_string())
}

/// C1: creating a CRD: defaults, the empty status, then two status writes (names accepted,
/// established), and discovery of the new group, version and resources.
#[tokio::test]
async fn c1_create_conditions_discovery() {
    let env = Server::start("crd-c1").await;
    let group = env.group("w");
    let crd = widget_crd(&group, "Namespaced");
    let name = format!("widgets.{group}");
    env.track_crd(&name);
    let list_rv = rv(&req(&env, "GET", CRDS, None).await.json());
    let mut w = Watch::open(
        &env,
        &format!("{CRDS}?watch=true&resourceVersion={list_rv}&fieldSelector=metadata.name%3D{name}&timeoutSeconds=30"),
    )
    .await;
    let r = req(&env, "POST", CRDS, Some(&crd)).await;
    assert_eq!(r.code, 201, "{}", String::from_utf8_lossy(&r.body));
    let created = r.json();
    assert_eq!(created["metadata"]["generation"], 1);
    assert_eq!(
        created["status"],
        json!({"acceptedNames": {"plural": "", "kind": ""}, "conditions": null, "storedVersions": ["v1"]})
    );
    assert_eq!(created["spec"]["names"]["listKind"], "WidgetList");
    assert_eq!(created["spec"]["conversion"], json!({"strategy": "None"}));
    // ADDED, then the naming controller's write, then the establishing controller's
    let mut seen = Vec::new();
    while seen.len() < 3 {
        let e = w.next().await.expect("CRD event");
        seen.push((e["type"].clone(), conditions(&e["object"])));
    }
    assert_eq!(
        seen,
        vec![
            (json!("ADDED"), vec![]),
            (
                json!("MODIFIED"),
                vec![
                    cond("NamesAccepted", "True", "NoConflicts"),
                    cond("Established", "False", "Installing")
                ]
            ),
            (
                json!("MODIFIED"),
                vec![
                    cond("NamesAccepted", "True", "NoConflicts"),
                    cond("Established", "True", "InitialNamesAccepted")
                ]
            ),
        ]
    );
    let got = wait_for(&env, &format!("{CRDS}/{name}"), |c| {
        condition(c, "Established")
    })
    .await;
    assert_eq!(
        got["status"]["acceptedNames"],
        json!({"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList", "shortNames": ["wdg"], "categories": ["kcm-checks"]})
    );
    assert_eq!(
        got["status"]["conditions"][0]["message"],
        "no conflicts found"
    );
    assert_eq!(
        got["status"]["conditions"][1]["message"],
        "the initial names have been accepted"
    );

    // discovery: /apis lists the group after the built-in ones, its one version preferred
    let apis = wait_for(&env, "/apis", |l| {
        l["groups"]
            .as_array()
            .is_some_and(|g| g.iter().any(|x| x["name"] == group.as_str()))
    })
    .await;
    let names: Vec<&str> = apis["groups"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|g| g["name"].as_str())
        .collect();
    let at = |n: &str| names.iter().position(|x| *x == n);
    assert!(at("coordination.k8s.io") < at(&group), "{names:?}");
    let g = req(&env, "GET", &format!("/apis/{group}"), None)
        .await
        .json();
    let gv = json!({"groupVersion": format!("{group}/v1"), "version": "v1"});
    assert_eq!(
        g,
        json!({"kind": "APIGroup", "apiVersion": "v1", "name": group, "versions": [gv.clone()], "preferredVersion": gv})
    );
    let l = wait_for(&env, &format!("/apis/{group}/v1"), |l| {
        l["resources"].is_array()
    })
    .await;
    let hash = l["resources"][0]["storageVersionHash"].clone();
    assert!(hash.as_str().is_some_and(|h| h.len() == 12), "{l}");
    assert_eq!(
        l["resources"],
        json!([
            {"name": "widgets", "singularName": "widget", "namespaced": true, "kind": "Widget",
             "verbs": ["delete", "deletecollection", "get", "list", "patch", "create", "update", "watch"],
             "shortNames": ["wdg"], "categories": ["kcm-checks"], "storageVersionHash": hash},
            {"name": "widgets/status", "singularName": "", "namespaced": true, "kind": "Widget", "verbs": ["get", "patch", "update"]},
            {"name": "widgets/scale", "singularName": "", "namespaced": true, "group": "autoscaling", "version": "v1", "kind": "Scale", "verbs": ["get", "patch", "update"]},
        ])
    );
    // resources the group does not serve are Go's plain-text 404, as the CRD handler passes
    // them on
    let r = req(&env, "GET", &format!("/apis/{group}/v1/gadgets"), None).await;
    assert_eq!(
        (r.code, r.body.as_slice()),
        (404, &b"404 page not found\n"[..])
    );
    env.finish().await;
}

/// C2: a second CRD of the group with a kind already in use is not accepted, not served and
/// not in discovery; a CRD's spec update moves its generation, its status does not.
#[tokio::test]
async fn c2_name_conflicts_and_updates() {
    let env = Server::start("crd-c2").await;
    let group = env.group("w");
    install(&env, &widget_crd(&group, "Namespaced")).await;
    let name = format!("gadgets.{group}");
    env.track_crd(&name);
    let gadgets = json!({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
        "metadata": {"name": name},
        "spec": {"group": group, "scope": "Cluster", "names": {"plural": "gadgets", "kind": "Widget"},
                 "versions": [{"name": "v1", "served": true, "storage": true, "schema": {"openAPIV3Schema": {"type": "object"}}}]}});
    assert_eq!(req(&env, "POST", CRDS, Some(&gadgets)).await.code, 201);
    let got = wait_for(&env, &format!("{CRDS}/{name}"), |c| {
        !conditions(c).is_empty()
    })
    .await;
    assert_eq!(
        conditions(&got),
        vec![
            cond("NamesAccepted", "False", "ListKindConflict"),
            cond("Established", "False", "NotAccepted")
        ]
    );
    assert_eq!(
        got["status"]["conditions"][0]["message"],
        "\"WidgetList\" is already in use"
    );
    assert_eq!(
        got["status"]["acceptedNames"],
        json!({"plural": "gadgets", "kind": ""})
    );
    let r = req(&env, "GET", &format!("/apis/{group}/v1/gadgets"), None).await;
    assert_eq!(r.code, 404);
    // the spec moves the generation; names change through the naming controller
    let path = format!("{CRDS}/widgets.{group}");
    let r = patch(
        &env,
        &path,
        "application/merge-patch+json",
        &json!({"spec": {"names": {"shortNames": ["wdg", "wg"]}}}),
    )
    .await;
    assert_eq!(r.code, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["metadata"]["generation"], 2);
    let got = wait_for(&env, &path, |c| {
        c["status"]["acceptedNames"]["shortNames"] == json!(["wdg", "wg"])
    })
    .await;
    assert_eq!(got["metadata"]["generation"], 2);
    // an update needs the resourceVersion; group, plural, scope and kind are immutable
    let mut upd = got.clone();
    if let Some(m) = upd["metadata"].as_object_mut() {
        m.remove("resourceVersion");
        m.remove("managedFields");
    }
    let r = req(&env, "PUT", &path, Some(&upd)).await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            422,
            json!(format!(
                "customresourcedefinitions.apiextensions.k8s.io \"widgets.{group}\" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for an update"
            ))
        )
    );
    let mut upd = got.clone();
    upd["metadata"]
        .as_object_mut()
        .map(|m| m.remove("managedFields"));
    upd["spec"]["scope"] = json!("Cluster");
    upd["spec"]["names"]["plural"] = json!("things");
    let r = req(&env, "PUT", &path, Some(&upd)).await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            422,
            json!(format!(
                "CustomResourceDefinition.apiextensions.k8s.io \"widgets.{group}\" is invalid: [spec.scope: Invalid value: \"Cluster\": field is immutable, spec.names.plural: Invalid value: \"things\": field is immutable]"
            ))
        )
    );
    env.finish().await;
}

/// C3: invalid CRDs are refused with upstream's field errors. (The `Invalid value` of whole
/// `spec.versions` errors is Go's print of an internal type; only its detail is compared.)
#[tokio::test]
async fn c3_crd_validation() {
    let env = Server::start("crd-c3").await;
    let group = env.group("bad");
    let base = widget_crd(&group, "Namespaced");
    // one version: upstream's internal form holds its schema, subresources and columns at the
    // top, and their errors point there
    let schema = "spec.validation.openAPIV3Schema";
    // (mutation, expected (field, message or its ending))
    type Case = (fn(&mut Value), Vec<(String, String)>);
    let cases: Vec<Case> = vec![
        (
            |c| c["metadata"]["name"] = json!(format!("gadgets.{}", c["spec"]["group"].as_str().unwrap_or(""))),
            vec![("metadata.name".into(), "must be spec.names.plural+\".\"+spec.group".into())],
        ),
        (
            |c| c["spec"]["scope"] = json!("Global"),
            vec![("spec.scope".into(), "Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\"".into())],
        ),
        (
            |c| c["spec"]["versions"][0]["storage"] = json!(false),
            vec![
                ("spec.versions".into(), "must have exactly one version marked as storage version".into()),
                ("status.storedVersions".into(), "Invalid value: null: must have at least one stored version".into()),
            ],
        ),
        (
            |c| {
                c["spec"]["versions"][0]
                    .as_object_mut()
                    .map(|v| v.remove("schema"));
            },
            vec![("spec.versions[0].schema.openAPIV3Schema".into(), "Required value".into())],
        ),
        (
            |c| c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["x"] = json!({"properties": {"a": {"type": "string"}}}),
            vec![(format!("{schema}.properties[spec].properties[x].type"), "Required value: must not be empty for specified object fields".into())],
        ),
        (
            |c| c["spec"]["names"]["kind"] = json!("Wid_get"),
            vec![
                ("spec.names.kind".into(), "Invalid value: \"Wid_get\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".into()),
                ("spec.names.listKind".into(), "Invalid value: \"Wid_getList\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')".into()),
            ],
        ),
        (
            |c| c["spec"]["versions"][0]["subresources"]["scale"]["specReplicasPath"] = json!(".status.replicas"),
            vec![("spec.subresources.scale.specReplicasPath".into(), "Invalid value: \".status.replicas\": should be a json path under .spec".into())],
        ),
        (
            |c| c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["replicas"]["default"] = json!("one"),
            vec![(format!("{schema}.properties[spec].properties[replicas].default"), "Invalid value: \"string\":  in body must be of type integer: \"string\"".into())],
        ),
        (
            |c| c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["t"] = json!({"type": "array", "uniqueItems": true, "items": {"type": "string"}}),
            vec![(format!("{schema}.properties[spec].properties[t].uniqueItems"), "Forbidden: uniqueItems cannot be set to true since the runtime complexity becomes quadratic".into())],
        ),
        (
            |c| c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["metadata"] = json!({"type": "object", "properties": {"labels": {"type": "object"}}}),
            vec![(format!("{schema}.properties[metadata]"), "Forbidden: must not specify anything other than name and generateName, but metadata is implicitly specified".into())],
        ),
        (
            |c| c["spec"]["versions"][0]["additionalPrinterColumns"] = json!([{"name": "X", "type": "int", "jsonPath": ".spec.x"}]),
            vec![("spec.additionalPrinterColumns[0].type".into(), "Invalid value: \"int\": must be one of boolean,date,integer,number,string".into())],
        ),
        (
            |c| c["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = json!({"type": "string"}),
            vec![
                (format!("{schema}.type"), "Invalid value: \"string\": must be object at the root".into()),
                (format!("{schema}.type"), "Invalid value: \"string\": only \"object\" is allowed as the type at the root of the schema if the status subresource is enabled".into()),
            ],
        ),
    ];
    for (mutate, want) in cases {
        let mut crd = base.clone();
        mutate(&mut crd);
        let r = req(&env, "POST", CRDS, Some(&crd)).await;
        assert_eq!(r.code, 422, "{crd}: {}", String::from_utf8_lossy(&r.body));
        let s = r.json();
        assert_eq!(s["details"]["kind"], "CustomResourceDefinition");
        let mut causes: Vec<(String, String)> = s["details"]["causes"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|c| {
                let f = c["field"].as_str().unwrap_or("").to_string();
                (f, c["message"].as_str().unwrap_or("").to_string())
            })
            .collect();
        causes.sort();
        let mut want = want;
        want.sort();
        assert_eq!(causes.len(), want.len(), "{causes:?}");
        for ((f, m), (wf, wm)) in causes.iter().zip(&want) {
            assert_eq!(f, wf);
            assert!(
                m.ends_with(wm.as_str()),
                "{f}: {m}\n  should end with\n{wm}"
            );
        }
    }
    env.finish().await;
}

/// C4: deleting a CRD: marked Terminating with the cleanup finalizer, creates refused, its
/// objects deleted (finalizers waited for), then the CRD and its discovery go.
#[tokio::test]
async fn c4_deleting_a_crd_deletes_its_objects() {
    let env = Server::start("crd-c4").await;
    let (group, _, base) = widgets_in_namespace(&env, namespaced_widgets).await;
    let mut keep = widget(&group, "keep", json!({"color": "red"}));
    keep["metadata"]["finalizers"] = json!(["kcm-rs.io/hold"]);
    assert_eq!(req(&env, "POST", &base, Some(&keep)).await.code, 201);
    let plain = widget(&group, "plain", json!({"color": "red"}));
    assert_eq!(req(&env, "POST", &base, Some(&plain)).await.code, 201);
    let lrv = rv(&req(&env, "GET", &base, None).await.json());
    let mut w = Watch::open(
        &env,
        &format!("{base}?watch=true&resourceVersion={lrv}&timeoutSeconds=60"),
    )
    .await;
    let crd_path = format!("{CRDS}/widgets.{group}");
    let r = req(&env, "DELETE", &crd_path, None).await;
    assert_eq!(r.code, 200);
    let d = r.json();
    assert!(d["metadata"]["deletionTimestamp"].is_string());
    assert_eq!(
        d["metadata"]["finalizers"],
        json!(["customresourcecleanup.apiextensions.k8s.io"])
    );
    assert_eq!(
        conditions(&d).last(),
        Some(&cond("Terminating", "True", "InstanceDeletionPending"))
    );
    let e = w.next().await.expect("event");
    assert_eq!(
        (e["type"].clone(), e["object"]["metadata"]["name"].clone()),
        (json!("MODIFIED"), json!("keep"))
    );
    assert!(e["object"]["metadata"]["deletionTimestamp"].is_string());
    let e = w.next().await.expect("event");
    assert_eq!(
        (e["type"].clone(), e["object"]["metadata"]["name"].clone()),
        (json!("DELETED"), json!("plain"))
    );
    let got = wait_for(&env, &crd_path, |c| {
        conditions(c).contains(&cond("Terminating", "True", "InstanceDeletionInProgress"))
    })
    .await;
    assert!(condition(&got, "Established"));
    let r = req(
        &env,
        "POST",
        &base,
        Some(&widget(&group, "late", json!({"color": "red"}))),
    )
    .await;
    assert_eq!(
        (r.code, r.json()["message"].clone()),
        (
            403,
            json!(format!(
                "widgets.{group} \"late\" is forbidden: create not allowed while custom resource definition is terminating"
            ))
        )
    );
    // the last finalizer goes: one DELETED with the stored state
    let r = patch(
        &env,
        &format!("{base}/keep"),
        "application/merge-patch+json",
        &json!({"metadata": {"finalizers": null}}),
    )
    .await;
    assert_eq!(r.code, 200);
    assert_eq!(r.json()["metadata"]["finalizers"], Value::Null);
    let e = w.next().await.expect("event");
    assert_eq!(
        (
            e["type"].clone(),
            e["object"]["metadata"]["finalizers"].clone()
        ),
        (json!("DELETED"), json!(["kcm-rs.io/hold"]))
    );
    assert!(env.wait_gone(&crd_path, 300).await, "the CRD stays");
    for _ in 0..100 {
        if req(&env, "GET", &format!("/apis/{group}"), None).await.code == 404 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    let r = req(&env, "GET", &format!("/apis/{group}/v1"), None).await;
    assert_eq!(
        (r.code, r.body.as_slice()),
        (404, &b"404 page not found\n"[..])
    );
    let r = req(&env, "GET", &base, None).await;
    assert_eq!(r.code, 404);
    env.finish().await;
}
