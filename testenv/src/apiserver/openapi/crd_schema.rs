//! A custom resource's schemas as kube-apiserver publishes them: the kind (its structural
//! schema with `x-kubernetes-int-or-string` unfolded, `apiVersion`, `kind` and a `metadata`
//! reference to `ObjectMeta`, embedded resources completed, and
//! `x-kubernetes-group-version-kind`) and its list. For OpenAPI v2 the schema is cut to what v2
//! can say (no junctors, no nullable, no defaults, preserved fields without type).
//!
//! Behaviour of `staging/src/k8s.io/apiextensions-apiserver/pkg/controller/openapi/builder/builder.go`,
//! `…/controller/openapi/v2/conversion.go` and `…/pkg/apiserver/schema/unfold.go`.

use serde_json::{Map, Value, json};

/// The definition name of a custom kind: the group reversed, then version and kind
/// (`widgets.example.com/v1 Widget` is `com.example.v1.Widget`).
pub fn model_name(group: &str, version: &str, kind: &str) -> String {
    let reversed: Vec<&str> = group.split('.').rev().collect();
    format!("{}.{version}.{kind}", reversed.join("."))
}

/// What the published schemas take from the built-in ones: the descriptions of `apiVersion`,
/// `kind` and `metadata` (read from upstream's documents when the module cache has them).
#[derive(Debug, Clone, Default)]
pub struct Descriptions {
    /// `apiVersion` of a kind.
    pub api_version: Option<String>,
    /// `kind` of a kind.
    pub kind: Option<String>,
    /// `metadata` of an object.
    pub object_meta: Option<String>,
    /// `metadata` of a list.
    pub list_meta: Option<String>,
}

fn with_description(mut v: Value, d: Option<&String>) -> Value {
    if let Some(d) = d {
        v["description"] = Value::String(d.clone());
    }
    v
}

fn meta_ref(target: &str, v2: bool, d: Option<&String>) -> Value {
    let r = if v2 {
        format!("#/definitions/{target}")
    } else {
        format!("#/components/schemas/{target}")
    };
    // v3 puts a described reference under allOf
    let v = if v2 {
        json!({"$ref": r})
    } else {
        json!({"allOf": [{"$ref": r}]})
    };
    with_description(v, d)
}

const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";
const LIST_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ListMeta";

fn string(d: Option<&String>) -> Value {
    with_description(json!({"type": "string"}), d)
}

fn gvk(group: &str, version: &str, kind: &str) -> Value {
    json!([{"group": group, "kind": kind, "version": version}])
}

/// `x-kubernetes-int-or-string` spelled out as `anyOf: [integer, string]` (or, next to an
/// `anyOf` of its own, as the first `allOf`), everywhere in the schema.
pub fn unfold(s: &mut Value) {
    let Some(m) = s.as_object_mut() else { return };
    if m.get("x-kubernetes-int-or-string") == Some(&Value::Bool(true)) {
        let pair = json!([{"type": "integer"}, {"type": "string"}]);
        let is_pair = |v: Option<&Value>| v == Some(&pair);
        let first_all_of = m
            .get("allOf")
            .and_then(|a| a.get(0))
            .map(|x| x.get("anyOf"));
        if !is_pair(m.get("anyOf")) && !is_pair(first_all_of.flatten()) {
            if m.contains_key("anyOf") {
                let mut all = vec![json!({"anyOf": pair})];
                if let Some(Value::Array(rest)) = m.remove("allOf") {
                    all.extend(rest);
                }
                m.insert("allOf".into(), Value::Array(all));
            } else {
                m.insert("anyOf".into(), pair);
            }
        }
    }
    for (k, v) in m.iter_mut() {
        match k.as_str() {
            "properties" => {
                if let Some(p) = v.as_object_mut() {
                    p.values_mut().for_each(unfold);
                }
            }
            "items" | "additionalProperties" => unfold(v),
            _ => {}
        }
    }
}

