//! Strategic merge patch for the built-in kinds: merge keys per list (from the k8s.io/api
//! struct tags; `staging/src/k8s.io/apimachinery/pkg/util/strategicpatch/patch.go`) and the directives `$patch`, `$setElementOrder/`,
//! `$deleteFromPrimitiveList/` and `$retainKeys`, none of which is ever stored.

use serde_json::{Map, Value};

use crate::registry::resources::StorageId;

/// How a list field is patched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ListStrategy {
    /// Replaced whole (no patch strategy).
    Replace,
    /// Merged by a key field.
    Key(&'static str),
    /// A set of primitives (finalizers).
    Primitive,
}

/// The strategy of the list at `path` (field names, no indices) in a kind.
pub fn list_strategy(id: StorageId, path: &[&str]) -> ListStrategy {
    use ListStrategy::{Key, Primitive, Replace};
    match path {
        [.., "metadata", "ownerReferences"] => return Key("uid"),
        [.., "metadata", "finalizers"] => return Primitive,
        ["status", "conditions"] => return Key("type"),
        ["status", "podIPs"] | ["status", "hostIPs"] if id == StorageId::PODS => return Key("ip"),
        ["status", "addresses"] if id == StorageId::NODES => return Key("type"),
        _ => {}
    }
    let rest: &[&str] = match (id, path) {
        (StorageId::PODS, ["spec", rest @ ..]) => rest,
        (
            StorageId::DEPLOYMENTS | StorageId::REPLICASETS,
            ["spec", "template", "spec", rest @ ..],
        ) => rest,
        _ => return Replace,
    };
    match rest {
        ["containers" | "initContainers" | "ephemeralContainers"] => Key("name"),
        [
            "containers" | "initContainers" | "ephemeralContainers",
            field,
        ] => match *field {
            "env" => Key("name"),
            "ports" => Key("containerPort"),
            "volumeMounts" => Key("mountPath"),
            "volumeDevices" => Key("devicePath"),
            _ => Replace,
        },
        ["volumes" | "imagePullSecrets" | "resourceClaims" | "schedulingGates"] => Key("name"),
        ["hostAliases"] => Key("ip"),
        ["topologySpreadConstraints"] => Key("topologyKey"),
        _ => Replace,
    }
}

/// Apply a strategic merge patch to `doc`.
pub fn apply(id: StorageId, mut doc: Value, patch: &Value) -> Result<Value, String> {
    let Some(p) = patch.as_object() else {
        return Err("strategic merge patch must be a JSON object".into());
    };
    if !doc.is_object() {
        doc = Value::Object(Map::new());
    }
    let mut path = Vec::new();
    if let Some(o) = doc.as_object_mut() {
        merge_map(id, o, p, &mut path)?;
    }
    Ok(doc)
}

fn directive(v: &Value) -> Option<&str> {
    v.get("$patch").and_then(Value::as_str)
}

/// A patch map with every directive removed (for values added where nothing existed).
fn fresh(
    id: StorageId,
    patch: &Map<String, Value>,
    path: &mut Vec<String>,
) -> Result<Map<String, Value>, String> {
    let mut m = Map::new();
    merge_map(id, &mut m, patch, path)?;
    Ok(m)
}

