//! The strategies of the built-in kinds without special code: what each kind's
//! `pkg/registry/<group>/<kind>/strategy.go` does in `PrepareForCreate` and `PrepareForUpdate`
//! that a client sees — the status a create may not set, status separation between the main
//! resource and its `status` subresource, `metadata.generation`, and the few kinds that fill
//! fields in (a Job's selector, a DaemonSet's template generation).

use serde_json::{Map, Value, json};

use super::meta::{self, at, meta_mut, semantic_eq};
use super::resources::{StorageId, for_storage};

/// What moves `metadata.generation`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Generation {
    /// Not tracked.
    None,
    /// 1 on create, never moved (PriorityClass).
    CreateOnly,
    /// 1 on create, +1 when this top-level field changes (`spec`, a webhook configuration's
    /// `webhooks`, a PodTemplate's `template`).
    Field(&'static str),
    /// 1 on create, +1 when anything but the metadata changes, or the labels (EndpointSlice).
    AllButMetadata,
}

fn generation(id: StorageId) -> Generation {
    match id {
        StorageId::MUTATINGWEBHOOKCONFIGURATIONS | StorageId::VALIDATINGWEBHOOKCONFIGURATIONS => {
            Generation::Field("webhooks")
        }
        StorageId::PODTEMPLATES => Generation::Field("template"),
        StorageId::ENDPOINTSLICES => Generation::AllButMetadata,
        StorageId::PRIORITYCLASSES => Generation::CreateOnly,
        StorageId::MUTATINGADMISSIONPOLICIES
        | StorageId::MUTATINGADMISSIONPOLICYBINDINGS
        | StorageId::VALIDATINGADMISSIONPOLICIES
        | StorageId::VALIDATINGADMISSIONPOLICYBINDINGS
        | StorageId::DAEMONSETS
        | StorageId::STATEFULSETS
        | StorageId::HORIZONTALPODAUTOSCALERS
        | StorageId::CRONJOBS
        | StorageId::JOBS
        | StorageId::REPLICATIONCONTROLLERS
        | StorageId::FLOWSCHEMAS
        | StorageId::PRIORITYLEVELCONFIGURATIONS
        | StorageId::INGRESSES
        | StorageId::INGRESSCLASSES
        | StorageId::NETWORKPOLICIES
        | StorageId::PODDISRUPTIONBUDGETS
        | StorageId::DEVICECLASSES
        | StorageId::DEVICETAINTRULES
        | StorageId::RESOURCESLICES => Generation::Field("spec"),
        _ => Generation::None,
    }
}

/// Whether the kind has a `status` subresource (its status is written there only).
fn has_status(id: StorageId) -> bool {
    for_storage(id).has_subresource("status")
}

/// The user every request is made as (kcm-testenv authenticates nobody), written into a
/// CertificateSigningRequest's spec as upstream writes the requesting user.
pub const REQUEST_USER: &str = "system:anonymous";
/// Its groups.
pub const REQUEST_GROUPS: &[&str] = &["system:unauthenticated"];

/// The DaemonSet annotation that carries upstream's internal `spec.templateGeneration`.
const TEMPLATE_GENERATION: &str = "deprecated.daemonset.template.generation";

/// `PrepareForCreate`: the status reset, generation 1, and kind-specific fields.
pub fn prepare_for_create(id: StorageId, obj: &mut Value) {
    if has_status(id)
        && let Some(o) = obj.as_object_mut()
    {
        o.insert("status".into(), json!({}));
    }
    if generation(id) != Generation::None {
        meta_mut(obj).insert("generation".into(), json!(1));
    } else {
        meta_mut(obj).remove("generation");
    }
    match id {
        StorageId::JOBS => generate_job_selector(obj),
        StorageId::CERTIFICATESIGNINGREQUESTS => {
            // the requesting user (kcm-testenv's only one: unauthenticated)
            if let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) {
                spec.insert("username".into(), json!(REQUEST_USER));
                spec.insert("groups".into(), json!(REQUEST_GROUPS));
                spec.remove("uid");
                spec.remove("extra");
            }
        }
        StorageId::DAEMONSETS => {
            let ann = annotations(obj);
            let current = ann
                .get(TEMPLATE_GENERATION)
                .and_then(Value::as_str)
                .and_then(|s| s.parse::<i64>().ok())
                .unwrap_or(0);
            if current < 1 {
                ann.insert(TEMPLATE_GENERATION.into(), json!("1"));
            }
        }
        _ => {}
    }
}

