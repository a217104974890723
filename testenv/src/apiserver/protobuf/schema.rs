//! Field tables for the Kubernetes messages the decoder understands.
//!
//! Every field number comes from upstream `generated.proto` files
//! (`k8s.io/api/{apps,core,coordination}/v1`, `k8s.io/apimachinery/pkg/apis/meta/v1`,
//! `pkg/util/intstr`, `pkg/api/resource`, `pkg/runtime`); JSON names are the Go `json` tags.

mod field;
mod msg;
mod tables;

pub use field::{Field, Kind};
pub use msg::Msg;

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: &[Msg] = &[
        Msg::Deployment,
        Msg::ReplicaSet,
        Msg::Namespace,
        Msg::Pod,
        Msg::Event,
        Msg::Lease,
    ];

    fn walk(msg: Msg, seen: &mut Vec<Msg>) {
        if seen.contains(&msg) {
            return;
        }
        seen.push(msg);
        for f in msg.fields() {
            if let Kind::Message(m) | Kind::Inline(m) = f.kind {
                walk(m, seen);
            }
        }
    }

    #[test]
    fn field_numbers_and_json_names_are_unique_per_message() {
        let mut seen = Vec::new();
        for m in ALL {
            walk(*m, &mut seen);
        }
        assert!(seen.len() > 30, "only {} messages reachable", seen.len());
        for m in seen {
            let fields = m.fields();
            for (i, a) in fields.iter().enumerate() {
                for b in &fields[i + 1..] {
                    assert_ne!(a.number, b.number, "{} reuses a field number", m.name());
                    assert_ne!(a.json, b.json, "{} reuses a JSON name", m.name());
                }
            }
        }
    }

    #[test]
    fn upstream_field_numbers_spot_check() {
        // (message, field number, JSON name) from the upstream generated.proto files.
        let cases = [
            (Msg::ObjectMeta, 1, "name"),
            (Msg::ObjectMeta, 8, "creationTimestamp"),
            (Msg::ObjectMeta, 11, "labels"),
            (Msg::ObjectMeta, 13, "ownerReferences"),
            (Msg::ObjectMeta, 14, "finalizers"),
            (Msg::OwnerReference, 5, "apiVersion"),
            (Msg::OwnerReference, 1, "kind"),
            (Msg::DeploymentSpec, 1, "replicas"),
            (Msg::DeploymentSpec, 3, "template"),
            (Msg::DeploymentSpec, 9, "progressDeadlineSeconds"),
            (Msg::DeploymentCondition, 6, "lastUpdateTime"),
            (Msg::ReplicaSetSpec, 4, "minReadySeconds"),
            (Msg::PodSpec, 2, "containers"),
            (Msg::PodSpec, 20, "initContainers"),
            (Msg::PodSpec, 22, "tolerations"),
            (Msg::Container, 2, "image"),
            (Msg::Container, 6, "ports"),
            (Msg::Container, 14, "imagePullPolicy"),
            (Msg::LeaseSpec, 1, "holderIdentity"),
        ];
        for (msg, number, json) in cases {
            assert_eq!(
                msg.field(number).map(|f| f.json),
                Some(json),
                "{}.{number}",
                msg.name()
            );
        }
    }

    #[test]
    fn top_level_kinds() {
        assert_eq!(
            Msg::for_kind("apps/v1", "Deployment"),
            Some(Msg::Deployment)
        );
        assert_eq!(Msg::for_kind("v1", "Namespace"), Some(Msg::Namespace));
        assert_eq!(Msg::for_kind("apps/v1beta1", "Deployment"), None);
    }
}
