//! Your own controller in a few lines, on kcm's machinery: the builder.
//!
//! `Builder::<Greeting>::new("greeting-controller")` (or, on kcm-manager,
//! `Controller::for_::<Greeting>("greeting-controller")`) `.owns::<ConfigMap>()`
//! `.watches::<X>(map)` `.workers(n)` `.run(reconcile)` gives a [`Reconciler`] that a manager
//! registers in one line (`Manager::new("greetings").controller(reconciler)`). Once started it
//! has what kcm's Deployment and ReplicaSet controllers have:
//!
//! - the process's shared informers ([`InformerFactory`](kcm_informer::InformerFactory)): one
//!   cache per type, whoever else reads it, and nothing else cached;
//! - client-go's rate-limited work queue (`kcm-workqueue`, named after the controller, with
//!   its metrics); a key is reconciled by one worker at a time;
//! - triggers: a change of a `Greeting` enqueues it; a change of an owned `ConfigMap`
//!   enqueues its controller (the owner reference whose `controller` is true, of the kind
//!   and group of `Greeting` and the UID of the cached one), and the owned objects are
//!   indexed by controller ([`Context::owned`]);
//! - the caches synced before the first reconcile (a cache that does not sync is named in a
//!   warning every 15 s);
//! - errors retried with client-go's per-key backoff (5 ms doubling to 1000 s) forever;
//!   [`Action::RequeueAfter`] and [`Action::RequeueRateLimited`] without an error;
//! - under leader election or `--sharding=namespace`: only the keys of the namespaces this
//!   replica owns are reconciled, and a write the fence refused (the lease may be another
//!   replica's) requeues the key after a second without counting a failure;
//! - an event recorder ([`Context::event`]), server-side apply and merge-patch writes with the
//!   controller's name as field manager ([`Context::apply`], [`Context::apply_status`],
//!   [`Context::create_or_patch`], [`Context::patch_status`]), finalizers in one call
//!   ([`finalizer`]).
//!
//! The reconcile gets the cached object (`Arc<K>`: never change it, write a copy) and the
//! [`Context`], and returns an [`Action`] or any error (`kube::Error`, `anyhow::Error`, ...).
//! A type from kube's `#[derive(CustomResource)]` needs nothing more: kcm-store's `Object`
//! is implemented for every `kube::Resource`.
//!
//! ```no_run
//! use std::collections::BTreeMap;
//! use std::sync::Arc;
//!
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kcm_controller::builder::{Action, BoxError, Builder, Context, Env, Reconciler};
//! use kube::{CustomResource, Resource, api::ObjectMeta};
//! use schemars::JsonSchema;
//! use serde::{Deserialize, Serialize};
//!
//! /// A greeting, published as a ConfigMap.
//! #[derive(CustomResource, Deserialize, Serialize, Clone, Debug, JsonSchema)]
//! #[kube(group = "example.com", version = "v1", kind = "Greeting", namespaced)]
//! struct GreetingSpec {
//!     message: String,
//! }
//!
//! async fn reconcile(greeting: Arc<Greeting>, ctx: Arc<Context>) -> Result<Action, BoxError> {
//!     let cm = ConfigMap {
//!         metadata: ObjectMeta {
//!             name: greeting.metadata.name.clone(),
//!             namespace: greeting.metadata.namespace.clone(),
//!             owner_references: greeting.controller_owner_ref(&()).map(|r| vec![r]),
//!             ..ObjectMeta::default()
//!         },
//!         data: Some(BTreeMap::from([("message".into(), greeting.spec.message.clone())])),
//!         ..ConfigMap::default()
//!     };
//!     ctx.create_or_patch(&cm).await?;
//!     Ok(Action::done())
//! }
//!
//! fn greetings() -> Reconciler {
//!     Builder::<Greeting>::new("greeting-controller")
//!         .owns::<ConfigMap>()
//!         .run(reconcile)
//! }
//!
//! // kcm-manager starts it (`Manager::new("greetings").controller(greetings()).main()`);
//! // by hand:
//! # async fn by_hand() -> Result<(), BoxError> {
//! let client = kube::Client::try_default().await?;
//! let factory = kcm_informer::InformerFactory::new(client.clone(), Default::default());
//! let run = greetings().start(Env::new(client, factory.clone()))?;
//! let cancel = tokio_util::sync::CancellationToken::new();
//! factory.start(&cancel);
//! run(cancel).await;
//! # Ok(())
//! # }
//! ```

mod action;
mod context;
mod finalizer;
mod patch;
mod runner;
mod triggers;

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use std::time::Duration;

use kcm_informer::{InformerError, InformerObject, ObjectKey};

