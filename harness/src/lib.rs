//! Controllers under test in one call.
//!
//! [`Harness::new`]`("greetings").crd(crd).controller(c).start()` starts kcm-testenv in the
//! test process (2 simulated nodes whose pods become Ready after 50 ms), or uses the cluster
//! of the kubeconfig named by [`KUBECONFIG_ENV`] (`KCM_TEST_KUBECONFIG`); installs the CRDs
//! and waits until they are established; creates a namespace of its own
//! (`<name>-<random>`); and runs the controllers in-process on kcm-manager as a binary runs
//! them, with test options (no leader election, nothing served, informers scoped to that
//! namespace; more flags with [`HarnessBuilder::args`]). [`Harness::wait_for`] polls with a
//! clear timeout message; [`Harness::stop`] stops the controllers, deletes the namespace and
//! stops kcm-testenv (a harness dropped without `stop` cancels the controllers). The
//! controllers' logs go to the test's output, which `cargo test` shows when the test fails.
//!
//! ```no_run
//! use std::sync::Arc;
//! use k8s_openapi::api::core::v1::ConfigMap;
//! use kcm_harness::Harness;
//! use kcm_manager::prelude::*;
//!
//! async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Context>) -> Result<Action, BoxError> {
//!     ctx.event(cm.as_ref(), EventType::Normal, "Seen", "seen");
//!     Ok(Action::done())
//! }
//!
//! #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
//! async fn configmaps_are_seen() -> anyhow::Result<()> {
//!     let h = Harness::new("watcher")
//!         .controller(Controller::for_::<ConfigMap>("watcher").run(reconcile))
//!         .start()
//!         .await?;
//!     let cm: ConfigMap = serde_json::from_value(serde_json::json!({"metadata": {"name": "a"}}))?;
//!     h.api::<ConfigMap>().create(&Default::default(), &cm).await?;
//!     h.wait_for("the Seen event", || async {
//!         let events = h.api::<k8s_openapi::api::core::v1::Event>().list(&Default::default()).await?;
//!         Ok(events.items.into_iter().find(|e| e.reason.as_deref() == Some("Seen")))
//!     })
//!     .await?;
//!     h.stop().await;
//!     Ok(())
//! }
//! ```

mod crds;
mod harness;

pub use harness::{Harness, HarnessBuilder, KUBECONFIG_ENV};
