//! A controller as a manager registers it ([`Controller`]: its `--controllers` name and
//! aliases, the flags and feature gates it brings, and how to build it) and what it gets when
//! it is built ([`ControllerContext`]), as kube-controller-manager's `ControllerDescriptor`
//! (`cmd/kube-controller-manager/app/controller_descriptor.go`) and `ControllerContext`
//! (`cmd/kube-controller-manager/app/controllermanager.go`).

use std::future::Future;
use std::pin::Pin;

use tokio_util::sync::CancellationToken;

use kcm_controller::NamespaceGate;
use kcm_controller::builder::{Builder, Env, Reconciler};
use kcm_informer::{InformerFactory, InformerObject};

use crate::feature_gates::{FeatureGate, FeatureGates};
use crate::flags::{ControllerFlags, FlagGroup};
use crate::options::Options;

/// What a controller gets when it is built.
#[derive(Clone)]
#[non_exhaustive]
pub struct ControllerContext {
    /// The controller's own client (User-Agent `.../<controller>`, its own rate limiter, and
    /// with `--use-service-account-credentials` its service account's token).
    pub client: kube::Client,
    /// The process's one informer factory; started after every controller was built.
    pub factory: InformerFactory,
    /// Flag values: the manager's, and with [`Options::flags`] the controller's own.
    pub options: Options,
    /// The `--feature-gates` of every gate the registered controllers declared.
    pub feature_gates: FeatureGates,
    /// With `--sharding=namespace`: the namespaces the controller may sync now (give it to
    /// the controller's workers); `None`: every namespace.
    pub namespace_gate: Option<NamespaceGate>,
}

impl std::fmt::Debug for ControllerContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerContext")
            .field("feature_gates", &self.feature_gates)
            .finish_non_exhaustive()
    }
}

impl ControllerContext {
    /// What a builder's controller ([`Controller::for_`]) starts with: this controller's
    /// client, the shared factory, and the namespace gate of a sharded manager.
    pub fn env(&self) -> Env {
        Env::new(self.client.clone(), self.factory.clone())
            .namespace_gate(self.namespace_gate.clone())
    }
}

/// A built controller running: it returns once its token is cancelled and its in-flight work
/// has finished.
pub(crate) type RunFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// What a build returns: the controller's run, started later.
pub(crate) type Run = Box<dyn FnOnce(CancellationToken) -> RunFuture + Send>;

type Build = Box<dyn FnOnce(&ControllerContext) -> anyhow::Result<Run> + Send>;

/// A controller a binary can run, under its `--controllers` name.
///
/// ```
/// use std::sync::Arc;
///
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kcm_informer::EventHandlerFns;
/// use kcm_manager::Controller;
///
/// let logger = Controller::new("configmap-logger", |ctx| {
///     // Called once the process runs its controllers: register informers and handlers.
///     ctx.factory.informer::<ConfigMap>().add_event_handler(
///         EventHandlerFns::new().on_add(|cm: &Arc<ConfigMap>, _| {
///             tracing::info!(name = ?cm.metadata.name, "config map");
///         }),
///     )?;
///     // Then run (workers, say) until the token is cancelled.
///     Ok(|cancel: tokio_util::sync::CancellationToken| async move { cancel.cancelled().await })
/// })
/// .alias("cm-logger");
/// assert_eq!(logger.name(), "configmap-logger");
/// ```
pub struct Controller {
    name: &'static str,
    aliases: Vec<&'static str>,
    flags: Vec<FlagGroup>,
    feature_gates: Vec<FeatureGate>,
    build: Build,
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name)
            .field("aliases", &self.aliases)
            .finish_non_exhaustive()
    }
}

