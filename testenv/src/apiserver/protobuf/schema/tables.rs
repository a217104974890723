//! The message tables: field number -> JSON name and kind, per message type, and the lookups
//! into them ([`Msg::fields`], [`Msg::field`]).
//!
//! Numbers follow upstream `generated.proto` (apps/v1, core/v1, coordination/v1, meta/v1).

use super::field::{Field, Kind};
use super::msg::Msg;

pub(super) const OBJECT_META: &[Field] = &[
    Field::new(1, "name", Kind::String),
    Field::new(2, "generateName", Kind::String),
    Field::new(3, "namespace", Kind::String),
    Field::new(4, "selfLink", Kind::String),
    Field::new(5, "uid", Kind::String),
    Field::new(6, "resourceVersion", Kind::String),
    Field::new(7, "generation", Kind::Int64),
    Field::new(8, "creationTimestamp", Kind::Time),
    Field::new(9, "deletionTimestamp", Kind::Time),
    Field::new(10, "deletionGracePeriodSeconds", Kind::Int64).pointer(),
    Field::new(11, "labels", Kind::MapString),
    Field::new(12, "annotations", Kind::MapString),
    Field::new(13, "ownerReferences", Kind::Message(Msg::OwnerReference)).repeated(),
    Field::new(14, "finalizers", Kind::String).repeated(),
    Field::new(17, "managedFields", Kind::Skip).repeated(),
];
pub(super) const OWNER_REFERENCE: &[Field] = &[
    Field::new(1, "kind", Kind::String),
    Field::new(3, "name", Kind::String),
    Field::new(4, "uid", Kind::String),
    Field::new(5, "apiVersion", Kind::String),
    Field::new(6, "controller", Kind::Bool).pointer(),
    Field::new(7, "blockOwnerDeletion", Kind::Bool).pointer(),
];
pub(super) const LABEL_SELECTOR: &[Field] = &[
    Field::new(1, "matchLabels", Kind::MapString),
    Field::new(
        2,
        "matchExpressions",
        Kind::Message(Msg::LabelSelectorRequirement),
    )
    .repeated(),
];
pub(super) const LABEL_SELECTOR_REQUIREMENT: &[Field] = &[
    Field::new(1, "key", Kind::String),
    Field::new(2, "operator", Kind::String),
    Field::new(3, "values", Kind::String).repeated(),
];
pub(super) const DEPLOYMENT: &[Field] = &[
    Field::new(1, "metadata", Kind::Message(Msg::ObjectMeta)),
    Field::new(2, "spec", Kind::Message(Msg::DeploymentSpec)),
    Field::new(3, "status", Kind::Message(Msg::DeploymentStatus)),
];
pub(super) const DEPLOYMENT_SPEC: &[Field] = &[
    Field::new(1, "replicas", Kind::Int32).pointer(),
    Field::new(2, "selector", Kind::Message(Msg::LabelSelector)),
    Field::new(3, "template", Kind::Message(Msg::PodTemplateSpec)),
    Field::new(4, "strategy", Kind::Message(Msg::DeploymentStrategy)),
    Field::new(5, "minReadySeconds", Kind::Int32),
    Field::new(6, "revisionHistoryLimit", Kind::Int32).pointer(),
    Field::new(7, "paused", Kind::Bool),
    Field::new(9, "progressDeadlineSeconds", Kind::Int32).pointer(),
];
pub(super) const DEPLOYMENT_STRATEGY: &[Field] = &[
    Field::new(1, "type", Kind::String),
    Field::new(
        2,
        "rollingUpdate",
        Kind::Message(Msg::RollingUpdateDeployment),
    ),
];
pub(super) const ROLLING_UPDATE_DEPLOYMENT: &[Field] = &[
    Field::new(1, "maxUnavailable", Kind::IntOrString),
    Field::new(2, "maxSurge", Kind::IntOrString),
];
pub(super) const DEPLOYMENT_STATUS: &[Field] = &[
    Field::new(1, "observedGeneration", Kind::Int64),
    Field::new(2, "replicas", Kind::Int32),
    Field::new(3, "updatedReplicas", Kind::Int32),
    Field::new(4, "availableReplicas", Kind::Int32),
    Field::new(5, "unavailableReplicas", Kind::Int32),
    Field::new(6, "conditions", Kind::Message(Msg::DeploymentCondition)).repeated(),
    Field::new(7, "readyReplicas", Kind::Int32),
    Field::new(8, "collisionCount", Kind::Int32).pointer(),
    Field::new(9, "terminatingReplicas", Kind::Int32).pointer(),
];
pub(super) const DEPLOYMENT_CONDITION: &[Field] = &[
    Field::new(1, "type", Kind::String),
    Field::new(2, "status", Kind::String),
    Field::new(4, "reason", Kind::String),
    Field::new(5, "message", Kind::String),
    Field::new(6, "lastUpdateTime", Kind::Time),
    Field::new(7, "lastTransitionTime", Kind::Time),
];
pub(super) const REPLICA_SET: &[Field] = &[
    Field::new(1, "metadata", Kind::Message(Msg::ObjectMeta)),
    Field::new(2, "spec", Kind::Message(Msg::ReplicaSetSpec)),
    Field::new(3, "status", Kind::Message(Msg::ReplicaSetStatus)),
];
pub(super) const REPLICA_SET_SPEC: &[Field] = &[
    Field::new(1, "replicas", Kind::Int32).pointer(),
    Field::new(2, "selector", Kind::Message(Msg::LabelSelector)),
    Field::new(3, "template", Kind::Message(Msg::PodTemplateSpec)),
    Field::new(4, "minReadySeconds", Kind::Int32),
];
pub(super) const REPLICA_SET_STATUS: &[Field] = &[
    Field::new(1, "replicas", Kind::Int32),
    Field::new(2, "fullyLabeledReplicas", Kind::Int32),
    Field::new(3, "observedGeneration", Kind::Int64),
    Field::new(4, "readyReplicas", Kind::Int32),
    Field::new(5, "availableReplicas", Kind::Int32),
    Field::new(6, "conditions", Kind::Message(Msg::ReplicaSetCondition)).repeated(),
    Field::new(7, "terminatingReplicas", Kind::Int32).pointer(),
];
pub(super) const REPLICA_SET_CONDITION: &[Field] = &[
    Field::new(1, "type", Kind::String),
    Field::new(2, "status", Kind::String),
    Field::new(3, "lastTransitionTime", Kind::Time),
    Field::new(4, "reason", Kind::String),
    Field::new(5, "message", Kind::String),
];
pub(super) const NAMESPACE: &[Field] = &[
    Field::new(1, "metadata", Kind::Message(Msg::ObjectMeta)),
    Field::new(2, "spec", Kind::Message(Msg::NamespaceSpec)),
    Field::new(3, "status", Kind::Message(Msg::NamespaceStatus)),
];
pub(super) const NAMESPACE_SPEC: &[Field] = &[Field::new(1, "finalizers", Kind::String).repeated()];
pub(super) const NAMESPACE_STATUS: &[Field] = &[
    Field::new(1, "phase", Kind::String),
    Field::new(2, "conditions", Kind::Message(Msg::NamespaceCondition)).repeated(),
];
pub(super) const NAMESPACE_CONDITION: &[Field] = &[
    Field::new(1, "type", Kind::String),
    Field::new(2, "status", Kind::String),
    Field::new(4, "lastTransitionTime", Kind::Time),
    Field::new(5, "reason", Kind::String),
    Field::new(6, "message", Kind::String),
];
pub(super) const POD: &[Field] = &[
    Field::new(1, "metadata", Kind::Message(Msg::ObjectMeta)),
    Field::new(2, "spec", Kind::Message(Msg::PodSpec)),
    Field::new(3, "status", Kind::Message(Msg::PodStatus)),
];
pub(super) const POD_STATUS: &[Field] = &[
    Field::new(1, "phase", Kind::String),
    Field::new(2, "conditions", Kind::Message(Msg::PodCondition)).repeated(),
    Field::new(3, "message", Kind::String),
    Field::new(4, "reason", Kind::String),
    Field::new(5, "hostIP", Kind::String),
    Field::new(6, "podIP", Kind::String),
    Field::new(7, "startTime", Kind::Time),
    Field::new(8, "containerStatuses", Kind::Unsupported("ContainerStatus")).repeated(),
    Field::new(9, "qosClass", Kind::String),
    Field::new(
        10,
        "initContainerStatuses",
        Kind::Unsupported("ContainerStatus"),
    )
    .repeated(),
    Field::new(11, "nominatedNodeName", Kind::String),
    Field::new(12, "podIPs", Kind::Message(Msg::PodIp)).repeated(),
    Field::new(
        13,
        "ephemeralContainerStatuses",
        Kind::Unsupported("ContainerStatus"),
    )
    .repeated(),
    Field::new(14, "resize", Kind::String),
    Field::new(
        15,
        "resourceClaimStatuses",
        Kind::Unsupported("PodResourceClaimStatus"),
    )
    .repeated(),
    Field::new(16, "hostIPs", Kind::Message(Msg::PodIp)).repeated(),
    Field::new(17, "observedGeneration", Kind::Int64),
    Field::new(
        18,
        "extendedResourceClaimStatus",
        Kind::Unsupported("PodExtendedResourceClaimStatus"),
    ),
    Field::new(19, "allocatedResources", Kind::MapQuantity),
    Field::new(20, "resources", Kind::Message(Msg::ResourceRequirements)),
    Field::new(
        21,
        "nodeAllocatableResourceClaimStatuses",
        Kind::Unsupported("NodeAllocatableResourceClaimStatus"),
    )
    .repeated(),
    Field::new(22, "volumeHealth", Kind::Unsupported("PodVolumeHealth")).repeated(),
];
pub(super) const POD_CONDITION: &[Field] = &[
    Field::new(1, "type", Kind::String),
    Field::new(2, "status", Kind::String),
    Field::new(3, "lastProbeTime", Kind::Time),
    Field::new(4, "lastTransitionTime", Kind::Time),
    Field::new(5, "reason", Kind::String),
    Field::new(6, "message", Kind::String),
    Field::new(7, "observedGeneration", Kind::Int64),
];
/// `PodIP` and `HostIP`: the same single field.
pub(super) const POD_IP: &[Field] = &[Field::new(1, "ip", Kind::String)];
pub(super) const POD_SPEC: &[Field] = &[
    Field::new(1, "volumes", Kind::Unsupported("Volume")).repeated(),
    Field::new(2, "containers", Kind::Message(Msg::Container)).repeated(),
    Field::new(3, "restartPolicy", Kind::String),
    Field::new(4, "terminationGracePeriodSeconds", Kind::Int64).pointer(),
    Field::new(5, "activeDeadlineSeconds", Kind::Int64).pointer(),
    Field::new(6, "dnsPolicy", Kind::String),
    Field::new(7, "nodeSelector", Kind::MapString),
    Field::new(8, "serviceAccountName", Kind::String),
    Field::new(9, "serviceAccount", Kind::String),
    Field::new(10, "nodeName", Kind::String),
    Field::new(11, "hostNetwork", Kind::Bool),
    Field::new(12, "hostPID", Kind::Bool),
    Field::new(13, "hostIPC", Kind::Bool),
    Field::new(
        14,
        "securityContext",
        Kind::Message(Msg::PodSecurityContext),
    ),
    Field::new(
        15,
        "imagePullSecrets",
        Kind::Message(Msg::LocalObjectReference),
    )
    .repeated(),
    Field::new(16, "hostname", Kind::String),
    Field::new(17, "subdomain", Kind::String),
    Field::new(18, "affinity", Kind::Unsupported("Affinity")),
    Field::new(19, "schedulerName", Kind::String),
    Field::new(20, "initContainers", Kind::Message(Msg::Container)).repeated(),
    Field::new(21, "automountServiceAccountToken", Kind::Bool).pointer(),
    Field::new(22, "tolerations", Kind::Message(Msg::Toleration)).repeated(),
    Field::new(23, "hostAliases", Kind::Unsupported("HostAlias")).repeated(),
    Field::new(24, "priorityClassName", Kind::String),
    Field::new(25, "priority", Kind::Int32).pointer(),
    Field::new(26, "dnsConfig", Kind::Unsupported("PodDnsConfig")),
    Field::new(27, "shareProcessNamespace", Kind::Bool).pointer(),
    Field::new(28, "readinessGates", Kind::Unsupported("PodReadinessGate")).repeated(),
    Field::new(29, "runtimeClassName", Kind::String).pointer(),
    Field::new(30, "enableServiceLinks", Kind::Bool).pointer(),
    Field::new(31, "preemptionPolicy", Kind::String).pointer(),
    Field::new(32, "overhead", Kind::MapQuantity),
    Field::new(
        33,
        "topologySpreadConstraints",
        Kind::Unsupported("TopologySpreadConstraint"),
    )
    .repeated(),
    Field::new(
        34,
        "ephemeralContainers",
        Kind::Unsupported("EphemeralContainer"),
    )
    .repeated(),
    Field::new(35, "setHostnameAsFQDN", Kind::Bool).pointer(),
    Field::new(36, "os", Kind::Unsupported("PodOs")),
    Field::new(37, "hostUsers", Kind::Bool).pointer(),
    Field::new(
        38,
        "schedulingGates",
        Kind::Unsupported("PodSchedulingGate"),
    )
    .repeated(),
    Field::new(39, "resourceClaims", Kind::Unsupported("PodResourceClaim")).repeated(),
    Field::new(40, "resources", Kind::Message(Msg::ResourceRequirements)),
    Field::new(41, "hostnameOverride", Kind::String).pointer(),
    Field::new(42, "workloadRef", Kind::Unsupported("WorkloadReference")),
];
pub(super) const POD_TEMPLATE_SPEC: &[Field] = &[
    Field::new(1, "metadata", Kind::Message(Msg::ObjectMeta)),
    Field::new(2, "spec", Kind::Message(Msg::PodSpec)),
];
pub(super) const CONTAINER: &[Field] = &[
    Field::new(1, "name", Kind::String),
    Field::new(2, "image", Kind::String),
    Field::new(3, "command", Kind::String).repeated(),
    Field::new(4, "args", Kind::String).repeated(),
    Field::new(5, "workingDir", Kind::String),
    Field::new(6, "ports", Kind::Message(Msg::ContainerPort)).repeated(),
    Field::new(7, "env", Kind::Message(Msg::EnvVar)).repeated(),
    Field::new(8, "resources", Kind::Message(Msg::ResourceRequirements)),
    Field::new(9, "volumeMounts", Kind::Message(Msg::VolumeMount)).repeated(),
    Field::new(10, "livenessProbe", Kind::Unsupported("Probe")),
    Field::new(11, "readinessProbe", Kind::Unsupported("Probe")),
    Field::new(12, "lifecycle", Kind::Unsupported("Lifecycle")),
    Field::new(13, "terminationMessagePath", Kind::String),
    Field::new(14, "imagePullPolicy", Kind::String),
    Field::new(15, "securityContext", Kind::Message(Msg::SecurityContext)),
    Field::new(16, "stdin", Kind::Bool),
    Field::new(17, "stdinOnce", Kind::Bool),
    Field::new(18, "tty", Kind::Bool),
    Field::new(19, "envFrom", Kind::Message(Msg::EnvFromSource)).repeated(),
    Field::new(20, "terminationMessagePolicy", Kind::String),
    Field::new(21, "volumeDevices", Kind::Unsupported("VolumeDevice")).repeated(),
    Field::new(22, "startupProbe", Kind::Unsupported("Probe")),
    Field::new(
        23,
        "resizePolicy",
        Kind::Unsupported("ContainerResizePolicy"),
    )
    .repeated(),
    Field::new(24, "restartPolicy", Kind::String).pointer(),
    Field::new(
        25,
        "restartPolicyRules",
        Kind::Unsupported("ContainerRestartRule"),
    )
    .repeated(),
];
pub(super) const CONTAINER_PORT: &[Field] = &[
    Field::new(1, "name", Kind::String),
    Field::new(2, "hostPort", Kind::Int32),
    Field::new(3, "containerPort", Kind::Int32),
    Field::new(4, "protocol", Kind::String),
    Field::new(5, "hostIP", Kind::String),
];
pub(super) const ENV_VAR: &[Field] = &[
    Field::new(1, "name", Kind::String),
    Field::new(2, "value", Kind::String),
    Field::new(3, "valueFrom", Kind::Message(Msg::EnvVarSource)),
];
pub(super) const ENV_VAR_SOURCE: &[Field] = &[
    Field::new(1, "fieldRef", Kind::Message(Msg::ObjectFieldSelector)),
    Field::new(
        2,
        "resourceFieldRef",
        Kind::Message(Msg::ResourceFieldSelector),
    ),
    Field::new(
        3,
        "configMapKeyRef",
        Kind::Message(Msg::ConfigMapKeySelector),
    ),
    Field::new(4, "secretKeyRef", Kind::Message(Msg::SecretKeySelector)),
    Field::new(5, "fileKeyRef", Kind::Unsupported("FileKeySelector")),
];
pub(super) const OBJECT_FIELD_SELECTOR: &[Field] = &[
    Field::new(1, "apiVersion", Kind::String),
    Field::new(2, "fieldPath", Kind::String),
];
pub(super) const RESOURCE_FIELD_SELECTOR: &[Field] = &[
    Field::new(1, "containerName", Kind::String),
    Field::new(2, "resource", Kind::String),
    Field::new(3, "divisor", Kind::Quantity),
];
pub(super) const CONFIG_MAP_KEY_SELECTOR: &[Field] = &[
    Field::new(
        1,
        "localObjectReference",
        Kind::Inline(Msg::LocalObjectReference),
    ),
    Field::new(2, "key", Kind::String),
    Field::new(3, "optional", Kind::Bool).pointer(),
];
pub(super) const SECRET_KEY_SELECTOR: &[Field] = &[
    Field::new(
        1,
        "localObjectReference",
        Kind::Inline(Msg::LocalObjectReference),
    ),
    Field::new(2, "key", Kind::String),
    Field::new(3, "optional", Kind::Bool).pointer(),
];
pub(super) const ENV_FROM_SOURCE: &[Field] = &[
    Field::new(1, "prefix", Kind::String),
    Field::new(2, "configMapRef", Kind::Message(Msg::ConfigMapEnvSource)),
    Field::new(3, "secretRef", Kind::Message(Msg::SecretEnvSource)),
];
pub(super) const CONFIG_MAP_ENV_SOURCE: &[Field] = &[
    Field::new(
        1,
        "localObjectReference",
        Kind::Inline(Msg::LocalObjectReference),
    ),
    Field::new(2, "optional", Kind::Bool).pointer(),
];
pub(super) const SECRET_ENV_SOURCE: &[Field] = &[
    Field::new(
        1,
        "localObjectReference",
        Kind::Inline(Msg::LocalObjectReference),
    ),
    Field::new(2, "optional", Kind::Bool).pointer(),
];
pub(super) const RESOURCE_REQUIREMENTS: &[Field] = &[
    Field::new(1, "limits", Kind::MapQuantity),
    Field::new(2, "requests", Kind::MapQuantity),
    Field::new(3, "claims", Kind::Message(Msg::ResourceClaim)).repeated(),
];
pub(super) const RESOURCE_CLAIM: &[Field] = &[
    Field::new(1, "name", Kind::String),
    Field::new(2, "request", Kind::String),
];
pub(super) const VOLUME_MOUNT: &[Field] = &[
    Field::new(1, "name", Kind::String),
    Field::new(2, "readOnly", Kind::Bool),
    Field::new(3, "mountPath", Kind::String),
    Field::new(4, "subPath", Kind::String),
    Field::new(5, "mountPropagation", Kind::String).pointer(),
    Field::new(6, "subPathExpr", Kind::String),
    Field::new(7, "recursiveReadOnly", Kind::String).pointer(),
];
pub(super) const POD_SECURITY_CONTEXT: &[Field] = &[
    Field::new(1, "seLinuxOptions", Kind::Unsupported("SeLinuxOptions")),
    Field::new(2, "runAsUser", Kind::Int64).pointer(),
    Field::new(3, "runAsNonRoot", Kind::Bool).pointer(),
    Field::new(4, "supplementalGroups", Kind::Int64).repeated(),
    Field::new(5, "fsGroup", Kind::Int64).pointer(),
    Field::new(6, "runAsGroup", Kind::Int64).pointer(),
    Field::new(7, "sysctls", Kind::Unsupported("Sysctl")).repeated(),
    Field::new(
        8,
        "windowsOptions",
        Kind::Unsupported("WindowsSecurityContextOptions"),
    ),
    Field::new(9, "fsGroupChangePolicy", Kind::String).pointer(),
    Field::new(10, "seccompProfile", Kind::Unsupported("SeccompProfile")),
    Field::new(11, "appArmorProfile", Kind::Unsupported("AppArmorProfile")),
    Field::new(12, "supplementalGroupsPolicy", Kind::String).pointer(),
    Field::new(13, "seLinuxChangePolicy", Kind::String).pointer(),
];
pub(super) const SECURITY_CONTEXT: &[Field] = &[
    Field::new(1, "capabilities", Kind::Message(Msg::Capabilities)),
    Field::new(2, "privileged", Kind::Bool).pointer(),
    Field::new(3, "seLinuxOptions", Kind::Unsupported("SeLinuxOptions")),
    Field::new(4, "runAsUser", Kind::Int64).pointer(),
    Field::new(5, "runAsNonRoot", Kind::Bool).pointer(),
    Field::new(6, "readOnlyRootFilesystem", Kind::Bool).pointer(),
    Field::new(7, "allowPrivilegeEscalation", Kind::Bool).pointer(),
    Field::new(8, "runAsGroup", Kind::Int64).pointer(),
    Field::new(9, "procMount", Kind::String).pointer(),
    Field::new(
        10,
        "windowsOptions",
        Kind::Unsupported("WindowsSecurityContextOptions"),
    ),
    Field::new(11, "seccompProfile", Kind::Unsupported("SeccompProfile")),
    Field::new(12, "appArmorProfile", Kind::Unsupported("AppArmorProfile")),
];
pub(super) const CAPABILITIES: &[Field] = &[
    Field::new(1, "add", Kind::String).repeated(),
    Field::new(2, "drop", Kind::String).repeated(),
];
pub(super) const TOLERATION: &[Field] = &[
    Field::new(1, "key", Kind::String),
    Field::new(2, "operator", Kind::String),
    Field::new(3, "value", Kind::String),
    Field::new(4, "effect", Kind::String),
    Field::new(5, "tolerationSeconds", Kind::Int64).pointer(),
];
pub(super) const LOCAL_OBJECT_REFERENCE: &[Field] = &[Field::new(1, "name", Kind::String)];
pub(super) const EVENT: &[Field] = &[
    Field::new(1, "metadata", Kind::Message(Msg::ObjectMeta)),
    Field::new(2, "involvedObject", Kind::Message(Msg::ObjectReference)),
    Field::new(3, "reason", Kind::String),
    Field::new(4, "message", Kind::String),
    Field::new(5, "source", Kind::Message(Msg::EventSource)),
    Field::new(6, "firstTimestamp", Kind::Time),
    Field::new(7, "lastTimestamp", Kind::Time),
    Field::new(8, "count", Kind::Int32),
    Field::new(9, "type", Kind::String),
    Field::new(10, "eventTime", Kind::MicroTime),
    Field::new(11, "series", Kind::Message(Msg::EventSeries)),
    Field::new(12, "action", Kind::String),
    Field::new(13, "related", Kind::Message(Msg::ObjectReference)),
    Field::new(14, "reportingComponent", Kind::String),
    Field::new(15, "reportingInstance", Kind::String),
];
pub(super) const EVENT_SOURCE: &[Field] = &[
    Field::new(1, "component", Kind::String),
    Field::new(2, "host", Kind::String),
];
pub(super) const EVENT_SERIES: &[Field] = &[
    Field::new(1, "count", Kind::Int32),
    Field::new(2, "lastObservedTime", Kind::MicroTime),
];
pub(super) const OBJECT_REFERENCE: &[Field] = &[
    Field::new(1, "kind", Kind::String),
    Field::new(2, "namespace", Kind::String),
    Field::new(3, "name", Kind::String),
    Field::new(4, "uid", Kind::String),
    Field::new(5, "apiVersion", Kind::String),
    Field::new(6, "resourceVersion", Kind::String),
    Field::new(7, "fieldPath", Kind::String),
];
pub(super) const LEASE: &[Field] = &[
    Field::new(1, "metadata", Kind::Message(Msg::ObjectMeta)),
    Field::new(2, "spec", Kind::Message(Msg::LeaseSpec)),
];
pub(super) const LEASE_SPEC: &[Field] = &[
    Field::new(1, "holderIdentity", Kind::String).pointer(),
    Field::new(2, "leaseDurationSeconds", Kind::Int32).pointer(),
    Field::new(3, "acquireTime", Kind::MicroTime),
    Field::new(4, "renewTime", Kind::MicroTime),
    Field::new(5, "leaseTransitions", Kind::Int32).pointer(),
    Field::new(6, "strategy", Kind::String).pointer(),
    Field::new(7, "preferredHolder", Kind::String).pointer(),
];

