//! A sample controller on kcm-rs, the Rust counterpart of
//! [kubernetes/sample-controller](https://github.com/kubernetes/sample-controller).
//!
//! A [`Foo`] (`samplecontroller.k8s.io/v1alpha1`) names a Deployment and a replica count; the
//! [`FooController`] creates that Deployment (controlled by the Foo, so the garbage collector
//! deletes it with the Foo), keeps its `spec.replicas` equal to the Foo's, writes the
//! Deployment's available replicas into the Foo's status, and records the events upstream's
//! sample records (`Synced`, `ErrResourceExists`).
//!
//! It is written on `kcm-controller`'s builder ([`foo_reconciler`]: `Builder::<Foo>`
//! `.owns::<Deployment>().run(reconcile)`), which runs it the way kcm's own controllers run:
//! shared informers and listers, a rate-limited work queue, a worker pool, an event recorder,
//! the namespace gate of a sharded manager and the write fence's requeue. It runs on
//! `kcm-manager`, registered beside (optionally) kcm's Deployment and ReplicaSet controllers
//! ([`controllers()`]).
//!
//! | module | upstream | what |
//! | --- | --- | --- |
//! | [`foo`] | `pkg/apis/samplecontroller/v1alpha1`, `artifacts/examples/crd.yaml` | the type and its CRD |
//! | [`deployment`] | `newDeployment`, `metav1.IsControlledBy` | the owned Deployment |
//! | [`plan`] | `syncHandler`'s decisions | what one sync does, as data |
//! | [`sync`] | `syncHandler`, `updateFooStatus` | the reconcile's reads and writes |
//! | [`controller`] | `NewController`, `Run`, `handleObject` | the builder: what triggers a reconcile |
//! | [`mod@controllers`] | `main.go` | the controllers the manager runs |
//!
//! Running it in-process against a cluster (as the tests do), then creating a Foo:
//!
//! ```no_run
//! use kcm_manager::{Manager, Options};
//! use kcm_sample_controller::{Foo, FooControllerConfig, FooSpec, controllers};
//! use kube::api::{Api, PostParams};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn example() -> anyhow::Result<()> {
//! let config = kube::Config::infer().await?;
//! let manager = Manager::new("sample-controller")
//!     .controllers(controllers(FooControllerConfig::default(), true));
//! // No leader election, nothing served: kcm-manager's flags as a test would give them.
//! let (parsed, kcm_manager::NoFlags {}) =
//!     manager.parse_args(["sample-controller", "--leader-elect=false", "--secure-port=0"])?;
//! let cancel = CancellationToken::new();
//! let client = kube::Client::try_from(config.clone())?;
//! tokio::spawn(async move { manager.run(&parsed.options, config, cancel).await });
//! let foos: Api<Foo> = Api::namespaced(client, "default");
//! let spec = FooSpec { deployment_name: "example-foo".into(), replicas: Some(1) };
//! foos.create(&PostParams::default(), &Foo::new("example-foo", spec)).await?;
//! # Ok(())
//! # }
//! ```

pub mod controller;
pub mod controllers;
pub mod deployment;
pub mod foo;
pub mod plan;
pub mod sync;

pub use controller::{CONTROLLER_NAME, FooControllerConfig, foo_reconciler};
pub use controllers::{controllers, foo_controller};
pub use foo::{Foo, FooSpec, FooStatus, crd, crd_yaml};
