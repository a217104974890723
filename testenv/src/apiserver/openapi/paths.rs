//! A resource version's paths as kube-apiserver publishes them: list (also across
//! namespaces), create, delete collection, read, replace, delete and patch, and the
//! subresources (`status`, `scale`, the `create`-only ones such as `eviction` and `token`), each
//! operation only where the resource serves its verb, with their parameters, bodies, responses,
//! operation ids, tags, `x-kubernetes-action` and `x-kubernetes-group-version-kind`, in OpenAPI
//! v3 or v2 form. Custom resources' paths are these; the built-in kinds' are when upstream's
//! documents are not at hand ([`generated`](super::generated)).
//!
//! Behaviour of `buildRoute` in
//! `staging/src/k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder/builder.go`, the
//! operation ids and tags of `k8s.io/kube-openapi` (`util.ToValidOperationID`) and its
//! hoisting of the parameters every operation of a path shares, the route names of
//! `staging/src/k8s.io/apiserver/pkg/endpoints/installer.go`. Parameter descriptions are
//! upstream's own, looked up by name in its documents when the module cache has them.

use serde_json::{Map, Value, json};

/// What the paths of one resource version need.
#[derive(Debug, Clone)]
pub struct Kind<'a> {
    /// API group (`""`: core).
    pub group: &'a str,
    /// Version.
    pub version: &'a str,
    /// Kind.
    pub kind: &'a str,
    /// Plural resource name.
    pub plural: &'a str,
    /// Namespaced or cluster-scoped.
    pub namespaced: bool,
    /// The definition name of the kind (`io.k8s.api.apps.v1.Deployment`).
    pub model: String,
    /// The definition name of its list.
    pub list_model: String,
    /// The verbs the resource serves (an operation per verb served).
    pub verbs: &'a [&'a str],
    /// Its subresources.
    pub subresources: Vec<Sub<'a>>,
}

/// A subresource of a [`Kind`].
#[derive(Debug, Clone)]
pub struct Sub<'a> {
    /// `status`, `scale`, `eviction`, …
    pub name: &'a str,
    /// The definition name of its body.
    pub model: String,
    /// The group, version and kind its operations name.
    pub gvk: (&'a str, &'a str, &'a str),
    /// Its verbs (`get`, `update`, `patch`: read, replace, patch; `create`: a POST).
    pub verbs: &'a [&'a str],
}

/// The tag and operation-id part of a group (`GetOperationIDAndTags` of
/// `staging/src/k8s.io/apiserver/pkg/endpoints/openapi/openapi.go`): `core` for the core group,
/// `.k8s.io` trimmed (`rbacAuthorization`, `RbacAuthorization`).
pub fn group_part(group: &str) -> (String, String) {
    let g = if group.is_empty() { "core" } else { group };
    let g = g.strip_suffix(".k8s.io").unwrap_or(g);
    (operation_id_part(g, false), operation_id_part(g, true))
}

/// The tag and operation-id part of a group version: `apps_v1` and `AppsV1`, `core_v1` and
/// `CoreV1` for the core group.
pub fn group_version(group: &str, version: &str) -> (String, String) {
    let (tag, id) = group_part(group);
    (
        format!("{tag}_{}", operation_id_part(version, false)),
        format!("{id}{}", operation_id_part(version, true)),
    )
}

/// The root of a group version's paths: `/api/v1`, `/apis/apps/v1`.
pub fn root(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("/api/{version}")
    } else {
        format!("/apis/{group}/{version}")
    }
}

const STATUS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Status";
const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";
const DELETE_OPTIONS: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.DeleteOptions";
/// The definition of the `scale` subresource's body.
pub const SCALE: &str = "io.k8s.api.autoscaling.v1.Scale";

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
struct Op<'a> {
    method: &'static str,
    action: &'static str,
    id: String,
    description: String,
    params: Vec<&'static str>,
    body: Option<(String, bool)>,
    patch_body: bool,
    responses: Vec<(&'static str, &'static str, Option<String>)>,
    /// The group, version and kind it names (the resource's when `None`).
    gvk: Option<(&'a str, &'a str, &'a str)>,
}

struct Renderer<'a, 'b> {
    v2: bool,
    kind: &'a Kind<'b>,
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

