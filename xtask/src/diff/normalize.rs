//! What a client sees of one namespace, normalised for what is random by nature, so that a run
//! under upstream's controllers and a run under kcm compare equal when they behave alike.
//!
//! Removed: uids, resourceVersions, timestamps, managedFields, event names, and what the node
//! simulation decides (node names, IPs, container statuses). Replaced: a ReplicaSet's
//! pod-template-hash by `{rs#N}`, N its creation order among its Deployment's ReplicaSets (the
//! hash values themselves are compared on their own, see [`Snapshot::hashes`]); the random suffix
//! of a generated pod name by `*`; the ServiceAccount volume's random suffix by `*`.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

/// What the event correlator puts before an aggregated event's message.
const COMBINED_PREFIX: &str = "(combined from similar events): ";

/// One namespace at a quiescent point, normalised.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Snapshot {
    /// Deployments and ReplicaSets by `Kind/name` (names normalised).
    pub objects: BTreeMap<String, Value>,
    /// Pods grouped by normalised name (`web-{rs#1}-*`), each group sorted.
    pub pods: BTreeMap<String, Vec<Value>>,
    /// Events: `type reason kind/name: message` → summed count.
    pub events: BTreeMap<String, i64>,
    /// `{rs#N}` of each Deployment → its pod-template-hash.
    pub hashes: BTreeMap<String, String>,
}

