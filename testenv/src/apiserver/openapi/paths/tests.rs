//! Paths of a custom kind in both forms: operation ids, hoisted parameters, bodies.

use super::*;

const ALL: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];
const SUB: &[&str] = &["get", "patch", "update"];

fn widget() -> Kind<'static> {
    let gvk = ("probe.example.com", "v1", "Widget");
    Kind {
        group: "probe.example.com",
        version: "v1",
        kind: "Widget",
        plural: "widgets",
        namespaced: true,
        model: "com.example.probe.v1.Widget".into(),
        list_model: "com.example.probe.v1.WidgetList".into(),
        verbs: ALL,
        subresources: vec![
            Sub {
                name: "status",
                model: "com.example.probe.v1.Widget".into(),
                gvk,
                verbs: SUB,
            },
            Sub {
                name: "scale",
                model: SCALE.into(),
                gvk,
                verbs: SUB,
            },
        ],
    }
}

#[test]
fn operation_ids() {
    assert_eq!(
        operation_id_part("probe.example.com", true),
        "ProbeExampleCom"
    );
    assert_eq!(
        operation_id_part("probe.example.com", false),
        "probeExampleCom"
    );
    assert_eq!(operation_id_part("kcm-rs.io", true), "KcmRsIo");
    assert_eq!(operation_id_part("v1beta1", true), "V1beta1");
    // GetOperationIDAndTags: the core group is `core`, `.k8s.io` is trimmed
    assert_eq!(
        group_version("", "v1"),
        ("core_v1".to_string(), "CoreV1".to_string())
    );
    assert_eq!(
        group_version("rbac.authorization.k8s.io", "v1"),
        (
            "rbacAuthorization_v1".to_string(),
            "RbacAuthorizationV1".to_string()
        )
    );
    assert_eq!(
        group_version("probe.example.com", "v1"),
        (
            "probeExampleCom_v1".to_string(),
            "ProbeExampleComV1".to_string()
        )
    );
}

#[test]
fn v3_paths_of_a_namespaced_kind() {
    let p = paths(&widget(), false, &|_| None);
    let keys: Vec<&String> = p.keys().collect();
    assert_eq!(
        keys,
        [
            "/apis/probe.example.com/v1/namespaces/{namespace}/widgets",
            "/apis/probe.example.com/v1/namespaces/{namespace}/widgets/{name}",
            "/apis/probe.example.com/v1/namespaces/{namespace}/widgets/{name}/scale",
            "/apis/probe.example.com/v1/namespaces/{namespace}/widgets/{name}/status",
            "/apis/probe.example.com/v1/widgets",
        ]
    );
    let item = &p["/apis/probe.example.com/v1/namespaces/{namespace}/widgets/{name}"];
    let names = |v: &Value| -> Vec<String> {
        v.as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["name"].as_str().map(str::to_string))
            .collect()
    };
    assert_eq!(names(&item["parameters"]), ["name", "namespace", "pretty"]);
    assert_eq!(
        item["patch"]["operationId"],
        "patchProbeExampleComV1NamespacedWidget"
    );
    assert_eq!(
        names(&item["patch"]["parameters"]),
        ["dryRun", "fieldManager", "fieldValidation", "force"]
    );
    assert_eq!(item["patch"]["tags"], json!(["probeExampleCom_v1"]));
    assert_eq!(item["delete"]["description"], "delete a Widget");
    let all = &p["/apis/probe.example.com/v1/widgets"];
    assert_eq!(
        all["get"]["operationId"],
        "listProbeExampleComV1WidgetForAllNamespaces"
    );
    assert!(all["get"].get("parameters").is_none());
    assert_eq!(names(&all["parameters"]).len(), 12);
    let col = &p["/apis/probe.example.com/v1/namespaces/{namespace}/widgets"];
    assert_eq!(
        col["delete"]["operationId"],
        "deleteProbeExampleComV1CollectionNamespacedWidget"
    );
    assert_eq!(
        col["get"]["responses"]["200"]["content"]["application/json"]["schema"]["$ref"],
        "#/components/schemas/com.example.probe.v1.WidgetList"
    );
    let scale = &p["/apis/probe.example.com/v1/namespaces/{namespace}/widgets/{name}/scale"];
    assert_eq!(
        scale["get"]["description"],
        "read scale of the specified Widget"
    );
    assert_eq!(
        scale["put"]["operationId"],
        "replaceProbeExampleComV1NamespacedWidgetScale"
    );
}

#[test]
fn v2_paths_have_bodies_as_parameters() {
    let mut k = widget();
    k.namespaced = false;
    k.kind = "Apple";
    k.model = "com.example.probe.v1.Apple".into();
    let p = paths(&k, true, &|n| (n == "pretty").then(|| "pretty".to_string()));
    let col = &p["/apis/probe.example.com/v1/widgets"];
    assert_eq!(col["post"]["description"], "create an Apple");
    assert_eq!(col["post"]["parameters"][0]["in"], "body");
    assert_eq!(col["post"]["schemes"], json!(["https"]));
    assert_eq!(col["parameters"][0]["description"], "pretty");
    assert_eq!(
        col["post"]["responses"]["201"]["schema"]["$ref"],
        "#/definitions/com.example.probe.v1.Apple"
    );
}
