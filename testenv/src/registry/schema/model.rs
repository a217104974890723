//! [`Schema`]: one node of an OpenAPI v3 schema as upstream's documents write them, with the
//! `x-kubernetes-*` extensions parsed. The same reader takes a CustomResourceDefinition's
//! `openAPIV3Schema` (no `$ref`s there).

use std::collections::BTreeMap;

use serde_json::Value;

/// The prefix of a `$ref` to another definition.
pub const REF_PREFIX: &str = "#/components/schemas/";

/// `type`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Type {
    /// No `type` (a `$ref`, `oneOf`, or any value).
    #[default]
    Unset,
    /// `object`: a struct (`properties`), a map (`additionalProperties`) or free-form.
    Object,
    /// `array`.
    Array,
    /// `string`.
    String,
    /// `integer`.
    Integer,
    /// `number`.
    Number,
    /// `boolean`.
    Boolean,
}

impl Type {
    fn parse(s: &str) -> Type {
        match s {
            "object" => Type::Object,
            "array" => Type::Array,
            "string" => Type::String,
            "integer" => Type::Integer,
            "number" => Type::Number,
            "boolean" => Type::Boolean,
            _ => Type::Unset,
        }
    }
}

/// `x-kubernetes-list-type`: how server-side apply merges a list.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListType {
    /// `atomic`: replaced as a whole.
    Atomic,
    /// `set`: scalar items, merged as a set.
    Set,
    /// `map`: items keyed by `x-kubernetes-list-map-keys`.
    Map,
}

/// `x-kubernetes-map-type`: how server-side apply merges an object.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MapType {
    /// `atomic`: replaced as a whole.
    Atomic,
    /// `granular`: merged key by key (the default for objects).
    Granular,
}

/// An entry of `x-kubernetes-group-version-kind`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Gvk {
    /// API group, `""` for core.
    pub group: String,
    /// Version.
    pub version: String,
    /// Kind.
    pub kind: String,
}

/// One schema node. Fields are the OpenAPI keywords kcm-testenv reads; absent keywords are
/// empty (`None`, `false`, empty lists). A property that names another definition and adds
/// use-site keywords (`default`, a list or patch strategy) is written by upstream as
/// `allOf: [{$ref}]` beside them: read here as [`Schema::reference`] with those keywords.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    /// `type`.
    pub type_: Type,
    /// `format` (`int32`, `int64`, `byte`, `date-time`, `int-or-string`, …).
    pub format: Option<String>,
    /// The definition a `$ref` (or a one-element `allOf` of a `$ref`) names, without
    /// [`REF_PREFIX`].
    pub reference: Option<String>,
    /// `properties`, by name.
    pub properties: BTreeMap<String, Schema>,
    /// `required`.
    pub required: Vec<String>,
    /// `items`.
    pub items: Option<Box<Schema>>,
    /// `additionalProperties` when it is a schema (`true` reads as an unconstrained schema).
    pub additional_properties: Option<Box<Schema>>,
    /// `default`: upstream writes the zero value Go always serializes (`{}` for a struct that
    /// is not a pointer, `0`, `""`) and the `+default` markers (`"TCP"`).
    pub default: Option<Value>,
    /// `enum`.
    pub enum_values: Vec<Value>,
    /// `oneOf` (upstream: `Quantity` and `IntOrString`).
    pub one_of: Vec<Schema>,
    /// `nullable`.
    pub nullable: bool,
    /// `x-kubernetes-list-type`.
    pub list_type: Option<ListType>,
    /// `x-kubernetes-list-map-keys`.
    pub list_map_keys: Vec<String>,
    /// `x-kubernetes-map-type`.
    pub map_type: Option<MapType>,
    /// `x-kubernetes-patch-strategy`, split at commas (`merge`, `retainKeys`, `replace`).
    pub patch_strategy: Vec<String>,
    /// `x-kubernetes-patch-merge-key`.
    pub patch_merge_key: Option<String>,
    /// `x-kubernetes-int-or-string`, or `format: int-or-string`.
    pub int_or_string: bool,
    /// `x-kubernetes-preserve-unknown-fields`.
    pub preserve_unknown_fields: bool,
    /// `x-kubernetes-embedded-resource`.
    pub embedded_resource: bool,
    /// `x-kubernetes-unions`, as written.
    pub unions: Vec<Value>,
    /// `x-kubernetes-group-version-kind`.
    pub gvks: Vec<Gvk>,
}

