//! Tables of CustomResourceDefinitions (upstream `registry/customresourcedefinition/
//! tableconvertor`) and of custom resources (`registry/customresource/tableconvertor`: the
//! name, then the CRD's printer columns, `Age` when it names none).

use serde_json::{Value, json};

use super::human_duration::since;
use super::jsonpath;
use crate::registry::CustomVersion;
use crate::registry::meta::{self, at};

fn col(name: &str, ty: &str, format: &str, priority: i64, description: &str) -> Value {
    json!({"name": name, "type": ty, "format": format, "description": description, "priority": priority})
}

/// CRD columns.
pub(super) fn crd_columns(name_desc: &str, age_desc: &str) -> Vec<Value> {
    vec![
        col("Name", "string", "name", 0, name_desc),
        col("Scope", "string", "", 0, "Cluster/Namespaced"),
        col("Versions", "string", "", 0, "Served versions"),
        col("Created At", "date", "", 0, age_desc),
        col("Group", "string", "", 1, "API group"),
        col("Kind", "string", "", 1, "CustomResource kind"),
        col("ShortNames", "string", "", 1, "Short names"),
        col("Established", "boolean", "", 1, "Established status"),
    ]
}

/// A CRD's row.
pub(super) fn crd_cells(v: &Value) -> Vec<Value> {
    let s = |p: &[&str]| at(v, p).and_then(Value::as_str).unwrap_or("").to_string();
    let mut versions: Vec<String> = at(v, &["spec", "versions"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|x| x["served"] == true)
        .map(|x| {
            let name = x["name"].as_str().unwrap_or("");
            if x["storage"] == true {
                format!("{name}(storage)")
            } else {
                name.to_string()
            }
        })
        .collect();
    versions.sort();
    let short: Vec<&str> = at(v, &["spec", "names", "shortNames"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let established = at(v, &["status", "conditions"])
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .any(|c| c["type"] == "Established" && c["status"] == "True");
    vec![
        json!(meta::name_of(v)),
        json!(s(&["spec", "scope"])),
        json!(versions.join(",")),
        json!(s(&["metadata", "creationTimestamp"])),
        json!(s(&["spec", "group"])),
        json!(s(&["spec", "names", "kind"])),
        json!(short.join(",")),
        json!(established),
    ]
}

/// A custom resource's columns.
pub(super) fn custom_columns(cv: &CustomVersion, name_desc: &str) -> Vec<Value> {
    let mut out = vec![col("Name", "string", "name", 0, name_desc)];
    for c in &cv.columns {
        let desc = if c.description.is_empty() {
            format!(
                "Custom resource definition column (in JSONPath format): {}",
                c.json_path
            )
        } else {
            c.description.clone()
        };
        out.push(col(&c.name, &c.type_, &c.format, c.priority, &desc));
    }
    out
}

/// A custom resource's row: each column's JSONPath, typed as the column says.
pub(super) fn custom_cells(cv: &CustomVersion, v: &Value) -> Vec<Value> {
    let mut out = vec![json!(meta::name_of(v))];
    for c in &cv.columns {
        let found = jsonpath::find(v, &c.json_path);
        let cell = match (c.type_.as_str(), found) {
            (_, None) | (_, Some(Value::Null)) => Value::Null,
            ("string", Some(x)) => json!(jsonpath::print(x)),
            ("integer", Some(x)) => x
                .as_i64()
                .or_else(|| x.as_f64().map(|f| f as i64))
                .map_or(Value::Null, |i| json!(i)),
            ("number", Some(x)) => x.as_f64().map_or(Value::Null, |f| json!(f)),
            ("boolean", Some(x)) => x.as_bool().map_or(Value::Null, |b| json!(b)),
            ("date", Some(x)) => match x.as_str() {
                Some(t) if meta::parse_time(t).is_some() => json!(since(Some(x))),
                Some(_) => json!("<invalid>"),
                None => Value::Null,
            },
            _ => Value::Null,
        };
        out.push(cell);
    }
    out
}
