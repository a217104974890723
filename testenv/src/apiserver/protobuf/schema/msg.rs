//! The message types the decoder knows, their upstream names, and the top-level message of
//! each kind. Their fields are in [`tables`](super::tables).

/// Every message type the decoder knows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Msg {
    /// `ObjectMeta`
    ObjectMeta,
    /// `OwnerReference`
    OwnerReference,
    /// `LabelSelector`
    LabelSelector,
    /// `LabelSelectorRequirement`
    LabelSelectorRequirement,
    /// `Deployment`
    Deployment,
    /// `DeploymentSpec`
    DeploymentSpec,
    /// `DeploymentStrategy`
    DeploymentStrategy,
    /// `RollingUpdateDeployment`
    RollingUpdateDeployment,
    /// `DeploymentStatus`
    DeploymentStatus,
    /// `DeploymentCondition`
    DeploymentCondition,
    /// `ReplicaSet`
    ReplicaSet,
    /// `ReplicaSetSpec`
    ReplicaSetSpec,
    /// `ReplicaSetStatus`
    ReplicaSetStatus,
    /// `ReplicaSetCondition`
    ReplicaSetCondition,
    /// `Namespace`
    Namespace,
    /// `NamespaceSpec`
    NamespaceSpec,
    /// `NamespaceStatus`
    NamespaceStatus,
    /// `NamespaceCondition`
    NamespaceCondition,
    /// `Pod`
    Pod,
    /// `PodStatus`
    PodStatus,
    /// `PodCondition`
    PodCondition,
    /// `PodIP` (and `HostIP`, the same shape)
    PodIp,
    /// `PodSpec`
    PodSpec,
    /// `PodTemplateSpec`
    PodTemplateSpec,
    /// `Container`
    Container,
    /// `ContainerPort`
    ContainerPort,
    /// `EnvVar`
    EnvVar,
    /// `EnvVarSource`
    EnvVarSource,
    /// `ObjectFieldSelector`
    ObjectFieldSelector,
    /// `ResourceFieldSelector`
    ResourceFieldSelector,
    /// `ConfigMapKeySelector`
    ConfigMapKeySelector,
    /// `SecretKeySelector`
    SecretKeySelector,
    /// `EnvFromSource`
    EnvFromSource,
    /// `ConfigMapEnvSource`
    ConfigMapEnvSource,
    /// `SecretEnvSource`
    SecretEnvSource,
    /// `ResourceRequirements`
    ResourceRequirements,
    /// `ResourceClaim`
    ResourceClaim,
    /// `VolumeMount`
    VolumeMount,
    /// `PodSecurityContext`
    PodSecurityContext,
    /// `SecurityContext`
    SecurityContext,
    /// `Capabilities`
    Capabilities,
    /// `Toleration`
    Toleration,
    /// `LocalObjectReference`
    LocalObjectReference,
    /// `Event`
    Event,
    /// `EventSource`
    EventSource,
    /// `EventSeries`
    EventSeries,
    /// `ObjectReference`
    ObjectReference,
    /// `Lease`
    Lease,
    /// `LeaseSpec`
    LeaseSpec,
    /// `DeleteOptions` (meta/v1, registered in every group version)
    DeleteOptions,
    /// `Preconditions`
    Preconditions,
}

impl Msg {
    /// The upstream message name, for error messages.
    pub fn name(self) -> &'static str {
        match self {
            Msg::ObjectMeta => "ObjectMeta",
            Msg::OwnerReference => "OwnerReference",
            Msg::LabelSelector => "LabelSelector",
            Msg::LabelSelectorRequirement => "LabelSelectorRequirement",
            Msg::Deployment => "Deployment",
            Msg::DeploymentSpec => "DeploymentSpec",
            Msg::DeploymentStrategy => "DeploymentStrategy",
            Msg::RollingUpdateDeployment => "RollingUpdateDeployment",
            Msg::DeploymentStatus => "DeploymentStatus",
            Msg::DeploymentCondition => "DeploymentCondition",
            Msg::ReplicaSet => "ReplicaSet",
            Msg::ReplicaSetSpec => "ReplicaSetSpec",
            Msg::ReplicaSetStatus => "ReplicaSetStatus",
            Msg::ReplicaSetCondition => "ReplicaSetCondition",
            Msg::Namespace => "Namespace",
            Msg::NamespaceSpec => "NamespaceSpec",
            Msg::NamespaceStatus => "NamespaceStatus",
            Msg::NamespaceCondition => "NamespaceCondition",
            Msg::Pod => "Pod",
            Msg::PodStatus => "PodStatus",
            Msg::PodCondition => "PodCondition",
            Msg::PodIp => "PodIP",
            Msg::PodSpec => "PodSpec",
            Msg::PodTemplateSpec => "PodTemplateSpec",
            Msg::Container => "Container",
            Msg::ContainerPort => "ContainerPort",
            Msg::EnvVar => "EnvVar",
            Msg::EnvVarSource => "EnvVarSource",
            Msg::ObjectFieldSelector => "ObjectFieldSelector",
            Msg::ResourceFieldSelector => "ResourceFieldSelector",
            Msg::ConfigMapKeySelector => "ConfigMapKeySelector",
            Msg::SecretKeySelector => "SecretKeySelector",
            Msg::EnvFromSource => "EnvFromSource",
            Msg::ConfigMapEnvSource => "ConfigMapEnvSource",
            Msg::SecretEnvSource => "SecretEnvSource",
            Msg::ResourceRequirements => "ResourceRequirements",
            Msg::ResourceClaim => "ResourceClaim",
            Msg::VolumeMount => "VolumeMount",
            Msg::PodSecurityContext => "PodSecurityContext",
            Msg::SecurityContext => "SecurityContext",
            Msg::Capabilities => "Capabilities",
            Msg::Toleration => "Toleration",
            Msg::LocalObjectReference => "LocalObjectReference",
            Msg::Event => "Event",
            Msg::EventSource => "EventSource",
            Msg::EventSeries => "EventSeries",
            Msg::ObjectReference => "ObjectReference",
            Msg::Lease => "Lease",
            Msg::LeaseSpec => "LeaseSpec",
            Msg::DeleteOptions => "DeleteOptions",
            Msg::Preconditions => "Preconditions",
        }
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
            // Clients send it in the version of the resource they delete.
            (_, "DeleteOptions") => Msg::DeleteOptions,
            _ => return None,
        })
    }
}
