//! A custom resource version's paths as kube-apiserver publishes them: list (also across
//! namespaces), create, delete collection, read, replace, delete and patch, and the `status`
//! and `scale` subresources, with their parameters, bodies, responses, operation ids, tags,
//! `x-kubernetes-action` and `x-kubernetes-group-version-kind`, in OpenAPI v3 or v2 form.
//!
//! Behaviour of `buildRoute` in
//! `staging/src/k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder/builder.go`, the
//! operation ids and tags of `k8s.io/kube-openapi` (`util.ToValidOperationID`) and its
//! hoisting of the parameters every operation of a path shares. Parameter descriptions are
//! upstream's own, looked up by name in its documents when the module cache has them.

use serde_json::{Map, Value, json};

use super::crd_schema::model_name;

/// What the paths of one custom resource version need.
#[derive(Debug, Clone)]
pub struct CustomKind<'a> {
    /// API group.
    pub group: &'a str,
    /// Version.
    pub version: &'a str,
    /// Kind.
    pub kind: &'a str,
    /// Plural resource name.
    pub plural: &'a str,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// Has the status subresource.
    pub status: bool,
    /// Has the scale subresource.
    pub scale: bool,
}

const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

const LIST_OPTIONS: &[&str] = &[
    "allowWatchBookmarks",
    "continue",
    "fieldSelector",
    "labelSelector",
    "limit",
    "resourceVersion",
    "resourceVersionMatch",
    "sendInitialEvents",
    "shardSelector",
    "timeoutSeconds",
    "watch",
];
const WRITE_OPTIONS: &[&str] = &["dryRun", "fieldManager", "fieldValidation"];
const PATCH_OPTIONS: &[&str] = &["dryRun", "fieldManager", "fieldValidation", "force"];
const DELETE_PARAMS: &[&str] = &[
    "dryRun",
    "gracePeriodSeconds",
    "ignoreStoreReadErrorWithClusterBreakingPotential",
    "orphanDependents",
    "propagationPolicy",
];

fn param_type(name: &str) -> &'static str {
    match name {
        "allowWatchBookmarks"
        | "sendInitialEvents"
        | "watch"
        | "force"
        | "ignoreStoreReadErrorWithClusterBreakingPotential"
        | "orphanDependents" => "boolean",
        "limit" | "timeoutSeconds" | "gracePeriodSeconds" => "integer",
        _ => "string",
    }
}

/// kube-openapi's `ToValidOperationID`: letters, `_` and (not first) digits kept; anything else
/// dropped and the next letter capitalized.
pub fn operation_id_part(s: &str, capitalize_first: bool) -> String {
    let mut out = String::new();
    let mut upper = capitalize_first;
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_ascii_digit()) {
            if upper {
                out.extend(c.to_uppercase());
                upper = false;
            } else {
                out.push(c);
            }
        } else {
            upper = true;
        }
    }
    out
}

fn article(kind: &str) -> &'static str {
    match kind.chars().next().map(|c| c.to_ascii_lowercase()) {
        Some('a' | 'e' | 'i' | 'o' | 'u') => "an",
        _ => "a",
    }
}

/// One operation before rendering.
struct Op {
    method: &'static str,
    action: &'static str,
    id: String,
    description: String,
    params: Vec<&'static str>,
    body: Option<(String, bool)>,
    patch_body: bool,
    responses: Vec<(&'static str, &'static str, Option<String>)>,
}

struct Renderer<'a, 'b> {
    v2: bool,
    kind: &'a CustomKind<'b>,
    describe: &'a dyn Fn(&str) -> Option<String>,
}

impl Renderer<'_, '_> {
    fn schema_ref(&self, target: &str) -> Value {
        if self.v2 {
            json!({"$ref": format!("#/definitions/{target}")})
        } else {
            json!({"$ref": format!("#/components/schemas/{target}")})
        }
    }

    fn content(&self, target: &str, types: &[&str]) -> Value {
        let mut m = Map::new();
        for t in types {
            m.insert((*t).to_string(), json!({"schema": self.schema_ref(target)}));
        }
        Value::Object(m)
    }

    fn param(&self, name: &str, location: &str, description: Option<String>) -> Value {
        let mut p = if self.v2 {
            json!({"uniqueItems": true, "type": param_type(name), "name": name, "in": location})
        } else {
            json!({"name": name, "in": location, "schema": {"type": param_type(name), "uniqueItems": true}})
        };
        if location == "path" {
            p["required"] = json!(true);
        }
        if let Some(d) = description.or_else(|| (self.describe)(name)) {
            p["description"] = Value::String(d);
        }
        p
    }