/// Complete every `x-kubernetes-embedded-resource` with `apiVersion`, `kind` (required) and
/// `metadata`; v2 leaves preserved-unknown-fields alone.
fn embed(s: &mut Value, v2: bool, d: &Descriptions) {
    let Some(m) = s.as_object_mut() else { return };
    for (k, v) in m.iter_mut() {
        match k.as_str() {
            "properties" => {
                if let Some(p) = v.as_object_mut() {
                    p.values_mut().for_each(|x| embed(x, v2, d));
                }
            }
            "items" | "additionalProperties" => embed(v, v2, d),
            _ => {}
        }
    }
    if v2 && m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        return;
    }
    if m.get("x-kubernetes-embedded-resource") != Some(&Value::Bool(true)) {
        return;
    }
    let props = m
        .entry("properties")
        .or_insert_with(|| Value::Object(Map::new()));
    props["apiVersion"] = string(d.api_version.as_ref());
    props["kind"] = string(d.kind.as_ref());
    props["metadata"] = meta_ref(OBJECT_META, v2, d.object_meta.as_ref());
    let required = m
        .entry("required")
        .or_insert_with(|| Value::Array(Vec::new()));
    if let Some(r) = required.as_array_mut() {
        for k in ["kind", "apiVersion"] {
            if !r.iter().any(|x| x == k) {
                r.push(Value::String(k.to_string()));
            }
        }
    }
}

/// Cut a schema to what OpenAPI v2 can say.
pub fn to_v2(s: &mut Value) {
    let Some(m) = s.as_object_mut() else { return };
    for k in ["allOf", "oneOf", "anyOf", "not", "default"] {
        m.remove(k);
    }
    if m.remove("nullable") == Some(Value::Bool(true)) {
        m.remove("type");
        m.remove("items");
        m.remove("properties");
    }
    if m.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)) {
        m.remove("items");
        m.remove("properties");
        if m.get("type") == Some(&Value::String("object".into())) {
            m.remove("type");
        }
    }
    if m.get("type") == Some(&Value::String("array".into())) && !m.contains_key("items") {
        m.remove("type");
    }
    let nullable: Vec<String> = m
        .get("properties")
        .and_then(Value::as_object)
        .map(|p| {
            p.iter()
                .filter(|(_, v)| v.get("nullable") == Some(&Value::Bool(true)))
                .map(|(k, _)| k.clone())
                .collect()
        })
        .unwrap_or_default();
    let additional_nullable = m
        .get("additionalProperties")
        .is_some_and(|a| a.get("nullable") == Some(&Value::Bool(true)));
    if let Some(Value::Array(req)) = m.get_mut("required") {
        req.retain(|r| !r.as_str().is_some_and(|r| nullable.iter().any(|n| n == r)));
    }
    if additional_nullable {
        m.remove("required");
    }
    for (k, v) in m.iter_mut() {
        match k.as_str() {
            "properties" => {
                if let Some(p) = v.as_object_mut() {
                    p.values_mut().for_each(to_v2);
                }
            }
            "items" | "additionalProperties" => to_v2(v),
            _ => {}
        }
    }
}

/// The kind's schema for `version` of a CRD, from its `openAPIV3Schema` (`None`: the CRD has
/// none for this version, published as a bare object).
pub fn kind_schema(
    group: &str,
    version: &str,
    kind: &str,
    schema: Option<&Value>,
    preserve_unknown_fields: bool,
    v2: bool,
    d: &Descriptions,
) -> Value {
    let bare = match schema {
        None => true,
        Some(s) => {
            v2 && (preserve_unknown_fields
                || s.get("x-kubernetes-preserve-unknown-fields") == Some(&Value::Bool(true)))
        }
    };
    let mut out = if bare {
        json!({"type": "object"})
    } else {
        let mut s = schema.cloned().unwrap_or(Value::Null);
        unfold(&mut s);
        if v2 {
            to_v2(&mut s);
        }
        if let Some(props) = s
            .as_object_mut()
            .map(|m| m.entry("properties").or_insert_with(|| json!({})))
        {
            props["metadata"] = meta_ref(OBJECT_META, v2, d.object_meta.as_ref());
            props["apiVersion"] = string(d.api_version.as_ref());
            props["kind"] = string(d.kind.as_ref());
        }
        embed(&mut s, v2, d);
        s
    };
    out["x-kubernetes-group-version-kind"] = gvk(group, version, kind);
    out
}