pub use action::{Action, BoxError};
pub use context::Context;
pub use finalizer::{Finalize, finalizer};
pub use runner::{Env, Run};

use crate::owner_index::{CONTROLLER_UID_INDEX, ensure_index};
use runner::{Registrar, Registration, Settings};
use triggers::{MapFn, OwnedHandler, WatchHandler, controller_uid_index};

/// A controller of `K` being described: what triggers it and how many workers reconcile.
pub struct Builder<K: InformerObject> {
    name: &'static str,
    workers: usize,
    cache_sync_timeout: Option<Duration>,
    registrations: Vec<Registration<K>>,
    _type: PhantomData<fn(K)>,
}

impl<K: InformerObject> fmt::Debug for Builder<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("name", &self.name)
            .field("workers", &self.workers)
            .field("triggers", &self.registrations.len())
            .finish_non_exhaustive()
    }
}

impl<K: InformerObject> Builder<K> {
    /// A controller of `K` named `name` (its `--controllers` name under a manager, its work
    /// queue's and metrics' name, its events' source and its field manager), with 2 workers.
    pub fn new(name: &'static str) -> Self {
        Builder {
            name,
            workers: 2,
            cache_sync_timeout: None,
            registrations: Vec::new(),
            _type: PhantomData,
        }
    }

    /// Reconciles a `K` when an object of type `C` it controls changes (the owner reference
    /// with `controller: true`, as `Resource::controller_owner_ref` writes it).
    #[must_use]
    pub fn owns<C: InformerObject>(mut self) -> Self {
        self.registrations
            .push(Box::new(|reg: &mut Registrar<'_, K>| {
                let informer = reg.factory.informer::<C>();
                ensure_index(
                    informer.store(),
                    CONTROLLER_UID_INDEX,
                    controller_uid_index::<C>(),
                    |name, f| informer.add_indexer(name, f),
                );
                informer.add_event_handler(OwnedHandler {
                    queue: reg.queue.clone(),
                    owners: reg.own.clone(),
                })?;
                reg.add(informer);
                Ok(())
            }));
        self
    }

    /// Reconciles the objects `map` names when an object of type `X` changes (both the old
    /// and the new version are mapped on an update).
    #[must_use]
    pub fn watches<X, I>(mut self, map: impl Fn(&X) -> I + Send + Sync + 'static) -> Self
    where
        X: InformerObject,
        I: IntoIterator<Item = ObjectKey>,
    {
        let map: MapFn<X> = Arc::new(move |x: &X| map(x).into_iter().collect());
        self.registrations
            .push(Box::new(move |reg: &mut Registrar<'_, K>| {
                let informer = reg.factory.informer::<X>();
                informer.add_event_handler(WatchHandler {
                    queue: reg.queue.clone(),
                    map,
                    _type: PhantomData,
                })?;
                reg.add(informer);
                Ok(())
            }));
        self
    }

    /// How many keys are reconciled at once (at least 1; default 2).
    #[must_use]
    pub fn workers(mut self, workers: usize) -> Self {
        self.workers = workers.max(1);
        self
    }

    /// Gives up (runs no worker) when the caches have not synced after `timeout`; by default
    /// it waits until stopped, naming the caches it waits for every 15 s.
    #[must_use]
    pub fn cache_sync_timeout(mut self, timeout: Duration) -> Self {
        self.cache_sync_timeout = Some(timeout);
        self
    }

    /// The controller reconciling with `reconcile`: nothing runs until it is started (by a
    /// manager, or [`Reconciler::start`]).
    pub fn run<F, Fut, E>(self, reconcile: F) -> Reconciler
    where
        F: Fn(Arc<K>, Arc<Context>) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Action, E>> + Send + 'static,
        E: Into<BoxError> + 'static,
    {
        let settings = Settings {
            name: self.name,
            workers: self.workers,
            cache_sync_timeout: self.cache_sync_timeout,
            registrations: self.registrations,
        };
        Reconciler {
            name: self.name,
            start: Box::new(move |env| runner::start(settings, reconcile, env)),
        }
    }
}

type Start = Box<dyn FnOnce(Env) -> Result<Run, InformerError> + Send>;

/// A controller built by a [`Builder`], ready to start.
pub struct Reconciler {
    name: &'static str,
    start: Start,
}

impl fmt::Debug for Reconciler {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Reconciler")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl Reconciler {
    /// The controller's name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Registers its informers and handlers on `env`'s factory and starts its event
    /// broadcaster (inside a tokio runtime); the caller starts the factory, then the returned
    /// run.
    ///
    /// # Errors
    ///
    /// When an informer it needs has already stopped.
    pub fn start(self, env: Env) -> Result<Run, InformerError> {
        (self.start)(env)
    }
}
