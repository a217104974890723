//! The defaulting functions of the remaining groups: networking.k8s.io/v1, rbac/v1,
//! storage.k8s.io/v1, scheduling.k8s.io/v1, discovery.k8s.io/v1, admissionregistration/v1 and
//! flowcontrol/v1 (each `pkg/apis/<group>/v1/defaults.go`), with v1.37's feature gates at their
//! defaults.

use serde_json::{Map, Value, json};

use super::{Defaulter, default, default_int, default_str, obj_entry, str_of};

/// The function of a type of these groups.
pub(super) fn defaulter(group_version: &str, ty: &str) -> Option<Defaulter> {
    Some(match (group_version, ty) {
        ("networking.v1", "NetworkPolicyPort") => network_policy_port,
        ("networking.v1", "NetworkPolicy") => network_policy,
        ("networking.v1", "IngressClass") => ingress_class,
        ("rbac.v1", "ClusterRoleBinding" | "RoleBinding") => role_binding,
        ("rbac.v1", "Subject") => subject,
        ("scheduling.v1", "PriorityClass") => priority_class,
        ("storage.v1", "StorageClass") => storage_class,
        ("storage.v1", "CSIDriver") => csi_driver,
        ("discovery.v1", "EndpointPort") => endpoint_port,
        ("admissionregistration.v1", "ValidatingWebhook") => validating_webhook,
        ("admissionregistration.v1", "MutatingWebhook") => mutating_webhook,
        ("admissionregistration.v1", "Rule" | "RuleWithOperations" | "NamedRuleWithOperations") => {
            rule
        }
        ("admissionregistration.v1", "ServiceReference") => service_reference,
        (
            "admissionregistration.v1",
            "ValidatingAdmissionPolicySpec" | "MutatingAdmissionPolicySpec",
        ) => admission_policy_spec,
        ("admissionregistration.v1", "MatchResources") => match_resources,
        ("flowcontrol.v1", "FlowSchemaSpec") => flow_schema_spec,
        ("flowcontrol.v1", "ExemptPriorityLevelConfiguration") => exempt_priority_level,
        ("flowcontrol.v1", "LimitedPriorityLevelConfiguration") => limited_priority_level,
        ("flowcontrol.v1", "QueuingConfiguration") => queuing,
        _ => return None,
    })
}

fn network_policy_port(o: &mut Map<String, Value>) {
    default(o, "protocol", json!("TCP"));
}

/// Without policy types: Ingress, and Egress when egress rules are given.
fn network_policy(o: &mut Map<String, Value>) {
    let spec = obj_entry(o, "spec");
    if spec
        .get("policyTypes")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        let egress = spec
            .get("egress")
            .and_then(Value::as_array)
            .is_some_and(|e| !e.is_empty());
        let types = if egress {
            json!(["Ingress", "Egress"])
        } else {
            json!(["Ingress"])
        };
        spec.insert("policyTypes".into(), types);
    }
}

fn ingress_class(o: &mut Map<String, Value>) {
    if let Some(p) = o
        .get_mut("spec")
        .and_then(|s| s.get_mut("parameters"))
        .and_then(Value::as_object_mut)
    {
        default(p, "scope", json!("Cluster"));
    }
}

fn role_binding(o: &mut Map<String, Value>) {
    default_str(
        obj_entry(o, "roleRef"),
        "apiGroup",
        "rbac.authorization.k8s.io",
    );
}

fn subject(o: &mut Map<String, Value>) {
    if !str_of(o, "apiGroup").is_empty() {
        return;
    }
    match str_of(o, "kind") {
        "User" | "Group" => {
            o.insert("apiGroup".into(), json!("rbac.authorization.k8s.io"));
        }
        _ => {}
    }
}

fn priority_class(o: &mut Map<String, Value>) {
    default(o, "preemptionPolicy", json!("PreemptLowerPriority"));
}

fn storage_class(o: &mut Map<String, Value>) {
    default(o, "reclaimPolicy", json!("Delete"));
    default(o, "volumeBindingMode", json!("Immediate"));
}

fn csi_driver(o: &mut Map<String, Value>) {
    let spec = obj_entry(o, "spec");
    default(spec, "attachRequired", json!(true));
    default(spec, "podInfoOnMount", json!(false));
    default(spec, "storageCapacity", json!(false));
    default(spec, "fsGroupPolicy", json!("ReadWriteOnceWithFSType"));
    if spec
        .get("volumeLifecycleModes")
        .and_then(Value::as_array)
        .is_none_or(Vec::is_empty)
    {
        spec.insert("volumeLifecycleModes".into(), json!(["Persistent"]));
    }
    default(spec, "requiresRepublish", json!(false));
    default(spec, "seLinuxMount", json!(false));
    default(spec, "preventPodSchedulingIfMissing", json!(false));
}

fn endpoint_port(o: &mut Map<String, Value>) {
    default(o, "name", json!(""));
    default(o, "protocol", json!("TCP"));
}

fn webhook(o: &mut Map<String, Value>) {
    default(o, "failurePolicy", json!("Fail"));
    default(o, "matchPolicy", json!("Equivalent"));
    default(o, "namespaceSelector", json!({}));
    default(o, "objectSelector", json!({}));
    default(o, "timeoutSeconds", json!(10));
}

fn validating_webhook(o: &mut Map<String, Value>) {
    webhook(o);
}

fn mutating_webhook(o: &mut Map<String, Value>) {
    webhook(o);
    default(o, "reinvocationPolicy", json!("Never"));
}

fn rule(o: &mut Map<String, Value>) {
    default(o, "scope", json!("*"));
}

fn service_reference(o: &mut Map<String, Value>) {
    default(o, "port", json!(443));
}

fn admission_policy_spec(o: &mut Map<String, Value>) {
    default(o, "failurePolicy", json!("Fail"));
}

fn match_resources(o: &mut Map<String, Value>) {
    default(o, "matchPolicy", json!("Equivalent"));
    default(o, "namespaceSelector", json!({}));
    default(o, "objectSelector", json!({}));
}

fn flow_schema_spec(o: &mut Map<String, Value>) {
    default_int(o, "matchingPrecedence", 1000);
}

fn exempt_priority_level(o: &mut Map<String, Value>) {
    default(o, "nominalConcurrencyShares", json!(0));
    default(o, "lendablePercent", json!(0));
}

fn limited_priority_level(o: &mut Map<String, Value>) {
    default(o, "nominalConcurrencyShares", json!(30));
    default(o, "lendablePercent", json!(0));
}

fn queuing(o: &mut Map<String, Value>) {
    default_int(o, "handSize", 8);
    default_int(o, "queues", 64);
    default_int(o, "queueLengthLimit", 50);
}
