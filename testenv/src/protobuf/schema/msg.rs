//! The message type names and their field tables.

use super::Field;
use super::tables::*;

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
        }
    }

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
        }
    }
}