fn merge_map(
    id: StorageId,
    orig: &mut Map<String, Value>,
    patch: &Map<String, Value>,
    path: &mut Vec<String>,
) -> Result<(), String> {
    match patch.get("$patch").and_then(Value::as_str) {
        Some("replace") => {
            let mut clean = patch.clone();
            clean.remove("$patch");
            *orig = fresh(id, &clean, path)?;
            return Ok(());
        }
        Some("delete") => {
            orig.clear();
            return Ok(());
        }
        Some("merge") | None => {}
        Some(other) => return Err(format!("Unknown patch type: {other}")),
    }
    let mut orders: Vec<(&str, &Vec<Value>)> = Vec::new();
    for (k, pv) in patch {
        if k == "$patch" || k == "$retainKeys" {
            continue;
        }
        if let Some(field) = k.strip_prefix("$setElementOrder/") {
            if let Some(a) = pv.as_array() {
                orders.push((field, a));
            }
            continue;
        }
        if let Some(field) = k.strip_prefix("$deleteFromPrimitiveList/") {
            if let (Some(Value::Array(list)), Some(del)) = (orig.get_mut(field), pv.as_array()) {
                list.retain(|x| !del.contains(x));
            }
            continue;
        }
        if pv.is_null() {
            orig.remove(k);
            continue;
        }
        path.push(k.clone());
        match pv {
            Value::Object(pm) => match directive(pv) {
                Some("delete") => {
                    orig.remove(k);
                }
                Some("replace") => {
                    let mut clean = pm.clone();
                    clean.remove("$patch");
                    let v = fresh(id, &clean, path)?;
                    orig.insert(k.clone(), Value::Object(v));
                }
                _ => {
                    let entry = orig
                        .entry(k.clone())
                        .or_insert_with(|| Value::Object(Map::new()));
                    if !entry.is_object() {
                        *entry = Value::Object(Map::new());
                    }
                    if let Some(om) = entry.as_object_mut() {
                        merge_map(id, om, pm, path)?;
                    }
                }
            },
            Value::Array(pa) => {
                let refs: Vec<&str> = path.iter().map(String::as_str).collect();
                let strategy = list_strategy(id, &refs);
                let cur = match orig.remove(k) {
                    Some(Value::Array(a)) => a,
                    _ => Vec::new(),
                };
                let merged = merge_list(id, cur, pa, strategy, path)?;
                orig.insert(k.clone(), Value::Array(merged));
            }
            scalar => {
                orig.insert(k.clone(), scalar.clone());
            }
        }
        path.pop();
    }
    for (field, order) in orders {
        let refs: Vec<&str> = path
            .iter()
            .map(String::as_str)
            .chain(std::iter::once(field))
            .collect();
        let strategy = list_strategy(id, &refs);
        if let Some(Value::Array(list)) = orig.get_mut(field) {
            reorder(list, order, strategy);
        }
    }
    if let Some(Value::Array(keep)) = patch.get("$retainKeys") {
        let keep: Vec<&str> = keep.iter().filter_map(Value::as_str).collect();
        orig.retain(|k, _| keep.contains(&k.as_str()));
    }
    Ok(())
}

fn key_of<'a>(v: &'a Value, key: &str) -> Option<&'a Value> {
    v.get(key)
}

fn merge_list(
    id: StorageId,
    mut cur: Vec<Value>,
    patch: &[Value],
    strategy: ListStrategy,
    path: &mut Vec<String>,
) -> Result<Vec<Value>, String> {
    if patch.iter().any(|e| directive(e) == Some("replace")) {
        let mut out = Vec::new();
        for e in patch.iter().filter(|e| directive(e) != Some("replace")) {
            out.push(clean_value(id, e, path)?);
        }
        return Ok(out);
    }
    match strategy {
        ListStrategy::Replace => patch.iter().map(|e| clean_value(id, e, path)).collect(),
        ListStrategy::Primitive => {
            // A set of scalars: as upstream, maps or lists in it cannot be merged (nor stored).
            if patch.iter().any(|e| e.is_object() || e.is_array()) {
                let field = path.last().map_or("", String::as_str);
                return Err(format!("cannot merge lists without merge key for {field}"));
            }
            for e in patch {
                if !cur.contains(e) {
                    cur.push(e.clone());
                }
            }
            Ok(cur)
        }
        ListStrategy::Key(key) => {
            for e in patch {
                let Some(pm) = e.as_object() else {
                    return Err(format!("expected a map in the list patch, got {e}"));
                };
                let Some(kv) = key_of(e, key) else {
                    return Err(format!(
                        "map: {e} does not contain declared merge key: {key}"
                    ));
                };
                let pos = cur.iter().position(|c| key_of(c, key) == Some(kv));
                match (directive(e), pos) {
                    (Some("delete"), _) => cur.retain(|c| key_of(c, key) != Some(kv)),
                    (_, Some(i)) => {
                        if let Some(om) = cur[i].as_object_mut() {
                            merge_map(id, om, pm, path)?;
                        }
                    }
                    (_, None) => cur.push(Value::Object(fresh(id, pm, path)?)),
                }
            }
            Ok(cur)
        }
    }
}

fn clean_value(id: StorageId, v: &Value, path: &mut Vec<String>) -> Result<Value, String> {
    match v {
        Value::Object(m) => Ok(Value::Object(fresh(id, m, path)?)),
        // Maps nested in lists of lists are cleaned too: no directive is ever stored.
        Value::Array(a) => a
            .iter()
            .map(|e| clean_value(id, e, path))
            .collect::<Result<_, _>>()
            .map(Value::Array),
        other => Ok(other.clone()),
    }
}

