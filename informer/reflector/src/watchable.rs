//! What a reflector can watch: k8s-openapi types and hand-written projected types.

use std::fmt;

use serde::de::DeserializeOwned;

/// The bound every watched type satisfies: k8s-openapi resource types, and hand-written projected
/// types implementing `k8s_openapi::Resource + k8s_openapi::Metadata<Ty = ObjectMeta>` plus
/// `Deserialize` (kube's blanket impl makes them `kube::Resource`).
pub trait Watchable:
    kube::Resource<DynamicType = ()> + DeserializeOwned + Clone + fmt::Debug + Send + Sync + 'static
{
}

impl<K> Watchable for K where
    K: kube::Resource<DynamicType = ()>
        + DeserializeOwned
        + Clone
        + fmt::Debug
        + Send
        + Sync
        + 'static
{
}

/// The object's `metadata.resourceVersion` ("" when unset).
pub(crate) fn resource_version<K: kube::Resource>(obj: &K) -> &str {
    obj.meta().resource_version.as_deref().unwrap_or_default()
}
