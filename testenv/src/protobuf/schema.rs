//! Field tables for the Kubernetes messages the decoder understands.
//!
//! Every field number comes from upstream `generated.proto` files
//! (`k8s.io/api/{apps,core,coordination}/v1`, `k8s.io/apimachinery/pkg/apis/meta/v1`,
//! `pkg/util/intstr`, `pkg/api/resource`, `pkg/runtime`); JSON names are the Go `json` tags.

mod msg;
mod tables;

pub use msg::Msg;

/// How one field's payload is turned into JSON.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A UTF-8 string.
    String,
    /// Raw bytes, emitted base64-encoded like Go's `encoding/json` does for `[]byte`.
    Bytes,
    /// A varint read as a signed 32-bit number.
    Int32,
    /// A varint read as a signed 64-bit number.
    Int64,
    /// A varint read as a boolean.
    Bool,
    /// A nested message, emitted as a JSON object.
    Message(Msg),
    /// A nested message whose Go struct is embedded with `json:",inline"`: its fields
    /// are merged into the parent object.
    Inline(Msg),
    /// `map<string, string>`: repeated entries with key = 1, value = 2.
    MapString,
    /// `map<string, Quantity>`: repeated entries with key = 1, value = 2 (a `Quantity`).
    MapQuantity,
    /// `resource.Quantity`: `string = 1`, emitted as a JSON string.
    Quantity,
    /// `intstr.IntOrString`: `type = 1` (0 int, 1 string), `intVal = 2`, `strVal = 3`.
    IntOrString,
    /// `metav1.Time`: `seconds = 1`, `nanos = 2`, emitted as RFC 3339 with seconds precision.
    Time,
    /// `metav1.MicroTime`: like `Time`, emitted with six fractional digits.
    MicroTime,
    /// A message type this decoder has no table for (named here). Accepted only when empty.
    Unsupported(&'static str),
    /// A field that is deliberately dropped (only `ObjectMeta.managedFields`, which the
    /// server maintains itself and clients do not send on create).
    Skip,
}

/// One field of a message table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// The protobuf field number.
    pub number: u32,
    /// The JSON field name (the Go `json` tag).
    pub json: &'static str,
    /// How to decode the payload.
    pub kind: Kind,
    /// `repeated` in the proto: a JSON array.
    pub repeated: bool,
    /// The Go field is a pointer, so a present zero value (`0`, `false`, `""`) is
    /// meaningful and emitted. Value-typed Go fields are always encoded by the Go
    /// marshaller, so their zero values are omitted here like `omitempty` does.
    pub pointer: bool,
}

impl Field {
    const fn new(number: u32, json: &'static str, kind: Kind) -> Self {
        Field {
            number,
            json,
            kind,
            repeated: false,
            pointer: false,
        }
    }

    const fn repeated(mut self) -> Self {
        self.repeated = true;
        self
    }

    const fn pointer(mut self) -> Self {
        self.pointer = true;
        self
    }
}

impl Msg {
    /// The field with this number, if the table has it.
    pub fn field(self, number: u32) -> Option<&'static Field> {
        self.fields().iter().find(|f| f.number == number)
    }

    /// The top-level message for an object's `apiVersion` and `kind`.
    pub fn for_kind(api_version: &str, kind: &str) -> Option<Msg> {
        Some(match (api_version, kind) {
            ("apps/v1", "Deployment") => Msg::Deployment,
            ("apps/v1", "ReplicaSet") => Msg::ReplicaSet,
            ("v1", "Namespace") => Msg::Namespace,
            ("v1", "Pod") => Msg::Pod,
            ("v1", "Event") => Msg::Event,
            ("coordination.k8s.io/v1", "Lease") => Msg::Lease,
            _ => return None,
        })
    }
}

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