pub(super) const DELETE_OPTIONS: &[Field] = &[
    Field::new(1, "gracePeriodSeconds", Kind::Int64).pointer(),
    Field::new(2, "preconditions", Kind::Message(Msg::Preconditions)),
    Field::new(3, "orphanDependents", Kind::Bool).pointer(),
    Field::new(4, "propagationPolicy", Kind::String).pointer(),
    Field::new(5, "dryRun", Kind::String).repeated(),
    Field::new(
        6,
        "ignoreStoreReadErrorWithClusterBreakingPotential",
        Kind::Bool,
    )
    .pointer(),
];
pub(super) const PRECONDITIONS: &[Field] = &[
    Field::new(1, "uid", Kind::String).pointer(),
    Field::new(2, "resourceVersion", Kind::String).pointer(),
];

impl Msg {
    /// The message's fields, by field number.
    pub fn fields(self) -> &'static [Field] {
        match self {
            Msg::ObjectMeta => OBJECT_META,
            Msg::OwnerReference => OWNER_REFERENCE,
            Msg::LabelSelector => LABEL_SELECTOR,
            Msg::LabelSelectorRequirement => LABEL_SELECTOR_REQUIREMENT,
            Msg::Deployment => DEPLOYMENT,
            Msg::DeploymentSpec => DEPLOYMENT_SPEC,
            Msg::DeploymentStrategy => DEPLOYMENT_STRATEGY,
            Msg::RollingUpdateDeployment => ROLLING_UPDATE_DEPLOYMENT,
            Msg::DeploymentStatus => DEPLOYMENT_STATUS,
            Msg::DeploymentCondition => DEPLOYMENT_CONDITION,
            Msg::ReplicaSet => REPLICA_SET,
            Msg::ReplicaSetSpec => REPLICA_SET_SPEC,
            Msg::ReplicaSetStatus => REPLICA_SET_STATUS,
            Msg::ReplicaSetCondition => REPLICA_SET_CONDITION,
            Msg::Namespace => NAMESPACE,
            Msg::NamespaceSpec => NAMESPACE_SPEC,
            Msg::NamespaceStatus => NAMESPACE_STATUS,
            Msg::NamespaceCondition => NAMESPACE_CONDITION,
            Msg::Pod => POD,
            Msg::PodStatus => POD_STATUS,
            Msg::PodCondition => POD_CONDITION,
            Msg::PodIp => POD_IP,
            Msg::PodSpec => POD_SPEC,
            Msg::PodTemplateSpec => POD_TEMPLATE_SPEC,
            Msg::Container => CONTAINER,
            Msg::ContainerPort => CONTAINER_PORT,
            Msg::EnvVar => ENV_VAR,
            Msg::EnvVarSource => ENV_VAR_SOURCE,
            Msg::ObjectFieldSelector => OBJECT_FIELD_SELECTOR,
            Msg::ResourceFieldSelector => RESOURCE_FIELD_SELECTOR,
            Msg::ConfigMapKeySelector => CONFIG_MAP_KEY_SELECTOR,
            Msg::SecretKeySelector => SECRET_KEY_SELECTOR,
            Msg::EnvFromSource => ENV_FROM_SOURCE,
            Msg::ConfigMapEnvSource => CONFIG_MAP_ENV_SOURCE,
            Msg::SecretEnvSource => SECRET_ENV_SOURCE,
            Msg::ResourceRequirements => RESOURCE_REQUIREMENTS,
            Msg::ResourceClaim => RESOURCE_CLAIM,
            Msg::VolumeMount => VOLUME_MOUNT,
            Msg::PodSecurityContext => POD_SECURITY_CONTEXT,
            Msg::SecurityContext => SECURITY_CONTEXT,
            Msg::Capabilities => CAPABILITIES,
            Msg::Toleration => TOLERATION,
            Msg::LocalObjectReference => LOCAL_OBJECT_REFERENCE,
            Msg::Event => EVENT,
            Msg::EventSource => EVENT_SOURCE,
            Msg::EventSeries => EVENT_SERIES,
            Msg::ObjectReference => OBJECT_REFERENCE,
            Msg::Lease => LEASE,
            Msg::LeaseSpec => LEASE_SPEC,
            Msg::DeleteOptions => DELETE_OPTIONS,
            Msg::Preconditions => PRECONDITIONS,
        }
    }

    /// The field with this number, if the table has it.
    pub fn field(self, number: u32) -> Option<&'static Field> {
        self.fields().iter().find(|f| f.number == number)
    }
}