/// Order `list` as `order` says; elements not named keep their relative order after them.
fn reorder(list: &mut Vec<Value>, order: &[Value], strategy: ListStrategy) {
    let ident = |v: &Value| -> Option<Value> {
        match strategy {
            ListStrategy::Key(k) => v.get(k).cloned(),
            _ => Some(v.clone()),
        }
    };
    let wanted: Vec<Value> = order.iter().filter_map(&ident).collect();
    let mut ordered = Vec::with_capacity(list.len());
    let mut rest: Vec<Value> = std::mem::take(list);
    for w in &wanted {
        if let Some(i) = rest.iter().position(|e| ident(e).as_ref() == Some(w)) {
            ordered.push(rest.remove(i));
        }
    }
    ordered.extend(rest);
    *list = ordered;
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn deploy() -> Value {
        json!({"metadata": {"name": "web", "finalizers": ["a"]}, "spec": {"paused": true, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}}, "template": {"spec": {"containers": [{"name": "a", "image": "busybox:1"}, {"name": "b", "image": "busybox:1", "env": [{"name": "X", "value": "1"}]}]}}}})
    }

    #[test]
    fn set_element_order_and_merge_by_name() {
        let p = json!({"spec": {"template": {"spec": {"$setElementOrder/containers": [{"name": "a"}, {"name": "b"}], "containers": [{"name": "b", "image": "busybox:2"}]}}}});
        let out = apply(StorageId::DEPLOYMENTS, deploy(), &p).expect("patch");
        let cs = &out["spec"]["template"]["spec"]["containers"];
        assert_eq!(cs[0]["name"], "a");
        assert_eq!(cs[0]["image"], "busybox:1");
        assert_eq!(cs[1]["image"], "busybox:2");
        assert_eq!(cs[1]["env"][0]["name"], "X");
        assert!(!out.to_string().contains("$setElementOrder"));
    }

    #[test]
    fn null_deletes_and_retain_keys() {
        let p = json!({"spec": {"paused": null, "strategy": {"$retainKeys": ["type"], "type": "Recreate", "rollingUpdate": null}}});
        let out = apply(StorageId::DEPLOYMENTS, deploy(), &p).expect("patch");
        assert!(out["spec"].get("paused").is_none());
        assert_eq!(out["spec"]["strategy"], json!({"type": "Recreate"}));
    }

    #[test]
    fn owner_reference_delete_directive_and_finalizers() {
        let pod = json!({"metadata": {"ownerReferences": [{"uid": "R", "name": "r"}, {"uid": "S", "name": "s"}], "finalizers": ["x", "y"]}});
        let p = json!({"metadata": {"ownerReferences": [{"$patch": "delete", "uid": "R"}], "$deleteFromPrimitiveList/finalizers": ["x"]}});
        let out = apply(StorageId::PODS, pod.clone(), &p).expect("patch");
        assert_eq!(
            out["metadata"]["ownerReferences"],
            json!([{"uid": "S", "name": "s"}])
        );
        assert_eq!(out["metadata"]["finalizers"], json!(["y"]));
        let add = json!({"metadata": {"ownerReferences": [{"uid": "T", "name": "t", "controller": true}], "finalizers": ["z"]}});
        let out = apply(StorageId::PODS, pod, &add).expect("patch");
        assert_eq!(
            out["metadata"]["ownerReferences"].as_array().map(Vec::len),
            Some(3)
        );
        assert_eq!(out["metadata"]["finalizers"], json!(["x", "y", "z"]));
    }

    #[test]
    fn lists_without_strategy_are_replaced() {
        let pod = json!({"spec": {"containers": [{"name": "a", "args": ["1", "2"]}], "tolerations": [{"key": "k"}]}});
        let p = json!({"spec": {"containers": [{"name": "a", "args": ["3"]}], "tolerations": []}});
        let out = apply(StorageId::PODS, pod, &p).expect("patch");
        assert_eq!(out["spec"]["containers"][0]["args"], json!(["3"]));
        assert_eq!(out["spec"]["tolerations"], json!([]));
    }

    /// Found by `tests/it/strategic_patch_fuzz.rs`: directives inside a set of scalars or inside a
    /// list of lists were stored as they came.
    #[test]
    fn directives_in_odd_lists_are_not_stored() {
        let p = json!({"metadata": {"finalizers": [{"$patch": "x"}]}});
        assert_eq!(
            apply(StorageId::PODS, json!({}), &p),
            Err("cannot merge lists without merge key for finalizers".to_string())
        );
        let p = json!({"spec": {"tolerations": [[{"$retainKeys": ["a"], "a": 1, "b": 2}]]}});
        let out = apply(StorageId::PODS, json!({}), &p).expect("patch");
        assert_eq!(out["spec"]["tolerations"], json!([[{"a": 1}]]));
    }

    #[test]
    fn replace_directive_on_map() {
        let d = json!({"spec": {"selector": {"matchLabels": {"a": "1", "b": "2"}}}});
        let p = json!({"spec": {"selector": {"$patch": "replace", "matchLabels": {"c": "3"}}}});
        let out = apply(StorageId::DEPLOYMENTS, d, &p).expect("patch");
        assert_eq!(out["spec"]["selector"], json!({"matchLabels": {"c": "3"}}));
    }
}