/// The list kind's schema: `items` of the kind, list metadata.
pub fn list_schema(
    group: &str,
    version: &str,
    kind: &str,
    list_kind: &str,
    v2: bool,
    d: &Descriptions,
) -> Value {
    let item_ref = if v2 {
        format!("#/definitions/{}", model_name(group, version, kind))
    } else {
        format!("#/components/schemas/{}", model_name(group, version, kind))
    };
    json!({
        "description": format!("{list_kind} is a list of {kind}"),
        "type": "object",
        "required": ["items"],
        "properties": {
            "apiVersion": string(d.api_version.as_ref()),
            "kind": string(d.kind.as_ref()),
            "metadata": meta_ref(LIST_META, v2, d.list_meta.as_ref()),
            "items": {"type": "array", "items": {"$ref": item_ref}},
        },
        "x-kubernetes-group-version-kind": gvk(group, version, list_kind),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn widget_schema() -> Value {
        json!({"type": "object", "properties": {
            "spec": {"type": "object", "properties": {
                "port": {"x-kubernetes-int-or-string": true},
                "anything": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "n": {"type": "integer", "default": 3, "nullable": true},
                "list": {"type": "array", "items": {"type": "string"}},
                "either": {"type": "string", "oneOf": [{"pattern": "^a"}, {"pattern": "^b"}]},
                "inner": {"type": "object", "x-kubernetes-embedded-resource": true, "x-kubernetes-preserve-unknown-fields": true},
            }, "required": ["n"]},
        }})
    }

    #[test]
    fn names() {
        assert_eq!(
            model_name("probe.example.com", "v1", "Widget"),
            "com.example.probe.v1.Widget"
        );
    }

    #[test]
    fn v3_schema_as_published() {
        let d = Descriptions::default();
        let s = kind_schema(
            "x.io",
            "v1",
            "Widget",
            Some(&widget_schema()),
            false,
            false,
            &d,
        );
        let spec = &s["properties"]["spec"]["properties"];
        assert_eq!(
            spec["port"],
            json!({"x-kubernetes-int-or-string": true, "anyOf": [{"type": "integer"}, {"type": "string"}]})
        );
        assert_eq!(spec["n"]["default"], 3);
        assert_eq!(
            s["properties"]["metadata"],
            json!({"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]})
        );
        assert_eq!(s["properties"]["kind"], json!({"type": "string"}));
        assert_eq!(
            s["x-kubernetes-group-version-kind"],
            json!([{"group": "x.io", "kind": "Widget", "version": "v1"}])
        );
        let inner = &spec["inner"];
        assert_eq!(inner["required"], json!(["kind", "apiVersion"]));
        assert!(inner["properties"]["metadata"].is_object());
    }

    #[test]
    fn v2_schema_as_published() {
        let d = Descriptions::default();
        let s = kind_schema(
            "x.io",
            "v1",
            "Widget",
            Some(&widget_schema()),
            false,
            true,
            &d,
        );
        let spec = &s["properties"]["spec"];
        assert_eq!(
            spec["properties"]["port"],
            json!({"x-kubernetes-int-or-string": true})
        );
        assert_eq!(
            spec["properties"]["anything"],
            json!({"x-kubernetes-preserve-unknown-fields": true})
        );
        assert_eq!(spec["properties"]["n"], json!({}));
        assert_eq!(spec["required"], json!([]));
        assert_eq!(spec["properties"]["either"], json!({"type": "string"}));
        assert_eq!(
            s["properties"]["metadata"],
            json!({"$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"})
        );
        // preserved unknown fields at the root: a bare object
        let bare = kind_schema(
            "x.io",
            "v1",
            "W",
            Some(&json!({"type": "object", "x-kubernetes-preserve-unknown-fields": true})),
            false,
            true,
            &d,
        );
        assert_eq!(
            bare,
            json!({"type": "object", "x-kubernetes-group-version-kind": [{"group": "x.io", "kind": "W", "version": "v1"}]})
        );
        let list = list_schema("x.io", "v1", "W", "WList", true, &d);
        assert_eq!(
            list["properties"]["items"]["items"]["$ref"],
            "#/definitions/io.x.v1.W"
        );
        assert_eq!(list["description"], "WList is a list of W");
    }
}