    fn operation(&self, op: &Op, params: &[&str]) -> Value {
        let k = self.kind;
        let mut o = json!({
            "tags": [format!("{}_{}", operation_id_part(k.group, false), k.version)],
            "description": op.description,
            "operationId": op.id,
        });
        let mut plist: Vec<Value> = Vec::new();
        if self.v2 {
            o["consumes"] = if op.patch_body {
                json!([
                    "application/json-patch+json",
                    "application/merge-patch+json",
                    "application/apply-patch+yaml"
                ])
            } else {
                json!(["application/json", "application/yaml"])
            };
            o["produces"] = json!(["application/json", "application/yaml"]);
            o["schemes"] = json!(["https"]);
            if let Some((target, required)) = &op.body {
                plist.push(json!({"name": "body", "in": "body", "required": required, "schema": self.schema_ref(target)}));
            }
        } else if let Some((target, required)) = &op.body {
            let types: &[&str] = if op.patch_body {
                &[
                    "application/apply-patch+yaml",
                    "application/json-patch+json",
                    "application/merge-patch+json",
                ]
            } else {
                &["application/json", "application/yaml"]
            };
            let mut b = json!({"content": self.content(target, types)});
            if *required {
                b["required"] = json!(true);
            }
            o["requestBody"] = b;
        }
        plist.extend(params.iter().map(|p| self.param(p, "query", None)));
        if !plist.is_empty() {
            o["parameters"] = Value::Array(plist);
        }
        let mut responses = Map::new();
        for (code, text, target) in &op.responses {
            let mut r = json!({"description": text});
            if let Some(t) = target {
                if self.v2 {
                    r["schema"] = self.schema_ref(t);
                } else {
                    r["content"] = self.content(t, &["application/json", "application/yaml"]);
                }
            }
            responses.insert((*code).to_string(), r);
        }
        o["responses"] = Value::Object(responses);
        o["x-kubernetes-action"] = json!(op.action);
        o["x-kubernetes-group-version-kind"] =
            json!({"group": k.group, "version": k.version, "kind": k.kind});
        o
    }

    /// A path item: parameters every operation shares hoisted to the path, with the path's own.
    fn path_item(&self, ops: &[Op], path_params: &[&str]) -> Value {
        let shared: Vec<&'static str> = ops
            .first()
            .map(|first| {
                first
                    .params
                    .iter()
                    .copied()
                    .filter(|p| ops.iter().all(|o| o.params.contains(p)))
                    .collect()
            })
            .unwrap_or_default();
        let mut item = Map::new();
        for op in ops {
            let own: Vec<&str> = op
                .params
                .iter()
                .copied()
                .filter(|p| !shared.contains(p))
                .collect();
            item.insert(op.method.to_string(), self.operation(op, &own));
        }
        let mut params: Vec<(String, Value)> = Vec::new();
        for p in path_params {
            let d = (*p == "name").then(|| format!("name of the {}", self.kind.kind));
            params.push((p.to_string(), self.param(p, "path", d)));
        }
        params.push(("pretty".into(), self.param("pretty", "query", None)));
        params.extend(
            shared
                .iter()
                .map(|p| (p.to_string(), self.param(p, "query", None))),
        );
        params.sort_by(|a, b| a.0.cmp(&b.0));
        item.insert(
            "parameters".into(),
            Value::Array(params.into_iter().map(|(_, v)| v).collect()),
        );
        Value::Object(item)
    }
}

