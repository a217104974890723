//! Validation (upstream `apps/validation`, `core/validation`,
//! `apimachinery/pkg/api/validation`): object metadata and the kind-specific rules, with
//! upstream's field paths, error types and texts.

mod apps;
mod config;
mod core;
pub mod formats;
mod object_meta;
mod selector;
mod service;
mod workloads;

use serde_json::Value;

use crate::registry::StorageId;
use crate::registry::api_status::FieldError;
use crate::registry::custom::crd_validation::validate_crd;
use object_meta::object_meta;

/// Validate an object about to be stored. `old` is the stored object on updates; `sub` the
/// subresource being written.
pub fn validate(
    id: StorageId,
    obj: &Value,
    old: Option<&Value>,
    sub: Option<&str>,
) -> Vec<FieldError> {
    let mut errs = Vec::new();
    object_meta(id, obj, old, &mut errs);
    match (id, sub) {
        (StorageId::DEPLOYMENTS | StorageId::REPLICASETS, None) => {
            apps::workload(id, obj, old, &mut errs)
        }
        (StorageId::DEPLOYMENTS | StorageId::REPLICASETS, Some("status")) => {
            apps::workload_status(id, obj, old, &mut errs)
        }
        (StorageId::PODS, None) => {
            if let Some(spec) = obj.get("spec") {
                core::pod_spec(spec, "spec", &mut errs);
            }
            if let Some(old) = old {
                core::pod_update(obj, old, &mut errs);
            }
        }
        (StorageId::EVENTS, _) => core::event(obj, &mut errs),
        (StorageId::LEASES, _) => core::lease(obj, &mut errs),
        (StorageId::CUSTOMRESOURCEDEFINITIONS, sub) => {
            errs.extend(validate_crd(obj, old, sub == Some("status")));
        }
        (StorageId::CONFIGMAPS, _) => config::config_map(obj, old, &mut errs),
        (StorageId::SECRETS, _) => config::secret(obj, old, &mut errs),
        (StorageId::SERVICES, None) => service::service(obj, &mut errs),
        (
            StorageId::STATEFULSETS
            | StorageId::DAEMONSETS
            | StorageId::JOBS
            | StorageId::CRONJOBS
            | StorageId::REPLICATIONCONTROLLERS,
            None,
        ) => workloads::workload(id, obj, old, &mut errs),
        _ => {}
    }
    errs
}

#[cfg(test)]
mod tests {
    use super::*;
    use formats::dns1123_label;
    use serde_json::json;

    fn deploy(spec: Value) -> Value {
        json!({"metadata": {"name": "web"}, "spec": spec})
    }

