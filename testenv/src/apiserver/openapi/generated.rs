//! The built-in kinds' documents when upstream's are not at hand (no Go module cache: a user who
//! only added kcm-testenv to their `Cargo.toml`): built from the definitions generated into
//! [`registry::schema`](crate::registry::schema) (upstream's own, descriptions left out) and
//! the served resources' paths ([`paths`], in the form of
//! `staging/src/k8s.io/apiserver/pkg/endpoints/installer.go`'s routes), one v3 document per
//! discovery path as kube-apiserver publishes them and one swagger document.
//!
//! What a client reads from them (`kubectl explain`'s fields and types, the
//! `x-kubernetes-*` extensions server-side apply and `kubectl diff` use, the operations and
//! their group-version-kinds) is upstream's; the prose (descriptions), the deprecated `/watch/`
//! paths and the connect subresources (`exec`, `log`, `proxy`, …) are not there.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::filter::{self, INFO_VERSION};
use super::paths::{self, Kind, Sub};
use crate::registry::resources::is_builtin_group;
use crate::registry::schema::{REF_PREFIX, catalog};
use crate::registry::{ResourceInfo, ServedResources};

const META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1";

/// The v2 form of a reference.
const V2_PREFIX: &str = "#/definitions/";

fn security_schemes() -> Value {
    json!({"BearerToken": {"description": "Bearer Token authentication", "in": "header", "name": "authorization", "type": "apiKey"}})
}

/// The definition name of a kind, `None` when the generated definitions have none.
fn model(group: &str, version: &str, kind: &str) -> Option<String> {
    catalog()
        .kind_definition(group, version, kind)
        .map(str::to_string)
}

/// A served resource's paths (`None` when its kind has no definition).
fn resource_paths(r: &ResourceInfo, v2: bool) -> Option<Map<String, Value>> {
    let kind_model = model(r.group, r.version, r.kind);
    let subresources = r
        .subresources
        .iter()
        .filter_map(|s| {
            let group = s.group.unwrap_or(r.group);
            let version = s.version.unwrap_or(r.version);
            let kind = if s.kind.is_empty() { r.kind } else { s.kind };
            Some(Sub {
                name: s.name,
                model: model(group, version, kind)?,
                gvk: (group, version, kind),
                verbs: s.verbs,
            })
        })
        .collect();
    let k = Kind {
        group: r.group,
        version: r.version,
        kind: r.kind,
        plural: r.plural,
        namespaced: r.namespaced,
        list_model: model(r.group, r.version, &format!("{}List", r.kind)).unwrap_or_default(),
        model: kind_model?,
        verbs: r.verbs,
        subresources,
    };
    Some(paths::paths(&k, v2, &|_| None))
}

/// A discovery document's path: `GET` answering a `meta.k8s.io` (or `version`) type.
fn discovery_path(id: &str, tag: &str, description: &str, model: &str, v2: bool) -> Value {
    let target = |prefix: &str| json!({"$ref": format!("{prefix}{model}")});
    let types = ["application/json", "application/yaml"];
    let mut op = json!({
        "tags": [tag],
        "description": description,
        "operationId": id,
        "responses": {"401": {"description": "Unauthorized"}},
    });
    if v2 {
        op["consumes"] = json!(types);
        op["produces"] = json!(types);
        op["schemes"] = json!(["https"]);
        op["responses"]["200"] = json!({"description": "OK", "schema": target(V2_PREFIX)});
    } else {
        let content: Map<String, Value> = types
            .iter()
            .map(|t| (t.to_string(), json!({"schema": target(REF_PREFIX)})))
            .collect();
        op["responses"]["200"] = json!({"description": "OK", "content": content});
    }
    json!({"get": op})
}

/// The paths of a v3 document's key (`api`, `api/v1`, `apis`, `apis/<group>`,
/// `apis/<group>/<version>`, `version`); empty when nothing of it is served.
fn key_paths(key: &str, served: &ServedResources, v2: bool) -> Map<String, Value> {
    let mut out = Map::new();
    let mut discovery = |path: String, id: String, tag: &str, description: &str, model: &str| {
        out.insert(path, discovery_path(&id, tag, description, model, v2));
    };
    let parts: Vec<&str> = key.split('/').collect();
    match parts.as_slice() {
        ["api"] => discovery(
            "/api/".into(),
            "getCoreAPIVersions".into(),
            "core",
            "get available API versions",
            &format!("{META}.APIVersions"),
        ),
        ["apis"] => discovery(
            "/apis/".into(),
            "getAPIVersions".into(),
            "apis",
            "get available API versions",
            &format!("{META}.APIGroupList"),
        ),
        ["version"] => discovery(
            "/version/".into(),
            "getCodeVersion".into(),
            "version",
            "get the version information for this server",
            "io.k8s.apimachinery.pkg.version.Info",
        ),
        ["apis", group] if is_builtin_group(group) => {
            let (tag, id) = paths::group_part(group);
            discovery(
                format!("/apis/{group}/"),
                format!("get{id}APIGroup"),
                &tag,
                "get information of a group",
                &format!("{META}.APIGroup"),
            )
        }
        ["api", version] | ["apis", _, version] => {
            let group = if parts[0] == "api" { "" } else { parts[1] };
            let resources = served.resources(group, version);
            if resources.is_empty() {
                return out;
            }
            let (tag, id) = paths::group_version(group, version);
            discovery(
                format!("{}/", paths::root(group, version)),
                format!("get{id}APIResources"),
                &tag,
                "get available resources",
                &format!("{META}.APIResourceList"),
            );
            for r in resources.into_iter().filter(|r| !r.is_custom()) {
                out.extend(resource_paths(r, v2).unwrap_or_default());
            }
        }
        _ => {}
    }
    out
}