impl Controller {
    /// The controller named `name` (canonical, e.g. `deployment-controller`). `build` is
    /// called once, when the process starts its controllers (after leader election): it
    /// registers the controller's informers and handlers on [`ControllerContext::factory`] and
    /// returns the controller's run, which is started once every controller was built and
    /// runs until its token is cancelled.
    pub fn new<B, R, F>(name: &'static str, build: B) -> Self
    where
        B: FnOnce(&ControllerContext) -> anyhow::Result<R> + Send + 'static,
        R: FnOnce(CancellationToken) -> F + Send + 'static,
        F: Future<Output = ()> + Send + 'static,
    {
        Controller {
            name,
            aliases: Vec::new(),
            flags: Vec::new(),
            feature_gates: Vec::new(),
            build: Box::new(move |ctx: &ControllerContext| {
                let run = build(ctx)?;
                Ok(Box::new(move |cancel| Box::pin(run(cancel)) as RunFuture) as Run)
            }),
        }
    }

    /// A controller of `K` on kcm-controller's [`Builder`], named `name`: `.owns::<C>()`,
    /// `.watches::<X>(map)`, `.workers(n)`, then `.run(reconcile)` gives what
    /// [`Manager::controller`](crate::Manager::controller) registers.
    ///
    /// ```no_run
    /// use std::sync::Arc;
    /// use k8s_openapi::api::apps::v1::Deployment;
    /// use k8s_openapi::api::core::v1::Pod;
    /// use kcm_manager::{Action, BoxError, Context, Controller, Manager};
    ///
    /// async fn reconcile(d: Arc<Deployment>, ctx: Arc<Context>) -> Result<Action, BoxError> {
    ///     let pods = ctx.owned::<Pod, _>(d.as_ref());
    ///     tracing::info!(deployment = ?d.metadata.name, pods = pods.len(), "seen");
    ///     Ok(Action::done())
    /// }
    ///
    /// fn main() -> std::process::ExitCode {
    ///     Manager::new("deployment-watcher")
    ///         .controller(Controller::for_::<Deployment>("deployment-watcher").run(reconcile))
    ///         .main()
    /// }
    /// ```
    pub fn for_<K: InformerObject>(name: &'static str) -> Builder<K> {
        Builder::new(name)
    }

    /// Another name `--controllers` accepts for it (upstream's aliases, e.g. `deployment`).
    pub fn alias(mut self, alias: &'static str) -> Self {
        self.aliases.push(alias);
        self
    }

    /// The flags it brings: added to the command line (a group shared by several controllers
    /// once), validated at start, read back with [`Options::flags`].
    pub fn flags<F: ControllerFlags>(mut self) -> Self {
        self.flags.push(FlagGroup::of::<F>());
        self
    }

    /// The feature gates it consults: `--help` names them, `--feature-gates` sets them (the
    /// others are named in a warning), and [`ControllerContext::feature_gates`] tells their
    /// values.
    pub fn feature_gates(mut self, gates: &[FeatureGate]) -> Self {
        self.feature_gates.extend_from_slice(gates);
        self
    }

    /// Its canonical name.
    pub fn name(&self) -> &'static str {
        self.name
    }

    /// Its aliases.
    pub(crate) fn aliases(&self) -> &[&'static str] {
        &self.aliases
    }

    /// Its flag groups.
    pub(crate) fn flag_groups(&self) -> &[FlagGroup] {
        &self.flags
    }

    /// Its gates.
    pub(crate) fn declared_gates(&self) -> &[FeatureGate] {
        &self.feature_gates
    }

    /// Builds it: its informers and handlers are registered, its run is returned.
    pub(crate) fn build(self, ctx: &ControllerContext) -> anyhow::Result<(&'static str, Run)> {
        let name = self.name;
        let run = (self.build)(ctx).map_err(|e| e.context(format!("starting {name}")))?;
        Ok((name, run))
    }
}

/// A builder's controller, under its name: started with the controller's client, the shared
/// factory and the namespace gate of a sharded manager.
impl From<Reconciler> for Controller {
    fn from(reconciler: Reconciler) -> Self {
        Controller::new(reconciler.name(), move |ctx| {
            Ok(reconciler.start(ctx.env())?)
        })
    }
}
