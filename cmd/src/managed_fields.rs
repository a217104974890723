//! Informer caches without managedFields: the controllers do not read them, and they are often
//! the largest part of an object. (Pods are cached as `PodView`, which never parses them.)

use k8s_openapi::Metadata;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcm_informer::{InformerFactory, InformerObject};

/// Makes the factory's informer of `K` drop managedFields before caching an object.
pub(crate) fn strip_managed_fields<K>(factory: &InformerFactory) -> anyhow::Result<()>
where
    K: InformerObject + Metadata<Ty = ObjectMeta>,
{
    let informer = factory.informer::<K>();
    if informer.is_started() {
        return Ok(());
    }
    // A second controller asking for the same informer sets the same transform again.
    informer.set_transform(|mut obj: K| {
        obj.metadata_mut().managed_fields = None;
        obj
    })?;
    Ok(())
}
