//! Shared index informers, event handlers, listers and the informer factory: client-go's shared
//! informers on kube-client.
//!
//! A [`SharedIndexInformer`] runs one [`kcm_reflector::Reflector`] for a resource type and keeps a
//! [`kcm_store::Store`] exactly in step with it (in-order processing; a relist is applied as one
//! replace, with tombstones for objects that vanished). Any number of [`ResourceEventHandler`]s
//! can be registered before or after start; each has its own unbounded buffer and task, its own
//! resync period and its own `has_synced`. An [`InformerFactory`] hands one informer per type and
//! scope to every controller.
//!
//! Projected types work out of the box: any type implementing `k8s_openapi::Resource`,
//! `k8s_openapi::Metadata<Ty = ObjectMeta>` and `Deserialize` can be watched, so a controller can
//! cache only the fields it reads (see `tests/it/projected.rs`).
//!
//! ```no_run
//! use std::sync::Arc;
//! use std::time::Duration;
//! use k8s_openapi::api::core::v1::Pod;
//! use kcm_informer::{EventHandlerFns, InformerFactory, InformerOptions};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn example() -> anyhow::Result<()> {
//! let client = kube::Client::try_default().await?;
//! let factory = InformerFactory::new(client, InformerOptions::default());
//! let pods = factory.informer::<Pod>();
//! pods.add_event_handler(
//!     EventHandlerFns::new()
//!         .on_add(|pod: &Arc<Pod>, _| println!("added {:?}", pod.metadata.name))
//!         .on_delete(|d| println!("deleted {}", d.key())),
//! )?;
//! let cancel = CancellationToken::new();
//! factory.start(&cancel);
//! factory.wait_for_cache_sync(Some(Duration::from_secs(60)), &cancel).await;
//! let web = pods.lister().namespaced("default").list(&kcm_store::Selector::parse("app=web")?);
//! println!("{} web pods", web.len());
//! # Ok(())
//! # }
//! ```

mod compact;
mod factory;
mod handler;
mod informer;
mod informer_store;
mod inner;
mod listener;
mod options;
mod processor;
mod resync;
mod sync;

pub use compact::Compact;
pub use factory::InformerFactory;
pub use handler::{
    DeletedFinalStateUnknown, DeletedObject, EventHandlerFns, FilteringHandler,
    ResourceEventHandler,
};
pub use informer::{
    HandlerRegistration, InformerError, InformerObject, SharedIndexInformer, Transform,
};
pub use kcm_reflector::{
    BackoffConfig, CountingMetrics, DynamicShard, InitialListStrategy, ReflectorConfig,
    ReflectorMetrics, ShardChange, ShardScope, ShardSelection,
};
pub use kcm_store::{Lister, NamespaceLister, ObjectKey, Selector, Store};
pub use options::InformerOptions;
pub use sync::{HasSynced, wait_for_cache_sync, wait_for_named_cache_sync};
pub use tokio_util::sync::CancellationToken;