/// `PrepareForUpdate` of the main resource (`sub` `None`) or its `status`.
pub fn prepare_for_update(id: StorageId, sub: Option<&str>, old: &Value, new: &mut Value) {
    if sub == Some("approval") {
        // certificatesigningrequests/approval: the conditions only
        let conditions = at(new, &["status", "conditions"]).cloned();
        let mut merged = old.clone();
        merged["metadata"] = new.get("metadata").cloned().unwrap_or(json!({}));
        let status = &mut merged["status"];
        if !status.is_object() {
            *status = json!({});
        }
        match conditions {
            Some(c) => status["conditions"] = c,
            None => {
                if let Some(s) = status.as_object_mut() {
                    s.remove("conditions");
                }
            }
        }
        *new = merged;
        return;
    }
    if sub == Some("status") {
        // a status update changes the status only (upstream: `newObj.Spec = oldObj.Spec`)
        let keep: Vec<(String, Value)> = old
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(k, _)| !matches!(k.as_str(), "status" | "metadata" | "apiVersion" | "kind"))
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        if let Some(o) = new.as_object_mut() {
            o.retain(|k, _| matches!(k.as_str(), "status" | "metadata" | "apiVersion" | "kind"));
            o.extend(keep);
        }
        return;
    }
    if has_status(id)
        && let Some(o) = new.as_object_mut()
    {
        match old.get("status") {
            Some(s) => o.insert("status".into(), s.clone()),
            None => o.remove("status"),
        };
    }
    // a CSR's request is fixed at creation
    if id == StorageId::CERTIFICATESIGNINGREQUESTS
        && let Some(o) = new.as_object_mut()
    {
        match old.get("spec") {
            Some(s) => o.insert("spec".into(), s.clone()),
            None => o.remove("spec"),
        };
    }
    if id == StorageId::DAEMONSETS {
        let old_gen = at(old, &["metadata", "annotations", TEMPLATE_GENERATION]).cloned();
        let template_changed = !semantic_eq(
            at(old, &["spec", "template"]),
            at(new, &["spec", "template"]),
        );
        let ann = annotations(new);
        match old_gen {
            Some(g) if template_changed => {
                let n = g.as_str().and_then(|s| s.parse::<i64>().ok()).unwrap_or(0);
                ann.insert(TEMPLATE_GENERATION.into(), json!((n + 1).to_string()));
            }
            Some(g) => {
                ann.insert(TEMPLATE_GENERATION.into(), g);
            }
            None => {
                ann.remove(TEMPLATE_GENERATION);
            }
        }
    }
    let changed = match generation(id) {
        Generation::None | Generation::CreateOnly => false,
        Generation::Field(f) => !semantic_eq(old.get(f), new.get(f)),
        Generation::AllButMetadata => {
            let strip = |v: &Value| {
                let mut v = v.clone();
                if let Some(o) = v.as_object_mut() {
                    o.remove("metadata");
                }
                v
            };
            strip(old) != strip(new)
                || !semantic_eq(
                    at(old, &["metadata", "labels"]),
                    at(new, &["metadata", "labels"]),
                )
        }
    };
    if changed {
        let g = meta::generation(old);
        meta_mut(new).insert("generation".into(), json!(g + 1));
    }
}

fn annotations(obj: &mut Value) -> &mut Map<String, Value> {
    let m = meta_mut(obj);
    let a = m
        .entry("annotations")
        .or_insert_with(|| Value::Object(Map::new()));
    if !a.is_object() {
        *a = Value::Object(Map::new());
    }
    match a {
        Value::Object(o) => o,
        _ => unreachable!("made an object above"),
    }
}

/// A Job without `manualSelector`: the template labelled with the job's name and uid, selected
/// by the uid (upstream `generateSelector`; conflicting labels a client set stay, for
/// validation to refuse).
fn generate_job_selector(obj: &mut Value) {
    let manual = at(obj, &["spec", "manualSelector"])
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if manual {
        return;
    }
    let name = meta::name_of(obj).to_string();
    let uid = meta::uid_of(obj).to_string();
    let Some(spec) = obj.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let template = object_at(spec, "template");
    let labels = object_at(object_at(template, "metadata"), "labels");
    for (k, v) in [
        ("job-name", &name),
        ("batch.kubernetes.io/job-name", &name),
        ("controller-uid", &uid),
        ("batch.kubernetes.io/controller-uid", &uid),
    ] {
        labels.entry(k).or_insert_with(|| json!(v));
    }
    let match_labels = object_at(object_at(spec, "selector"), "matchLabels");
    match_labels
        .entry("batch.kubernetes.io/controller-uid")
        .or_insert_with(|| json!(uid));
}

