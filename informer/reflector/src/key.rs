//! Object keys in client-go's `MetaNamespaceKeyFunc` format: `namespace/name`, or `name` for
//! cluster-scoped objects.

/// The cache key of an object: `namespace/name`, or `name` without a namespace.
pub fn object_key<K: kube::Resource>(obj: &K) -> String {
    let meta = obj.meta();
    let name = meta.name.as_deref().unwrap_or_default();
    match meta.namespace.as_deref() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{name}"),
        _ => name.to_owned(),
    }
}

/// The object's `metadata.resourceVersion` ("" when unset).
pub fn resource_version<K: kube::Resource>(obj: &K) -> &str {
    obj.meta().resource_version.as_deref().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Namespace, Pod};
    use kube::api::ObjectMeta;

    #[test]
    fn keys_follow_meta_namespace_key_func() {
        let pod = Pod {
            metadata: ObjectMeta {
                name: Some("web-1".into()),
                namespace: Some("prod".into()),
                ..ObjectMeta::default()
            },
            ..Pod::default()
        };
        assert_eq!(object_key(&pod), "prod/web-1");
        let ns = Namespace {
            metadata: ObjectMeta {
                name: Some("prod".into()),
                ..ObjectMeta::default()
            },
            ..Namespace::default()
        };
        assert_eq!(object_key(&ns), "prod");
    }
}
