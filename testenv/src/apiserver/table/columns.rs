//! Column definitions per kind (upstream printers' `TableColumnDefinition`s).

use serde_json::{Value, json};

use crate::registry::{ResourceInfo, StorageId};

fn col(name: &str, ty: &str, format: &str, priority: i32, description: &str) -> Value {
    json!({"name": name, "type": ty, "format": format, "description": description, "priority": priority})
}

const NAME_DESC: &str = "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";
const AGE_DESC: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

pub(super) fn columns(res: &ResourceInfo) -> Vec<Value> {
    let name = col("Name", "string", "name", 0, NAME_DESC);
    let age = col("Age", "string", "", 0, AGE_DESC);
    if let Some(c) = super::more_kinds::columns(res, &name, &age) {
        return c;
    }
    match res.storage {
        StorageId::CUSTOMRESOURCEDEFINITIONS => super::custom::crd_columns(NAME_DESC, AGE_DESC),
        _ if res.storage.is_custom() => match res.custom {
            Some(cv) => super::custom::custom_columns(cv, NAME_DESC),
            None => vec![name, age],
        },
        StorageId::DEPLOYMENTS => vec![
            name,
            col(
                "Ready",
                "string",
                "",
                0,
                "Number of the pod with ready state",
            ),
            col(
                "Up-to-date",
                "integer",
                "",
                0,
                "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
            ),
            col(
                "Available",
                "integer",
                "",
                0,
                "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
            ),
            age,
            col(
                "Containers",
                "string",
                "",
                1,
                "Names of each container in the template.",
            ),
            col(
                "Images",
                "string",
                "",
                1,
                "Images referenced by each container in the template.",
            ),
            col(
                "Selector",
                "string",
                "",
                1,
                "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
            ),
        ],
        StorageId::REPLICASETS => vec![
            name,
            col(
                "Desired",
                "integer",
                "",
                0,
                "Replicas is the number of desired replicas.",
            ),
            col(
                "Current",
                "integer",
                "",
                0,
                "Replicas is the most recently observed number of replicas.",
            ),
            col(
                "Ready",
                "integer",
                "",
                0,
                "The number of ready replicas for this replica set.",
            ),
            age,
            col(
                "Containers",
                "string",
                "",
                1,
                "Names of each container in the template.",
            ),
            col(
                "Images",
                "string",
                "",
                1,
                "Images referenced by each container in the template.",
            ),
            col(
                "Selector",
                "string",
                "",
                1,
                "Selector is a label query over pods that should match the replica count.",
            ),
        ],
        StorageId::PODS => vec![
            name,
            col(
                "Ready",
                "string",
                "",
                0,
                "The aggregate readiness state of this pod for accepting traffic.",
            ),
            col(
                "Status",
                "string",
                "",
                0,
                "The aggregate status of the containers in this pod.",
            ),
            col(
                "Restarts",
                "string",
                "",
                0,
                "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
            ),
            age,
            col(
                "IP",
                "string",
                "",
                1,
                "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
            ),
            col(
                "Node",
                "string",
                "",
                1,
                "NodeName is a request to schedule this pod onto a specific node.",
            ),
            col(
                "Nominated Node",
                "string",
                "",
                1,
                "nominatedNodeName is set only when this pod preempts other pods on the node.",
            ),
            col(
                "Readiness Gates",
                "string",
                "",
                1,
                "If specified, all readiness gates will be evaluated for pod readiness.",
            ),
        ],
        StorageId::NAMESPACES => vec![
            name,
            col("Status", "string", "", 0, "The status of the namespace"),
            age,
        ],
        StorageId::EVENTS => vec![
            col(
                "Last Seen",
                "string",
                "",
                0,
                "Time when this Event was last seen",
            ),
            col(
                "Type",
                "string",
                "",
                0,
                "Type of this event (Normal, Warning), new types could be added in the future.",
            ),
            col(
                "Reason",
                "string",
                "",
                0,
                "This should be a short, machine understandable string that gives the reason for this event being generated.",
            ),
            col(
                "Object",
                "string",
                "",
                0,
                "The object that this event is about.",
            ),
            col(
                "Subobject",
                "string",
                "",
                1,
                "The subobject that this event is about.",
            ),
            col(
                "Source",
                "string",
                "",
                1,
                "The component reporting this event.",
            ),
            col(
                "Message",
                "string",
                "",
                0,
                "A human-readable description of the status of this operation.",
            ),
            col(
                "First Seen",
                "string",
                "",
                1,
                "The time at which the event was first recorded.",
            ),
            col(
                "Count",
                "integer",
                "",
                1,
                "The number of times this event has occurred.",
            ),
            col("Name", "string", "", 1, NAME_DESC),
        ],
        StorageId::LEASES => vec![
            name,
            col("Holder", "string", "", 0, "The holder of the lease."),
            age,
        ],
        StorageId::NODES => vec![
            name,
            col("Status", "string", "", 0, "The status of the node"),
            col("Roles", "string", "", 0, "The roles of the node"),
            age,
            col(
                "Version",
                "string",
                "",
                0,
                "Kubelet Version reported by the node.",
            ),
            col("Internal-IP", "string", "", 1, "List of internal IPs."),
            col("External-IP", "string", "", 1, "List of external IPs."),
        ],
        // kinds without printer columns of their own: upstream's default table
        _ => vec![name, age],
    }
}