fn object_at<'a>(o: &'a mut Map<String, Value>, k: &str) -> &'a mut Map<String, Value> {
    let e = o.entry(k).or_insert_with(|| Value::Object(Map::new()));
    if !e.is_object() {
        *e = Value::Object(Map::new());
    }
    match e {
        Value::Object(m) => m,
        _ => unreachable!("made an object above"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn status_reset_and_generation_on_create() {
        let mut ss = json!({"metadata": {"name": "s", "generation": 7}, "spec": {"replicas": 2},
                            "status": {"replicas": 5}});
        prepare_for_create(StorageId::STATEFULSETS, &mut ss);
        assert_eq!(ss["status"], json!({}));
        assert_eq!(ss["metadata"]["generation"], 1);
        let mut cm = json!({"metadata": {"name": "c", "generation": 3}});
        prepare_for_create(StorageId::CONFIGMAPS, &mut cm);
        assert!(cm["metadata"].get("generation").is_none());
        assert!(cm.get("status").is_none());
    }

    #[test]
    fn status_separation_and_generation_on_update() {
        let old = json!({"metadata": {"name": "j", "generation": 1}, "spec": {"parallelism": 1},
                         "status": {"active": 1}});
        // the main resource: status kept, generation moves with the spec
        let mut new = json!({"metadata": {"name": "j", "generation": 1}, "spec": {"parallelism": 2},
                             "status": {"active": 9}});
        prepare_for_update(StorageId::JOBS, None, &old, &mut new);
        assert_eq!(new["status"], json!({"active": 1}));
        assert_eq!(new["metadata"]["generation"], 2);
        // the status: spec kept, generation not moved
        let mut new = json!({"metadata": {"name": "j", "generation": 1}, "spec": {"parallelism": 5},
                             "status": {"active": 2}});
        prepare_for_update(StorageId::JOBS, Some("status"), &old, &mut new);
        assert_eq!(new["spec"], json!({"parallelism": 1}));
        assert_eq!(new["status"], json!({"active": 2}));
        assert_eq!(new["metadata"]["generation"], 1);
        // EndpointSlices: any change but the metadata's, or the labels
        let old = json!({"metadata": {"generation": 1, "labels": {"a": "b"}}, "endpoints": []});
        let mut new = json!({"metadata": {"generation": 1, "labels": {"a": "c"}}, "endpoints": []});
        prepare_for_update(StorageId::ENDPOINTSLICES, None, &old, &mut new);
        assert_eq!(new["metadata"]["generation"], 2);
    }

    #[test]
    fn job_selector_generated_from_the_uid() {
        let mut job = json!({"metadata": {"name": "pi", "uid": "u-1"}, "spec": {"manualSelector": false,
            "template": {"metadata": {"labels": {"app": "pi"}}}}});
        prepare_for_create(StorageId::JOBS, &mut job);
        assert_eq!(
            job["spec"]["selector"],
            json!({"matchLabels": {"batch.kubernetes.io/controller-uid": "u-1"}})
        );
        assert_eq!(
            job["spec"]["template"]["metadata"]["labels"],
            json!({"app": "pi", "job-name": "pi", "batch.kubernetes.io/job-name": "pi",
                   "controller-uid": "u-1", "batch.kubernetes.io/controller-uid": "u-1"})
        );
        let mut manual = json!({"metadata": {"name": "m", "uid": "u"}, "spec": {"manualSelector": true,
            "selector": {"matchLabels": {"x": "y"}}}});
        prepare_for_create(StorageId::JOBS, &mut manual);
        assert_eq!(
            manual["spec"]["selector"],
            json!({"matchLabels": {"x": "y"}})
        );
    }

    #[test]
    fn daemonset_template_generation() {
        let mut ds = json!({"metadata": {"name": "d"}, "spec": {"template": {"spec": {"x": 1}}}});
        prepare_for_create(StorageId::DAEMONSETS, &mut ds);
        assert_eq!(ds["metadata"]["annotations"][TEMPLATE_GENERATION], "1");
        let mut new = ds.clone();
        new["spec"]["template"]["spec"]["x"] = json!(2);
        prepare_for_update(StorageId::DAEMONSETS, None, &ds, &mut new);
        assert_eq!(new["metadata"]["annotations"][TEMPLATE_GENERATION], "2");
        assert_eq!(new["metadata"]["generation"], 2);
    }
}