/// The paths of a custom resource version; `describe` gives a query parameter's description.
pub fn paths(
    k: &CustomKind<'_>,
    v2: bool,
    describe: &dyn Fn(&str) -> Option<String>,
) -> Map<String, Value> {
    let r = Renderer {
        v2,
        kind: k,
        describe,
    };
    let gv = format!(
        "{}{}",
        operation_id_part(k.group, true),
        operation_id_part(k.version, true)
    );
    let scope = if k.namespaced { "Namespaced" } else { "" };
    let kind_model = model_name(k.group, k.version, k.kind);
    let list_model = model_name(k.group, k.version, &format!("{}List", k.kind));
    let ok = |t: &str| ("200", "OK", Some(t.to_string()));
    let unauthorized = || ("401", "Unauthorized", None);
    let root = if k.namespaced {
        format!(
            "/apis/{}/{}/namespaces/{{namespace}}/{}",
            k.group, k.version, k.plural
        )
    } else {
        format!("/apis/{}/{}/{}", k.group, k.version, k.plural)
    };
    let ns_params: &[&str] = if k.namespaced { &["namespace"] } else { &[] };
    let item_params: &[&str] = if k.namespaced {
        &["name", "namespace"]
    } else {
        &["name"]
    };
    let mut out = Map::new();
    let list = |id: String| Op {
        method: "get",
        action: "list",
        id,
        description: format!("list objects of kind {}", k.kind),
        params: LIST_OPTIONS.to_vec(),
        body: None,
        patch_body: false,
        responses: vec![ok(&list_model), unauthorized()],
    };
    if k.namespaced {
        let all = format!("/apis/{}/{}/{}", k.group, k.version, k.plural);
        let op = list(format!("list{gv}{}ForAllNamespaces", k.kind));
        out.insert(all, r.path_item(&[op], &[]));
    }
    let collection = [
        list(format!("list{gv}{scope}{}", k.kind)),
        Op {
            method: "post",
            action: "post",
            id: format!("create{gv}{scope}{}", k.kind),
            description: format!("create {} {}", article(k.kind), k.kind),
            params: WRITE_OPTIONS.to_vec(),
            body: Some((kind_model.clone(), true)),
            patch_body: false,
            responses: vec![
                ok(&kind_model),
                ("201", "Created", Some(kind_model.clone())),
                ("202", "Accepted", Some(kind_model.clone())),
                unauthorized(),
            ],
        },
        Op {
            method: "delete",
            action: "deletecollection",
            id: format!("delete{gv}Collection{scope}{}", k.kind),
            description: format!("delete collection of {}", k.kind),
            params: LIST_OPTIONS.to_vec(),
            body: None,
            patch_body: false,
            responses: vec![ok(STATUS), unauthorized()],
        },
    ];
    out.insert(root.clone(), r.path_item(&collection, ns_params));
    let item_ops = |sub: &str, sample: &str, with_delete: bool| -> Vec<Op> {
        let title = match sub {
            "" => String::new(),
            s => operation_id_part(s, true),
        };
        let of = match sub {
            "" => String::new(),
            s => format!(" {s} of"),
        };
        let mut ops = vec![
            Op {
                method: "get",
                action: "get",
                id: format!("read{gv}{scope}{}{title}", k.kind),
                description: format!("read{of} the specified {}", k.kind),
                params: vec!["resourceVersion"],
                body: None,
                patch_body: false,
                responses: vec![ok(sample), unauthorized()],
            },
            Op {
                method: "put",
                action: "put",
                id: format!("replace{gv}{scope}{}{title}", k.kind),
                description: format!("replace{of} the specified {}", k.kind),
                params: WRITE_OPTIONS.to_vec(),
                body: Some((sample.to_string(), true)),
                patch_body: false,
                responses: vec![
                    ok(sample),
                    ("201", "Created", Some(sample.to_string())),
                    unauthorized(),
                ],
            },
        ];
        if with_delete {
            ops.push(Op {
                method: "delete",
                action: "delete",
                id: format!("delete{gv}{scope}{}", k.kind),
                description: format!("delete {} {}", article(k.kind), k.kind),
                params: DELETE_PARAMS.to_vec(),
                body: Some((DELETE_OPTIONS.to_string(), false)),
                patch_body: false,
                responses: vec![
                    ok(STATUS),
                    ("202", "Accepted", Some(STATUS.to_string())),
                    unauthorized(),
                ],
            });
        }
        ops.push(Op {
            method: "patch",
            action: "patch",
            id: format!("patch{gv}{scope}{}{title}", k.kind),
            description: format!("partially update{of} the specified {}", k.kind),
            params: PATCH_OPTIONS.to_vec(),
            body: Some((PATCH.to_string(), true)),
            patch_body: true,
            responses: vec![ok(sample), unauthorized()],
        });
        ops
    };
    out.insert(
        format!("{root}/{{name}}"),
        r.path_item(&item_ops("", &kind_model, true), item_params),
    );
    if k.status {
        out.insert(
            format!("{root}/{{name}}/status"),
            r.path_item(&item_ops("status", &kind_model, false), item_params),
        );
    }
    if k.scale {
        out.insert(
            format!("{root}/{{name}}/scale"),
            r.path_item(&item_ops("scale", SCALE, false), item_params),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widget() -> CustomKind<'static> {
        CustomKind {
            group: "probe.example.com",
            version: "v1",
            kind: "Widget",
            plural: "widgets",
            namespaced: true,
            status: true,
            scale: true,
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
}
