//! What a controller on the builder names: `use kcm_manager::prelude::*;`.
//!
//! ```no_run
//! use std::sync::Arc;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kcm_manager::prelude::*;
//!
//! async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Context>) -> Result<Action, BoxError> {
//!     ctx.event(cm.as_ref(), EventType::Normal, "Seen", format!("{} keys", cm.data.iter().len()));
//!     Ok(Action::done())
//! }
//!
//! fn main() -> std::process::ExitCode {
//!     Manager::new("configmap-watcher")
//!         .controller(Controller::for_::<ConfigMap>("configmap-watcher").run(reconcile))
//!         .main()
//! }
//! ```

pub use crate::{
    Action, BoxError, Context, Controller, EventType, Finalize, Manager, ObjectKey, finalizer,
};
pub use kube::{Resource, ResourceExt};