/// Builds a snapshot from a `kubectl get deployments,replicasets,pods,events -o json` list.
/// `created` lists the ReplicaSets created during the scenario, in order, as
/// `(owning Deployment, pod-template-hash)` (from the audit log), so that ReplicaSets deleted
/// since (history cleanup, cascading deletion) are still renamed in events and names.
pub fn snapshot(list: &Value, created: &[(String, String)]) -> Snapshot {
    let items: Vec<&Value> = list["items"]
        .as_array()
        .map(|a| a.iter().collect())
        .unwrap_or_default();
    let renames = hash_renames(&items, created);
    let generated = generated_prefixes(&items);
    let mut snap = Snapshot {
        hashes: renames
            .iter()
            .map(|(hash, ordinal)| (ordinal.clone(), hash.clone()))
            .collect(),
        ..Snapshot::default()
    };
    for item in items {
        let kind = item["kind"].as_str().unwrap_or_default();
        let mut v = item.clone();
        rename_strings(&mut v, &renames, &generated);
        match kind {
            "Deployment" | "ReplicaSet" => {
                let name = v["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                strip_object(&mut v);
                snap.objects.insert(format!("{kind}/{name}"), v);
            }
            "Pod" => {
                strip_object(&mut v);
                strip_pod(&mut v);
                let name = v["metadata"]["name"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string();
                snap.pods.entry(name).or_default().push(v);
            }
            "Event" => {
                // client-go's correlator prefixes the 11th and later similar events within ten
                // minutes; whether an event is combined depends on how many came before (timing).
                let message = v["message"].as_str().unwrap_or_default();
                let message = message
                    .strip_prefix(COMBINED_PREFIX)
                    .unwrap_or(message)
                    .to_string();
                let key = format!(
                    "{} {} {}/{}: {}",
                    v["type"].as_str().unwrap_or_default(),
                    v["reason"].as_str().unwrap_or_default(),
                    v["involvedObject"]["kind"].as_str().unwrap_or_default(),
                    v["involvedObject"]["name"].as_str().unwrap_or_default(),
                    message,
                );
                *snap.events.entry(key).or_default() += v["count"].as_i64().unwrap_or(1);
            }
            _ => {}
        }
    }
    for group in snap.pods.values_mut() {
        group.sort_by_key(|p| p.to_string());
    }
    snap
}

/// pod-template-hash → `{owner#N}`: per owning Deployment (or none), in creation order: first
/// the ReplicaSets of `created`, then those only in `items` (by creationTimestamp, then name).
fn hash_renames(items: &[&Value], created: &[(String, String)]) -> BTreeMap<String, String> {
    let mut renames: BTreeMap<String, String> = BTreeMap::new();
    let mut next: BTreeMap<String, usize> = BTreeMap::new();
    let mut assign = |owner: &str, hash: &str, renames: &mut BTreeMap<String, String>| {
        if renames.contains_key(hash) {
            return;
        }
        let n = next.entry(owner.to_string()).or_insert(0);
        *n += 1;
        let prefix = if owner.is_empty() { "rs" } else { owner };
        renames.insert(hash.to_string(), format!("{{{prefix}#{n}}}"));
    };
    for (owner, hash) in created {
        assign(owner, hash, &mut renames);
    }
    let mut by_owner: BTreeMap<String, Vec<(String, String, String)>> = BTreeMap::new();
    for rs in items.iter().filter(|i| i["kind"] == "ReplicaSet") {
        let Some(hash) = rs["metadata"]["labels"]["pod-template-hash"].as_str() else {
            continue;
        };
        let owner = rs["metadata"]["ownerReferences"][0]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let created = rs["metadata"]["creationTimestamp"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let name = rs["metadata"]["name"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        by_owner
            .entry(owner)
            .or_default()
            .push((created, name, hash.to_string()));
    }
    for (owner, mut sets) in by_owner {
        sets.sort();
        for (_, _, hash) in sets {
            assign(&owner, &hash, &mut renames);
        }
    }
    renames
}

/// What generated pod names start with, besides a Deployment's renamed ReplicaSet (`}-`): each
/// ReplicaSet's name (also of those only events still name) and each pod's `generateName` (a
/// ReplicaSet no Deployment owns names its pods `<name>-abcde`).
fn generated_prefixes(items: &[&Value]) -> Vec<String> {
    let mut prefixes: Vec<String> = items
        .iter()
        .filter_map(|i| match i["kind"].as_str() {
            Some("ReplicaSet") => i["metadata"]["name"].as_str().map(|n| format!("{n}-")),
            Some("Pod") => i["metadata"]["generateName"].as_str().map(str::to_string),
            // A ReplicaSet deleted since still names its pods in its events.
            Some("Event") if i["involvedObject"]["kind"] == "ReplicaSet" => {
                i["involvedObject"]["name"]
                    .as_str()
                    .map(|n| format!("{n}-"))
            }
            _ => None,
        })
        .filter(|p| p.len() > 1)
        .collect();
    prefixes.sort();
    prefixes.dedup();
    prefixes
}

/// Replaces every hash in every string (names, labels, selectors, messages), then the random
/// suffixes of generated names.
fn rename_strings(v: &mut Value, renames: &BTreeMap<String, String>, generated: &[String]) {
    match v {
        Value::String(s) => {
            for (hash, ordinal) in renames {
                if s.contains(hash.as_str()) {
                    *s = s.replace(hash.as_str(), ordinal);
                }
            }
            *s = mask_suffixes(s, generated);
        }
        Value::Array(a) => a
            .iter_mut()
            .for_each(|x| rename_strings(x, renames, generated)),
        Value::Object(o) => {
            let old = std::mem::take(o);
            for (k, mut x) in old {
                rename_strings(&mut x, renames, generated);
                let mut key = k;
                for (hash, ordinal) in renames {
                    if key.contains(hash.as_str()) {
                        key = key.replace(hash.as_str(), ordinal);
                    }
                }
                o.insert(key, x);
            }
        }
        _ => {}
    }
}

/// `}-abcde` (after a renamed ReplicaSet) and `kube-api-access-abcde`: the 5 random characters
/// of a generated name become `*`.
pub fn mask_suffixes(s: &str, generated: &[String]) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    loop {
        let found = ["}-", "kube-api-access-"]
            .into_iter()
            .chain(generated.iter().map(String::as_str))
            .filter_map(|m| rest.find(m).map(|i| (i, m.len())))
            .min_by_key(|(i, len)| (*i, std::cmp::Reverse(*len)));
        let Some((i, len)) = found else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..i + len]);
        rest = &rest[i + len..];
        let suffix: String = rest.chars().take(5).collect();
        let random = suffix.len() == 5
            && suffix
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit())
            && !rest[5..]
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphanumeric());
        if random {
            out.push('*');
            rest = &rest[5..];
        }
    }
}