    fn operation(&self, op: &Op<'_>, params: &[&str]) -> Value {
        let k = self.kind;
        let mut o = json!({
            "tags": [group_version(k.group, k.version).0],
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
        let (group, version, kind) = op.gvk.unwrap_or((k.group, k.version, k.kind));
        o["x-kubernetes-group-version-kind"] =
            json!({"group": group, "version": version, "kind": kind});
        o
    }

    /// A path item: parameters every operation shares hoisted to the path, with the path's own.
    fn path_item(&self, ops: &[Op<'_>], path_params: &[&str]) -> Value {
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

/// The paths of a resource version; `describe` gives a query parameter's description.
pub fn paths(
    k: &Kind<'_>,
    v2: bool,
    describe: &dyn Fn(&str) -> Option<String>,
) -> Map<String, Value> {
    let r = Renderer {
        v2,
        kind: k,
        describe,
    };
    let gv = group_version(k.group, k.version).1;
    let serves = |verb: &str| k.verbs.contains(&verb);
    let scope = if k.namespaced { "Namespaced" } else { "" };
    let ok = |t: &str| ("200", "OK", Some(t.to_string()));
    let unauthorized = || ("401", "Unauthorized", None);
    let base = root(k.group, k.version);
    let root = if k.namespaced {
        format!("{base}/namespaces/{{namespace}}/{}", k.plural)
    } else {
        format!("{base}/{}", k.plural)
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
        responses: vec![ok(&k.list_model), unauthorized()],
        gvk: None,
    };
    if k.namespaced && serves("list") {
        let op = list(format!("list{gv}{}ForAllNamespaces", k.kind));
        out.insert(format!("{base}/{}", k.plural), r.path_item(&[op], &[]));
    }
    let mut collection = Vec::new();
    if serves("list") {
        collection.push(list(format!("list{gv}{scope}{}", k.kind)));
    }
    if serves("create") {
        collection.push(Op {
            method: "post",
            action: "post",
            id: format!("create{gv}{scope}{}", k.kind),
            description: format!("create {} {}", article(k.kind), k.kind),
            params: WRITE_OPTIONS.to_vec(),
            body: Some((k.model.clone(), true)),
            patch_body: false,
            responses: vec![
                ok(&k.model),
                ("201", "Created", Some(k.model.clone())),
                ("202", "Accepted", Some(k.model.clone())),
                unauthorized(),
            ],
            gvk: None,
        });
    }
    if serves("deletecollection") {
        collection.push(Op {
            method: "delete",
            action: "deletecollection",
            id: format!("delete{gv}Collection{scope}{}", k.kind),
            description: format!("delete collection of {}", k.kind),
            params: LIST_OPTIONS.to_vec(),
            body: None,
            patch_body: false,
            responses: vec![ok(STATUS), unauthorized()],
            gvk: None,
        });
    }
    if !collection.is_empty() {
        out.insert(root.clone(), r.path_item(&collection, ns_params));
    }
    // the operations on an object (`sub` empty) or one of its subresources
    let item_ops = |sub: &str, sample: &str, verbs: &[&str], gvk| -> Vec<Op<'_>> {
        let title = match sub {
            "" => String::new(),
            s => operation_id_part(s, true),
        };
        let of = match sub {
            "" => String::new(),
            s => format!(" {s} of"),
        };
        let mut ops = Vec::new();
        if !sub.is_empty() && verbs.contains(&"create") {
            ops.push(Op {
                method: "post",
                action: "post",
                id: format!("create{gv}{scope}{}{title}", k.kind),
                description: format!("create {sub} of {} {}", article(k.kind), k.kind),
                params: WRITE_OPTIONS.to_vec(),
                body: Some((sample.to_string(), true)),
                patch_body: false,
                responses: vec![
                    ok(sample),
                    ("201", "Created", Some(sample.to_string())),
                    ("202", "Accepted", Some(sample.to_string())),
                    unauthorized(),
                ],
                gvk,
            });
        }
        if verbs.contains(&"get") {
            ops.push(Op {
                method: "get",
                action: "get",
                id: format!("read{gv}{scope}{}{title}", k.kind),
                description: format!("read{of} the specified {}", k.kind),
                params: vec!["resourceVersion"],
                body: None,
                patch_body: false,
                responses: vec![ok(sample), unauthorized()],
                gvk,
            });
        }
        if verbs.contains(&"update") {
            ops.push(Op {
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
                gvk,
            });
        }
        if sub.is_empty() && verbs.contains(&"delete") {
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
                gvk,
            });
        }
        if verbs.contains(&"patch") {
            ops.push(Op {
                method: "patch",
                action: "patch",
                id: format!("patch{gv}{scope}{}{title}", k.kind),
                description: format!("partially update{of} the specified {}", k.kind),
                params: PATCH_OPTIONS.to_vec(),
                body: Some((PATCH.to_string(), true)),
                patch_body: true,
                responses: vec![ok(sample), unauthorized()],
                gvk,
            });
        }
        ops
    };
    let ops = item_ops("", &k.model, k.verbs, None);
    if !ops.is_empty() {
        out.insert(format!("{root}/{{name}}"), r.path_item(&ops, item_params));
    }
    for s in &k.subresources {
        let ops = item_ops(s.name, &s.model, s.verbs, Some(s.gvk));
        if !ops.is_empty() {
            out.insert(
                format!("{root}/{{name}}/{}", s.name),
                r.path_item(&ops, item_params),
            );
        }
    }
    out
}

#[cfg(test)]
mod tests;
