//! The type schemas of `cargo xtask upstream gen-testenv`: every definition of upstream's
//! OpenAPI v3 documents (`api/openapi-spec/v3/*.json` of `k8s.io/kubernetes` in Go's module
//! cache), merged into one map and written without their descriptions, as data for
//! kcm-testenv's schema model (`testenv/src/registry/schema/`).
//!
//! Each document repeats the definitions it references; they agree except for the
//! `x-kubernetes-group-version-kind` lists of the meta types (`DeleteOptions`, `WatchEvent`),
//! which name the document's own group: those lists are merged, in document order.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use serde_json::Value;

/// The keys of a schema object whose values are schemas (or maps or lists of them); every other
/// key's value is data (`default`, `enum`, extensions) and kept as it is.
const SCHEMA_VALUED: &[&str] = &["items", "additionalProperties", "not"];
const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf"];

/// The folder of upstream's OpenAPI v3 documents for `version` (`v1.37.2`) in Go's module
/// cache, if the module is there.
pub fn openapi_v3_dir(version: &str) -> Option<PathBuf> {
    let dir = module_cache()?
        .join(format!("k8s.io/kubernetes@{version}"))
        .join("api/openapi-spec/v3");
    dir.is_dir().then_some(dir)
}

/// Go's module cache: `$GOMODCACHE`, else what `go env GOMODCACHE` says, else `~/go/pkg/mod`.
pub fn module_cache() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("GOMODCACHE").filter(|d| !d.is_empty()) {
        return Some(PathBuf::from(dir));
    }
    let from_go = std::process::Command::new("go")
        .args(["env", "GOMODCACHE"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .filter(|d| !d.is_empty());
    match from_go {
        Some(d) => Some(PathBuf::from(d)),
        None => std::env::var_os("HOME").map(|h| PathBuf::from(h).join("go/pkg/mod")),
    }
}

/// Every definition of the documents in `dir`, descriptions removed, by name.
pub fn read_definitions(dir: &Path) -> anyhow::Result<BTreeMap<String, Value>> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .with_context(|| format!("reading {}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    files.sort();
    let mut out: BTreeMap<String, Value> = BTreeMap::new();
    for file in &files {
        let text =
            std::fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
        let doc: Value =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
        let Some(schemas) = doc
            .get("components")
            .and_then(|c| c.get("schemas"))
            .and_then(Value::as_object)
        else {
            continue;
        };
        for (name, schema) in schemas {
            let schema = without_descriptions(schema);
            match out.get_mut(name) {
                None => {
                    out.insert(name.clone(), schema);
                }
                Some(seen) => merge_same(name, seen, schema, file)?,
            }
        }
    }
    if out.is_empty() {
        bail!(
            "no definitions in the OpenAPI documents of {}",
            dir.display()
        );
    }
    Ok(out)
}

/// A definition met again in another document: the same but for its GVK list.
fn merge_same(name: &str, seen: &mut Value, mut again: Value, file: &Path) -> anyhow::Result<()> {
    const GVK: &str = "x-kubernetes-group-version-kind";
    let more = again
        .as_object_mut()
        .and_then(|o| o.remove(GVK))
        .and_then(|v| v.as_array().cloned())
        .unwrap_or_default();
    let mut seen_rest = seen.clone();
    if let Some(o) = seen_rest.as_object_mut() {
        o.remove(GVK);
    }
    if seen_rest != again {
        bail!(
            "definition {name} differs between the documents ({} and an earlier one)",
            file.display()
        );
    }
    if let Some(list) = seen
        .as_object_mut()
        .and_then(|o| o.get_mut(GVK))
        .and_then(Value::as_array_mut)
    {
        for gvk in more {
            if !list.contains(&gvk) {
                list.push(gvk);
            }
        }
    }
    Ok(())
}

/// A schema without `description`s (no upstream prose is copied), walking only what is schema:
/// property names called `description` and data under `default` stay.
fn without_descriptions(schema: &Value) -> Value {
    let Some(o) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = serde_json::Map::new();
    for (k, v) in o {
        let v = match k.as_str() {
            "description" => continue,
            "properties" => Value::Object(
                v.as_object()
                    .map(|props| {
                        props
                            .iter()
                            .map(|(p, s)| (p.clone(), without_descriptions(s)))
                            .collect()
                    })
                    .unwrap_or_default(),
            ),
            k if SCHEMA_VALUED.contains(&k) => without_descriptions(v),
            k if SCHEMA_LISTS.contains(&k) => Value::Array(
                v.as_array()
                    .map(|l| l.iter().map(without_descriptions).collect())
                    .unwrap_or_default(),
            ),
            _ => v.clone(),
        };
        out.insert(k.clone(), v);
    }
    Value::Object(out)
}

/// Compact JSON with object keys sorted (stable whatever serde_json's map order is).
pub fn sorted_json(v: &Value, out: &mut String) {
    match v {
        Value::Object(o) => {
            let mut keys: Vec<&String> = o.keys().collect();
            keys.sort();
            out.push('{');
            for (i, k) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*k).clone()).to_string());
                out.push(':');
                sorted_json(&o[k.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                sorted_json(x, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

/// The Rust source of `testenv/src/registry/schema/definitions.rs`: one definition a line.
pub fn render(version: &str, definitions: &BTreeMap<String, Value>) -> anyhow::Result<String> {
    let mut body = String::from("{\n");
    for (i, (name, schema)) in definitions.iter().enumerate() {
        if i > 0 {
            body.push_str(",\n");
        }
        body.push_str(&Value::String(name.clone()).to_string());
        body.push(':');
        sorted_json(schema, &mut body);
    }
    body.push_str("\n}");
    if body.contains("\"##") {
        bail!("the definitions contain \"## and cannot be written as a raw string");
    }
    let mut out = String::new();
    writeln!(
        out,
        "// @generated by `cargo xtask upstream gen-testenv` from k8s.io/kubernetes {version}'s\n\
         // api/openapi-spec/v3 documents (Go's module cache): every definition, descriptions left\n\
         // out. Do not edit; regenerate with `cargo xtask upstream gen-testenv`."
    )?;
    writeln!(out)?;
    writeln!(
        out,
        "/// Upstream's OpenAPI v3 definitions as one JSON object, by name (read by\n\
         /// [`Catalog`](super::Catalog) on first use)."
    )?;
    writeln!(out, "pub(super) const DEFINITIONS: &str = r##\"{body}\"##;")?;
    Ok(out)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn descriptions_go_and_data_stays() {
        let s = json!({
            "description": "prose",
            "type": "object",
            "properties": {
                "description": {"type": "string", "description": "prose"},
                "spec": {"allOf": [{"$ref": "#/x"}], "default": {"description": "data"},
                         "description": "prose"},
                "items": {"type": "array", "items": {"type": "string", "description": "p"}},
            },
        });
        assert_eq!(
            without_descriptions(&s),
            json!({
                "type": "object",
                "properties": {
                    "description": {"type": "string"},
                    "spec": {"allOf": [{"$ref": "#/x"}], "default": {"description": "data"}},
                    "items": {"type": "array", "items": {"type": "string"}},
                },
            })
        );
    }

    #[test]
    fn merges_group_version_kinds_and_refuses_other_differences() {
        let gvk = "x-kubernetes-group-version-kind";
        let mut seen = json!({"type": "object", gvk: [{"group": "", "kind": "D"}]});
        let again = json!({"type": "object", gvk: [{"group": "apps", "kind": "D"}]});
        merge_same("D", &mut seen, again, Path::new("f")).expect("same");
        assert_eq!(seen[gvk].as_array().map(Vec::len), Some(2));
        let other = json!({"type": "string"});
        assert!(merge_same("D", &mut seen, other, Path::new("f")).is_err());
    }

    #[test]
    fn sorted_compact_json() {
        let mut out = String::new();
        sorted_json(
            &json!({"b": [1, "x\"y"], "a": {"d": null, "c": true}}),
            &mut out,
        );
        assert_eq!(out, r#"{"a":{"c":true,"d":null},"b":[1,"x\"y"]}"#);
    }
}