fn strings(v: Option<&Value>) -> Vec<String> {
    v.and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .filter_map(Value::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default()
}

fn text(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

fn flag(v: &Value, key: &str) -> bool {
    v.get(key).and_then(Value::as_bool).unwrap_or(false)
}

fn reference_of(v: &Value) -> Option<String> {
    let direct = v.get("$ref").and_then(Value::as_str);
    let wrapped = || match v.get("allOf").and_then(Value::as_array).map(Vec::as_slice) {
        Some([one]) => one.get("$ref").and_then(Value::as_str),
        _ => None,
    };
    direct
        .or_else(wrapped)
        .map(|r| r.strip_prefix(REF_PREFIX).unwrap_or(r).to_string())
}

impl Schema {
    /// Read a schema node from its JSON; unknown keywords are ignored, malformed ones read as
    /// absent.
    pub fn from_json(v: &Value) -> Schema {
        let sub = |key: &str| v.get(key).filter(|s| s.is_object()).map(Schema::from_json);
        let additional_properties = match v.get("additionalProperties") {
            Some(Value::Bool(true)) => Some(Box::new(Schema::default())),
            Some(s @ Value::Object(_)) => Some(Box::new(Schema::from_json(s))),
            _ => None,
        };
        let format = text(v, "format");
        Schema {
            type_: Type::parse(v.get("type").and_then(Value::as_str).unwrap_or("")),
            int_or_string: flag(v, "x-kubernetes-int-or-string")
                || format.as_deref() == Some("int-or-string"),
            format,
            reference: reference_of(v),
            properties: v
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| {
                    p.iter()
                        .map(|(k, s)| (k.clone(), Schema::from_json(s)))
                        .collect()
                })
                .unwrap_or_default(),
            required: strings(v.get("required")),
            items: sub("items").map(Box::new),
            additional_properties,
            default: v.get("default").cloned(),
            enum_values: v
                .get("enum")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            one_of: v
                .get("oneOf")
                .and_then(Value::as_array)
                .map(|a| a.iter().map(Schema::from_json).collect())
                .unwrap_or_default(),
            nullable: flag(v, "nullable"),
            list_type: match v.get("x-kubernetes-list-type").and_then(Value::as_str) {
                Some("atomic") => Some(ListType::Atomic),
                Some("set") => Some(ListType::Set),
                Some("map") => Some(ListType::Map),
                _ => None,
            },
            list_map_keys: strings(v.get("x-kubernetes-list-map-keys")),
            map_type: match v.get("x-kubernetes-map-type").and_then(Value::as_str) {
                Some("atomic") => Some(MapType::Atomic),
                Some("granular") => Some(MapType::Granular),
                _ => None,
            },
            patch_strategy: text(v, "x-kubernetes-patch-strategy")
                .map(|s| s.split(',').map(|p| p.trim().to_string()).collect())
                .unwrap_or_default(),
            patch_merge_key: text(v, "x-kubernetes-patch-merge-key"),
            preserve_unknown_fields: flag(v, "x-kubernetes-preserve-unknown-fields"),
            embedded_resource: flag(v, "x-kubernetes-embedded-resource"),
            unions: v
                .get("x-kubernetes-unions")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default(),
            gvks: v
                .get("x-kubernetes-group-version-kind")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|g| Gvk {
                            group: text(g, "group").unwrap_or_default(),
                            version: text(g, "version").unwrap_or_default(),
                            kind: text(g, "kind").unwrap_or_default(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
        }
    }

    /// Whether this node describes a struct: an object with named properties.
    pub fn is_struct(&self) -> bool {
        !self.properties.is_empty()
    }

    /// Whether this node is a map: an object whose values share one schema.
    pub fn is_map(&self) -> bool {
        self.properties.is_empty() && self.additional_properties.is_some()
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn reads_upstream_keywords_and_extensions() {
        let s = Schema::from_json(&json!({
            "type": "object",
            "required": ["name"],
            "properties": {
                "ports": {
                    "type": "array",
                    "items": {"$ref": "#/components/schemas/io.k8s.api.core.v1.ServicePort"},
                    "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port", "protocol"],
                    "x-kubernetes-patch-merge-key": "port",
                    "x-kubernetes-patch-strategy": "merge,retainKeys",
                },
                "spec": {"allOf": [{"$ref": "#/components/schemas/X"}], "default": {}},
                "selector": {"type": "object", "additionalProperties": {"type": "string"},
                             "x-kubernetes-map-type": "atomic"},
                "port": {"format": "int-or-string", "oneOf": [{"type": "integer"}, {"type": "string"}]},
            },
            "x-kubernetes-group-version-kind": [{"group": "", "kind": "Service", "version": "v1"}],
        }));
        assert_eq!(s.type_, Type::Object);
        assert!(s.is_struct());
        assert_eq!(s.required, vec!["name"]);
        let ports = &s.properties["ports"];
        assert_eq!(ports.list_type, Some(ListType::Map));
        assert_eq!(ports.list_map_keys, vec!["port", "protocol"]);
        assert_eq!(ports.patch_strategy, vec!["merge", "retainKeys"]);
        assert_eq!(ports.patch_merge_key.as_deref(), Some("port"));
        let item = ports.items.as_deref().expect("items");
        assert_eq!(
            item.reference.as_deref(),
            Some("io.k8s.api.core.v1.ServicePort")
        );
        let spec = &s.properties["spec"];
        assert_eq!(spec.reference.as_deref(), Some("X"));
        assert_eq!(spec.default, Some(json!({})));
        let selector = &s.properties["selector"];
        assert!(selector.is_map());
        assert_eq!(selector.map_type, Some(MapType::Atomic));
        assert!(s.properties["port"].int_or_string);
        assert_eq!(s.properties["port"].one_of.len(), 2);
        assert_eq!(s.gvks[0].kind, "Service");
    }
}
