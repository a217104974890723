//! A controller-manager library: what `kcm` does around its controllers, for any binary that
//! runs Kubernetes controllers built on kcm-rs.
//!
//! A [`Manager`] is a registry of named controllers ([`Controller`]: a name, the flags and
//! feature gates it brings, and a build function) and the `main` around them, as
//! kube-controller-manager's:
//!
//! - kube-controller-manager's flags ([`Options`]): `--kubeconfig`, `--master`,
//!   `--controllers` (`*`, `name`, `-name` over the registered names and aliases),
//!   `--kube-api-qps`, leader election, `--sharding=namespace`, secure serving,
//!   `--v`/`--vmodule`, ...; each controller's own flags ([`ControllerFlags`]) and feature gates
//!   ([`FeatureGate`]) beside them, and the binary's own flags with [`Manager::parse_args`];
//!   kube-controller-manager's flags that the binary does not have are accepted and named in
//!   one warning;
//! - one API client per controller with its own User-Agent and rate limiter, optionally as its
//!   own service account ([`ControllerContext::client`]);
//! - one shared informer factory for every controller ([`ControllerContext::factory`]);
//! - leader election on a Lease, or sharding by namespace
//!   ([`ControllerContext::namespace_gate`]), with a write fence that stops a paused leader's
//!   writes;
//! - `/metrics`, `/healthz`, `/livez`, `/readyz` over HTTPS with delegated authentication and
//!   authorization;
//! - klog-style text or JSON logs;
//! - SIGTERM/SIGINT: stop taking work, let in-flight syncs finish within
//!   `--controller-shutdown-timeout`, exit 0 ([`Exit`]).
//!
//! kcm's own Deployment and ReplicaSet controllers are registered the same way by the `kcm`
//! binary (the `kcm` crate in `cmd/`: `kcm::manager().main()`).
//!
//! A controller of your own in one line of wiring: [`Controller::for_`] (kcm-controller's
//! builder: owned and watched types, workers, and the reconcile), registered with
//! [`Manager::controller`]; `use kcm_manager::prelude::*` brings what a reconcile needs. The
//! sample controller's README (`sample-controller/README.md`) is the tutorial.
//!
//! A binary with a controller of its own written by hand, its flag and a feature gate:
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kcm_informer::EventHandlerFns;
//! use kcm_manager::{Controller, ControllerFlags, FeatureGate, Manager, Stage};
//!
//! /// The ConfigMap logger's flags.
//! #[derive(Debug, Clone, clap::Args)]
//! struct LoggerFlags {
//!     /// Log the data of each config map too.
//!     #[arg(long, help_heading = "ConfigMap logger flags")]
//!     log_data: bool,
//! }
//!
//! impl ControllerFlags for LoggerFlags {}
//!
//! const QUIET: FeatureGate = FeatureGate { name: "QuietLogger", stage: Stage::Alpha, default: false };
//!
//! fn configmap_logger() -> Controller {
//!     // Called once the process runs its controllers: register informers and handlers.
//!     Controller::new("configmap-logger", |ctx| {
//!         let log_data = ctx.options.flags::<LoggerFlags>()?.log_data;
//!         let quiet = ctx.feature_gates.enabled(&QUIET);
//!         ctx.factory.informer::<ConfigMap>().add_event_handler(
//!             EventHandlerFns::new().on_add(move |cm: &Arc<ConfigMap>, _| {
//!                 if !quiet {
//!                     let data = log_data.then(|| format!("{:?}", cm.data));
//!                     tracing::info!(name = ?cm.metadata.name, ?data, "config map");
//!                 }
//!             }),
//!         )?;
//!         // Run workers until `cancel` fires, then return once they finished.
//!         Ok(|cancel: tokio_util::sync::CancellationToken| async move {
//!             cancel.cancelled().await
//!         })
//!     })
//!     .alias("cm-logger")
//!     .flags::<LoggerFlags>()
//!     .feature_gates(&[QUIET])
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     Manager::new("my-controller-manager")
//!         .about("Logs config maps.")
//!         .controller(configmap_logger())
//!         .main()
//! }
//! ```

/// Compiles the README's example as a doctest.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;

mod client;
mod command_line;
mod controller;
mod error_chain;
mod feature_gates;
mod flags;
mod logging;
mod manager;
mod metrics;
mod metrics_text;
mod options;
pub mod prelude;
mod process;
mod process_metrics;
mod registry;
mod serving;
mod sharding;
#[cfg(test)]
mod test_support;

pub use command_line::{NoFlags, ParsedArgs};
pub use controller::{Controller, ControllerContext};
pub use feature_gates::{FeatureGate, FeatureGates, Stage};
pub use flags::ControllerFlags;
pub use kcm_controller::builder::{Action, BoxError, Context, Finalize, finalizer};
pub use kcm_controller::event_recorder::EventType;
pub use kcm_informer::ObjectKey;
pub use manager::{Manager, RUNTIME_WORKER_THREADS};
pub use options::{Options, ServingOptions};
pub use process::Exit;
