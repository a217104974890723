//! The CustomResourceDefinition strategy (upstream `registry/customresourcedefinition/
//! strategy.go` and the v1 defaults): names and conversion defaulted, the status reset on
//! create, kept on updates of the main resource, the storage version recorded in
//! `status.storedVersions`, generation bumped on spec changes; the status subresource keeps
//! the spec.

use serde_json::{Value, json};

use crate::registry::meta::{at, meta_mut, semantic_eq};

/// The name of the finalizer that makes the server delete a CRD's objects first.
pub const CLEANUP_FINALIZER: &str = "customresourcecleanup.apiextensions.k8s.io";

/// The v1 defaults: `singular` (the kind in lower case), `listKind` (`<Kind>List`) and
/// `conversion.strategy: None`.
pub fn apply_defaults(crd: &mut Value) {
    let Some(spec) = crd.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if let Some(names) = spec.get_mut("names").and_then(Value::as_object_mut) {
        let kind = names
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string();
        let empty = |names: &serde_json::Map<String, Value>, k: &str| {
            names
                .get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .is_empty()
        };
        if empty(names, "singular") {
            names.insert("singular".into(), json!(kind.to_lowercase()));
        }
        if empty(names, "listKind") && !kind.is_empty() {
            names.insert("listKind".into(), json!(format!("{kind}List")));
        }
    }
    spec.entry("conversion")
        .or_insert_with(|| json!({"strategy": "None"}));
}

fn storage_version(crd: &Value) -> Option<String> {
    at(crd, &["spec", "versions"])
        .and_then(Value::as_array)?
        .iter()
        .find(|v| v["storage"] == true)
        .and_then(|v| v["name"].as_str())
        .map(str::to_string)
}

fn record_storage_version(crd: &mut Value) {
    let Some(v) = storage_version(crd) else {
        return;
    };
    if let Some(status) = crd.get_mut("status").and_then(Value::as_object_mut) {
        let stored = status.entry("storedVersions").or_insert_with(|| json!([]));
        if let Some(a) = stored.as_array_mut()
            && !a.iter().any(|x| x == v.as_str())
        {
            a.push(json!(v));
        }
    }
}

/// Schema bounds as Go writes its float64s: `10`, not the `10.0` a typed round trip gives.
pub fn integral_bounds(v: &mut Value) {
    match v {
        Value::Object(m) => {
            for (k, x) in m.iter_mut() {
                let bound = matches!(k.as_str(), "maximum" | "minimum" | "multipleOf");
                match x {
                    Value::Number(n) if bound => {
                        if let Some(f) = n.as_f64()
                            && f.fract() == 0.0
                            && f.abs() < 1e15
                        {
                            *x = json!(f as i64);
                        }
                    }
                    other => integral_bounds(other),
                }
            }
        }
        Value::Array(a) => a.iter_mut().for_each(integral_bounds),
        _ => {}
    }
}

/// `PrepareForCreate`: a fresh status (no accepted names yet) with the storage version, and
/// generation 1.
pub fn prepare_for_create(crd: &mut Value) {
    if let Some(o) = crd.as_object_mut() {
        o.insert(
            "status".into(),
            json!({"acceptedNames": {"plural": "", "kind": ""}, "conditions": null, "storedVersions": []}),
        );
    }
    record_storage_version(crd);
    meta_mut(crd).insert("generation".into(), json!(1));
}

/// `PrepareForUpdate` of the main resource (`status: false`) or of `/status`.
pub fn prepare_for_update(old: &Value, new: &mut Value, status: bool) {
    let Some(o) = new.as_object_mut() else {
        return;
    };
    if status {
        o.insert("spec".into(), old.get("spec").cloned().unwrap_or(json!({})));
        return;
    }
    match old.get("status") {
        Some(s) => o.insert("status".into(), s.clone()),
        None => o.remove("status"),
    };
    if !semantic_eq(old.get("spec"), new.get("spec")) {
        let g = at(old, &["metadata", "generation"])
            .and_then(Value::as_i64)
            .unwrap_or(0);
        meta_mut(new).insert("generation".into(), json!(g + 1));
    }
    record_storage_version(new);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crd() -> Value {
        json!({
            "metadata": {"name": "widgets.example.com"},
            "spec": {"group": "example.com", "scope": "Namespaced",
                     "names": {"plural": "widgets", "kind": "Widget"},
                     "versions": [{"name": "v1", "served": true, "storage": true}]},
        })
    }

    #[test]
    fn defaults_and_create() {
        let mut c = crd();
        apply_defaults(&mut c);
        assert_eq!(c["spec"]["names"]["singular"], "widget");
        assert_eq!(c["spec"]["names"]["listKind"], "WidgetList");
        assert_eq!(c["spec"]["conversion"], json!({"strategy": "None"}));
        prepare_for_create(&mut c);
        assert_eq!(
            c["status"],
            json!({"acceptedNames": {"plural": "", "kind": ""}, "conditions": null, "storedVersions": ["v1"]})
        );
        assert_eq!(c["metadata"]["generation"], 1);
    }

    #[test]
    fn updates_keep_status_and_bump_generation_on_spec_changes() {
        let mut old = crd();
        prepare_for_create(&mut old);
        old["status"]["conditions"] = json!([{"type": "Established", "status": "True"}]);
        let mut new = crd();
        new["metadata"]["generation"] = json!(1);
        new["metadata"]["labels"] = json!({"a": "b"});
        prepare_for_update(&old, &mut new, false);
        assert_eq!(new["status"], old["status"]);
        assert_eq!(new["metadata"]["generation"], 1);
        let mut changed = crd();
        changed["spec"]["versions"] = json!([
            {"name": "v1", "served": true, "storage": false},
            {"name": "v2", "served": true, "storage": true},
        ]);
        prepare_for_update(&old, &mut changed, false);
        assert_eq!(changed["metadata"]["generation"], 2);
        assert_eq!(changed["status"]["storedVersions"], json!(["v1", "v2"]));
        // the status subresource keeps the spec
        let mut st = changed.clone();
        prepare_for_update(&old, &mut st, true);
        assert_eq!(st["spec"], old["spec"]);
    }
}