const RANDOM_METADATA: &[&str] = &[
    "uid",
    "resourceVersion",
    "creationTimestamp",
    "managedFields",
    "selfLink",
];

/// Drops what every object has at random: identity, versions, times.
fn strip_object(v: &mut Value) {
    if let Some(meta) = v["metadata"].as_object_mut() {
        for k in RANDOM_METADATA {
            meta.remove(*k);
        }
        if meta.remove("deletionTimestamp").is_some() {
            meta.insert("deletionTimestamp".into(), Value::from("<set>"));
        }
        if let Some(refs) = meta
            .get_mut("ownerReferences")
            .and_then(Value::as_array_mut)
        {
            for r in refs {
                if let Some(r) = r.as_object_mut() {
                    r.remove("uid");
                }
            }
        }
    }
    if let Some(conditions) = v["status"]["conditions"].as_array_mut() {
        for c in conditions {
            if let Some(c) = c.as_object_mut() {
                c.remove("lastUpdateTime");
                c.remove("lastTransitionTime");
                c.remove("lastProbeTime");
            }
        }
    }
}

/// A pod: what the ReplicaSet controller wrote (metadata, spec) and its phase; not what the
/// node simulation decided.
fn strip_pod(v: &mut Value) {
    if let Some(spec) = v["spec"].as_object_mut() {
        spec.remove("nodeName");
    }
    let phase = v["status"]["phase"].clone();
    let mut status = Map::new();
    status.insert("phase".into(), phase);
    v["status"] = Value::Object(status);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn masks_generated_suffixes_only() {
        let none: &[String] = &[];
        let cases = [
            ("{web#1}-x7k2q", none, "{web#1}-*"),
            ("Created pod: {web#2}-ab12c", none, "Created pod: {web#2}-*"),
            ("kube-api-access-9zz8q", none, "kube-api-access-*"),
            ("{web#1}-abcdef", none, "{web#1}-abcdef"),
            ("{web#1}-AB12c", none, "{web#1}-AB12c"),
            ("{web#1} to 3", none, "{web#1} to 3"),
            // Pods of a ReplicaSet no Deployment owns.
            ("rs-x7k2q", &["rs-".to_string()], "rs-*"),
            (
                "Deleted pod: rs-x7k2q",
                &["rs-".to_string()],
                "Deleted pod: rs-*",
            ),
            ("it-rs-adoption", &["rs-".to_string()], "it-rs-adoption"),
            ("rs-x7k2q", none, "rs-x7k2q"),
            // The longest prefix at a position wins.
            (
                "rs-ab-x7k2q",
                &["rs-".to_string(), "rs-ab-".to_string()],
                "rs-ab-*",
            ),
        ];
        for (s, generated, want) in cases {
            assert_eq!(mask_suffixes(s, generated), want, "{s} {generated:?}");
        }
    }

    #[test]
    fn standalone_replica_set_pods_compare_equal() {
        let list = |suffix: &str| {
            json!({"items": [
                {"kind": "ReplicaSet", "metadata": {"name": "rs", "labels": {"app": "x"}}},
                {"kind": "Pod", "metadata": {"name": format!("rs-{suffix}"), "generateName": "rs-",
                 "labels": {"app": "x"}}},
                {"kind": "Event", "type": "Normal", "reason": "SuccessfulCreate",
                 "involvedObject": {"kind": "ReplicaSet", "name": "rs"},
                 "message": format!("Created pod: rs-{suffix}"), "count": 1},
            ]})
        };
        assert_eq!(snapshot(&list("x7k2q"), &[]), snapshot(&list("p9q8r"), &[]));
        // The ReplicaSet and its pods are gone; its events remain.
        let events_only = |suffix: &str| {
            json!({"items": [
                {"kind": "Event", "type": "Normal", "reason": "SuccessfulCreate",
                 "involvedObject": {"kind": "ReplicaSet", "name": "rs"},
                 "message": format!("Created pod: rs-{suffix}"), "count": 1},
            ]})
        };
        assert_eq!(
            snapshot(&events_only("x7k2q"), &[]),
            snapshot(&events_only("p9q8r"), &[])
        );
    }

    fn rs(name: &str, hash: &str, created: &str, replicas: i64) -> Value {
        json!({"kind": "ReplicaSet", "metadata": {"name": name, "uid": "u", "resourceVersion": "9",
               "creationTimestamp": created, "labels": {"pod-template-hash": hash},
               "ownerReferences": [{"kind": "Deployment", "name": "web", "uid": "d"}]},
               "spec": {"replicas": replicas}})
    }

    #[test]
    fn replica_sets_are_named_by_creation_order_and_hashes_kept_apart() {
        let a = snapshot(
            &json!({"items": [
                rs("web-aaaa", "aaaa", "2026-01-01T00:00:02Z", 0),
                rs("web-bbbb", "bbbb", "2026-01-01T00:00:01Z", 3),
                {"kind": "Pod", "metadata": {"name": "web-bbbb-q2w3e", "uid": "p",
                  "labels": {"pod-template-hash": "bbbb"}},
                 "spec": {"nodeName": "node-1"}, "status": {"phase": "Running", "podIP": "1.2.3.4"}},
                {"kind": "Event", "type": "Normal", "reason": "ScalingReplicaSet", "count": 2,
                 "involvedObject": {"kind": "Deployment", "name": "web"},
                 "message": "Scaled up replica set web-bbbb from 0 to 3"}
            ]}),
            &[],
        );
        let b = snapshot(
            &json!({"items": [
                rs("web-cccc", "cccc", "2026-01-01T00:00:09Z", 3),
                rs("web-dddd", "dddd", "2026-01-01T00:00:10Z", 0),
                {"kind": "Pod", "metadata": {"name": "web-cccc-zzzzz", "uid": "q",
                  "labels": {"pod-template-hash": "cccc"}},
                 "spec": {"nodeName": "node-3"}, "status": {"phase": "Running"}},
                {"kind": "Event", "type": "Normal", "reason": "ScalingReplicaSet", "count": 2,
                 "involvedObject": {"kind": "Deployment", "name": "web"},
                 "message": "Scaled up replica set web-cccc from 0 to 3"}
            ]}),
            &[],
        );
        assert_eq!(a.objects, b.objects);
        assert_eq!(a.pods, b.pods);
        assert_eq!(a.events, b.events);
        assert_ne!(a.hashes, b.hashes);
        assert!(a.objects.contains_key("ReplicaSet/web-{web#1}"));
        assert_eq!(a.hashes["{web#1}"], "bbbb");
        let c = snapshot(
            &json!({"items": [rs("web-cccc", "cccc", "2026-01-01T00:00:09Z", 2)]}),
            &[],
        );
        assert_ne!(b.objects, c.objects, "spec.replicas is compared");
        // A ReplicaSet known from the audit log only (deleted since) still renames events.
        let gone = snapshot(
            &json!({"items": [{"kind": "Event", "type": "Normal", "reason": "ScalingReplicaSet",
                "involvedObject": {"kind": "Deployment", "name": "web"},
                "message": "Scaled down replica set web-eeee from 1 to 0"}]}),
            &[("web".to_string(), "eeee".to_string())],
        );
        assert!(
            gone.events
                .keys()
                .any(|k| k.ends_with("web-{web#1} from 1 to 0"))
        );
        assert_ne!(b.objects, c.objects, "spec.replicas is compared");
        // An aggregated event counts as the event it aggregates.
        let combined = snapshot(
            &json!({"items": [{"kind": "Event", "type": "Normal", "reason": "ScalingReplicaSet",
                "count": 2, "involvedObject": {"kind": "Deployment", "name": "web"},
                "message": "(combined from similar events): Scaled up replica set web-x from 0 to 1"},
               {"kind": "Event", "type": "Normal", "reason": "ScalingReplicaSet",
                "involvedObject": {"kind": "Deployment", "name": "web"},
                "message": "Scaled up replica set web-x from 0 to 1"}]}),
            &[],
        );
        assert_eq!(combined.events.values().copied().collect::<Vec<_>>(), [3]);
    }
}