/// The built-in documents' keys: `api`, `api/v1`, `apis`, `apis/<group>`, `apis/<group>/<v>`,
/// `version`.
pub fn builtin_keys(served: &ServedResources) -> Vec<String> {
    let mut keys = vec![
        "api".to_string(),
        "api/v1".into(),
        "apis".into(),
        "version".into(),
    ];
    for g in served.groups().iter().filter(|g| is_builtin_group(&g.name)) {
        keys.push(format!("apis/{}", g.name));
        keys.extend(g.versions.iter().map(|v| format!("apis/{}/{v}", g.name)));
    }
    keys
}

/// The definitions the paths reach, as the generated data writes them (v3).
fn reached(paths: &Map<String, Value>, prefix: &str) -> Map<String, Value> {
    let mut refs = BTreeSet::new();
    filter::refs(&Value::Object(paths.clone()), &mut refs);
    let c = catalog();
    let roots = refs.iter().filter_map(|r| r.strip_prefix(prefix));
    c.closure(roots)
        .into_iter()
        .filter_map(|n| Some((n.to_string(), c.raw(n)?.clone())))
        .collect()
}

/// The v3 document of `key` built from the generated definitions; `None` when nothing of it
/// is served.
pub fn v3(key: &str, served: &ServedResources) -> Option<Value> {
    let paths = key_paths(key, served, false);
    if paths.is_empty() {
        return None;
    }
    let mut schemas = reached(&paths, REF_PREFIX);
    if let ["api", version] | ["apis", _, version] = key.split('/').collect::<Vec<_>>()[..] {
        let group = key
            .strip_prefix("apis/")
            .map_or("", |k| &k[..k.len() - version.len() - 1]);
        for s in schemas.values_mut() {
            only_group_version(s, group, version);
        }
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": {"title": "Kubernetes", "version": INFO_VERSION},
        "paths": paths,
        "components": {"schemas": schemas, "securitySchemes": security_schemes()},
    }))
}

/// A meta type's `x-kubernetes-group-version-kind`s cut to the document's: the generated
/// definitions list every group version that has it, upstream's document of a group version
/// core/v1 and its own.
fn only_group_version(schema: &mut Value, group: &str, version: &str) {
    let Some(Value::Array(gvks)) = schema.get_mut("x-kubernetes-group-version-kind") else {
        return;
    };
    if gvks.len() > 1 {
        gvks.retain(|g| {
            (g["group"] == "" && g["version"] == "v1")
                || (g["group"] == group && g["version"] == version)
        });
    }
}

/// The meta types' definitions (`Status`, `ObjectMeta`, …) a custom resources' v3 document
/// references, by name.
pub fn v3_schemas() -> Map<String, Value> {
    let c = catalog();
    c.names()
        .filter_map(|n| Some((n.to_string(), c.raw(n)?.clone())))
        .collect()
}

/// A v3 schema in v2's form (as upstream's `swagger.json` writes the same types): references
/// under `#/definitions/`, a lone described reference (`allOf: [{$ref}]`) as the reference
/// itself, no `default`, and a `oneOf` of types (`Quantity`) as a string.
pub fn to_v2(v: &Value) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            if let Some(Value::Array(all)) = m.get("allOf")
                && let [only] = all.as_slice()
                && let Some(r) = only
                    .get("$ref")
                    .filter(|_| only.as_object().map(Map::len) == Some(1))
            {
                out.insert("$ref".into(), to_v2(r));
            }
            if m.contains_key("oneOf") && !m.contains_key("type") {
                out.insert("type".into(), json!("string"));
            }
            for (k, x) in m {
                match k.as_str() {
                    "allOf" | "default" | "oneOf" => {}
                    "properties" => {
                        let props = x.as_object().into_iter().flatten();
                        let props = props.map(|(p, s)| (p.clone(), to_v2(s))).collect();
                        out.insert(k.clone(), Value::Object(props));
                    }
                    _ => {
                        out.insert(k.clone(), to_v2(x));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(a) => Value::Array(a.iter().map(to_v2).collect()),
        Value::String(s) => match s.strip_prefix(REF_PREFIX) {
            Some(name) => Value::String(format!("{V2_PREFIX}{name}")),
            None => v.clone(),
        },
        _ => v.clone(),
    }
}

/// The swagger document of every served built-in kind, built from the generated definitions.
pub fn v2(served: &ServedResources) -> Value {
    let mut paths = Map::new();
    for key in builtin_keys(served) {
        paths.extend(key_paths(&key, served, true));
    }
    let definitions: Map<String, Value> = reached(&paths, V2_PREFIX)
        .into_iter()
        .map(|(n, d)| (n, to_v2(&d)))
        .collect();
    json!({
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": INFO_VERSION},
        "paths": paths,
        "definitions": definitions,
        "security": [{"BearerToken": []}],
        "securityDefinitions": security_schemes(),
    })
}

#[cfg(test)]
mod tests;
