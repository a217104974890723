//! A controller-manager library: what `kcm` does around its controllers, for any binary that
//! runs Kubernetes controllers built on kcm-rs.
//!
//! A [`Manager`] is a registry of named controllers ([`app::Controller`]: a name and a build
//! function) and the `main` around them, as kube-controller-manager's:
//!
//! - kube-controller-manager's flags ([`options`]): `--kubeconfig`, `--master`,
//!   `--controllers` (`*`, `name`, `-name` over the registered names), `--kube-api-qps`,
//!   leader election, `--sharding=namespace`, secure serving, `--v`/`--vmodule`, ...; a
//!   binary adds flags of its own with [`Manager::parse_args`];
//! - one API client per controller with its own User-Agent and rate limiter, optionally as its
//!   own service account ([`client`]);
//! - one shared informer factory for every controller ([`app::ControllerContext::factory`]);
//! - leader election on a Lease, or sharding by namespace ([`sharding`]), with a write fence
//!   that stops a paused leader's writes;
//! - `/metrics`, `/healthz`, `/livez`, `/readyz` over HTTPS with delegated authentication and
//!   authorization ([`serving`], [`metrics`]);
//! - klog-style text or JSON logs ([`logging`]);
//! - SIGTERM/SIGINT: stop taking work, let in-flight syncs finish within
//!   `--controller-shutdown-timeout`, exit 0 ([`app::run`]).
//!
//! kcm's own Deployment and ReplicaSet controllers are in [`builtin`]; the `kcm` binary is
//! `Manager::new("kcm").controllers(builtin::controllers()).main()`.
//!
//! A binary registering a controller of its own beside kcm's (`--controllers=*,-replicaset`
//! then runs `configmap-logger` and the Deployment controller):
//!
//! ```no_run
//! use std::sync::Arc;
//!
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kcm_informer::EventHandlerFns;
//! use kcm_manager::app::{Controller, ControllerContext, RunFuture};
//! use kcm_manager::{Manager, builtin};
//!
//! fn configmap_logger() -> Controller {
//!     Controller {
//!         name: "configmap-logger",
//!         // Called once leading: register informers and handlers, return the run function.
//!         build: Box::new(|ctx: &ControllerContext| {
//!             ctx.factory.informer::<ConfigMap>().add_event_handler(
//!                 EventHandlerFns::new().on_add(|cm: &Arc<ConfigMap>, _| {
//!                     tracing::info!(name = ?cm.metadata.name, "config map");
//!                 }),
//!             )?;
//!             Ok(Box::new(|cancel| {
//!                 // Run workers until `cancel` fires, then return once they finished.
//!                 Box::pin(async move { cancel.cancelled().await }) as RunFuture
//!             }))
//!         }),
//!     }
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     Manager::new("my-controller-manager")
//!         .controllers(builtin::controllers())
//!         .controller(configmap_logger())
//!         .main()
//! }
//! ```

pub mod app;
pub mod builtin;
pub mod client;
pub mod error_chain;
pub mod feature_gates;
pub mod logging;
pub mod manager;
pub mod metrics;
pub mod metrics_text;
pub mod options;
pub mod process_metrics;
pub mod serving;
pub mod sharding;

pub use app::{Controller, ControllerContext, Exit, RunFuture};
pub use manager::{Manager, RUNTIME_WORKER_THREADS};
pub use options::{NoFlags, Options, ParsedArgs};