    fn base_spec() -> Value {
        json!({"replicas": 1, "selector": {"matchLabels": {"app": "web"}}, "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}}, "progressDeadlineSeconds": 600, "revisionHistoryLimit": 10,
               "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"restartPolicy": "Always", "containers": [{"name": "web", "image": "nginx", "imagePullPolicy": "Always"}]}}})
    }

    fn fields(errs: &[FieldError]) -> Vec<String> {
        errs.iter()
            .map(|e| format!("{}|{:?}", e.field, e.kind))
            .collect()
    }

    #[test]
    fn valid_deployment_passes() {
        assert!(validate(StorageId::DEPLOYMENTS, &deploy(base_spec()), None, None).is_empty());
    }

    #[test]
    fn deployment_rules_table() {
        // (mutation, expected field|type, detail substring) — after upstream TestValidateDeployment
        let cases: Vec<(Value, &str, &str)> = vec![
            (
                json!({"template": {"metadata": {"labels": {"app": "other"}}, "spec": {"restartPolicy": "Always", "containers": [{"name": "web", "image": "nginx"}]}}}),
                "spec.template.metadata.labels|Invalid",
                "`selector` does not match template `labels`",
            ),
            (
                json!({"replicas": -1}),
                "spec.replicas|Invalid",
                "must be greater than or equal to 0",
            ),
            (
                json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0, "maxUnavailable": 0}}}),
                "spec.strategy.rollingUpdate.maxUnavailable|Invalid",
                "may not be 0 when `maxSurge` is 0",
            ),
            (
                json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "0%", "maxUnavailable": "0%"}}}),
                "spec.strategy.rollingUpdate.maxUnavailable|Invalid",
                "may not be 0",
            ),
            (
                json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": "110%"}}}),
                "spec.strategy.rollingUpdate.maxUnavailable|Invalid",
                "must not be greater than 100%",
            ),
            (
                json!({"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "x", "maxUnavailable": 1}}}),
                "spec.strategy.rollingUpdate.maxSurge|Invalid",
                "a valid percent string",
            ),
            (
                json!({"strategy": {"type": "Recreate", "rollingUpdate": {"maxSurge": 1}}}),
                "spec.strategy.rollingUpdate|Forbidden",
                "may not be specified when strategy `type` is 'Recreate'",
            ),
            (
                json!({"minReadySeconds": 10, "progressDeadlineSeconds": 5}),
                "spec.progressDeadlineSeconds|Invalid",
                "must be greater than minReadySeconds",
            ),
            (
                json!({"revisionHistoryLimit": -1}),
                "spec.revisionHistoryLimit|Invalid",
                "must be greater than or equal to 0",
            ),
            (
                json!({"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"restartPolicy": "Never", "containers": [{"name": "web", "image": "nginx"}]}}}),
                "spec.template.spec.restartPolicy|NotSupported",
                "supported values: \"Always\"",
            ),
            (
                json!({"template": {"metadata": {"labels": {"app": "web"}}, "spec": {"activeDeadlineSeconds": 5, "containers": [{"name": "web", "image": "nginx"}]}}}),
                "spec.template.spec.activeDeadlineSeconds|Forbidden",
                "activeDeadlineSeconds in ReplicaSet is not Supported",
            ),
            (
                json!({"selector": {"matchLabels": null}}),
                "spec.selector|Invalid",
                "empty selector is invalid for deployment",
            ),
        ];
        for (patch, want, detail) in cases {
            let mut spec = base_spec();
            json_patch::merge(&mut spec, &patch);
            let errs = validate(StorageId::DEPLOYMENTS, &deploy(spec), None, None);
            let f = fields(&errs);
            let hit = errs.iter().zip(&f).find(|(_, f)| f.as_str() == want);
            let (e, _) = hit.unwrap_or_else(|| panic!("{patch}: want {want}, got {f:?}"));
            assert!(e.body().contains(detail), "{patch}: {}", e.body());
        }
    }

    #[test]
    fn missing_selector_gives_two_causes() {
        let mut spec = base_spec();
        spec.as_object_mut().map(|o| o.remove("selector"));
        let errs = validate(StorageId::DEPLOYMENTS, &deploy(spec), None, None);
        assert_eq!(
            fields(&errs),
            vec![
                "spec.selector|Required",
                "spec.template.metadata.labels|Invalid"
            ]
        );
    }

    #[test]
    fn names_and_immutable_selector() {
        let mut d = deploy(base_spec());
        d["metadata"]["name"] = json!("Web_1");
        let errs = validate(StorageId::DEPLOYMENTS, &d, None, None);
        assert!(
            errs[0]
                .body()
                .starts_with("Invalid value: \"Web_1\": a lowercase RFC 1123 subdomain")
        );
        let old = deploy(base_spec());
        let mut new = deploy(base_spec());
        new["spec"]["selector"] = json!({"matchLabels": {"app": "web", "x": "y"}});
        new["spec"]["template"]["metadata"]["labels"]["x"] = json!("y");
        let errs = validate(StorageId::DEPLOYMENTS, &new, Some(&old), None);
        assert_eq!(fields(&errs), vec!["spec.selector|Invalid"]);
        assert!(errs[0].body().ends_with("field is immutable"));
        assert!(dns1123_label("a.b").len() == 1);
        assert!(dns1123_label(&"a".repeat(64)).len() == 1);
    }

    #[test]
    fn finalizers_cannot_be_added_while_deleting() {
        let old = json!({"metadata": {"name": "x", "deletionTimestamp": "2025-01-01T00:00:00Z", "finalizers": ["example.com/x"]}});
        let new = json!({"metadata": {"name": "x", "deletionTimestamp": "2025-01-01T00:00:00Z", "finalizers": ["example.com/x", "example.com/y"]}});
        let errs = validate(StorageId::LEASES, &new, Some(&old), None);
        assert_eq!(errs.len(), 1);
        assert_eq!(
            errs[0].text(),
            "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers []string{\"example.com/y\"}"
        );
    }

    #[test]
    fn status_rules() {
        let d = json!({"metadata": {"name": "x"}, "status": {"replicas": 1, "updatedReplicas": 2, "readyReplicas": 1, "availableReplicas": 1}});
        let errs = validate(StorageId::DEPLOYMENTS, &d, None, Some("status"));
        assert_eq!(fields(&errs), vec!["status.updatedReplicas|Invalid"]);
        let old = json!({"status": {"collisionCount": 2}});
        let d = json!({"metadata": {"name": "x"}, "status": {"collisionCount": 1}});
        let errs = validate(StorageId::DEPLOYMENTS, &d, Some(&old), Some("status"));
        assert!(errs[0].body().contains("cannot be decremented"));
    }

    #[test]
    fn events_namespace_rule() {
        let e = json!({"metadata": {"name": "e", "namespace": "t1"}, "involvedObject": {"namespace": "other"}});
        let errs = validate(StorageId::EVENTS, &e, None, None);
        assert_eq!(fields(&errs), vec!["involvedObject.namespace|Invalid"]);
        let ok = json!({"metadata": {"name": "e", "namespace": "default"}, "involvedObject": {"kind": "Node"}});
        assert!(validate(StorageId::EVENTS, &ok, None, None).is_empty());
    }

    #[test]
    fn pod_update_forbidden_fields() {
        let old = json!({"metadata": {"name": "p"}, "spec": {"containers": [{"name": "a", "image": "x"}], "nodeName": ""}});
        let mut ok = old.clone();
        ok["spec"]["containers"][0]["image"] = json!("y");
        assert!(validate(StorageId::PODS, &ok, Some(&old), None).is_empty());
        let mut bad = old.clone();
        bad["spec"]["nodeName"] = json!("n1");
        assert_eq!(
            fields(&validate(StorageId::PODS, &bad, Some(&old), None)),
            vec!["spec|Forbidden"]
        );
    }
}
