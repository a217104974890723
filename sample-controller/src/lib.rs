//! A sample controller on kcm-rs, the Rust counterpart of
//! [kubernetes/sample-controller](https://github.com/kubernetes/sample-controller).
//!
//! A [`Foo`] (`samplecontroller.k8s.io/v1alpha1`) names a Deployment and a replica count; the
//! [`FooController`] creates that Deployment (controlled by the Foo, so the garbage collector
//! deletes it with the Foo), keeps its `spec.replicas` equal to the Foo's, writes the
//! Deployment's available replicas into the Foo's status, and records the events upstream's
//! sample records (`Synced`, `ErrResourceExists`).
//!
//! It is built the way kcm's own controllers are: shared informers and listers from
//! `kcm-informer`, a rate-limited `kcm-workqueue`, `kcm-controller`'s worker pool and event
//! recorder. [`run`] runs it, optionally beside kcm's Deployment and ReplicaSet controllers.
//!
//! | module | upstream | what |
//! | --- | --- | --- |
//! | [`foo`] | `pkg/apis/samplecontroller/v1alpha1`, `artifacts/examples/crd.yaml` | the type and its CRD |
//! | [`deployment`] | `newDeployment`, `metav1.IsControlledBy` | the owned Deployment |
//! | [`plan`] | `syncHandler`'s decisions | what one sync does, as data |
//! | [`sync`] | `syncHandler`, `updateFooStatus` | the sync's reads and writes |
//! | [`controller`] | `NewController`, `Run`, `handleObject` | informers, handlers, queue, workers |
//! | [`manager`] | `main.go` | one informer factory, the controllers, shutdown |
//!
//! ```no_run
//! use kcm_sample_controller::{Foo, FooSpec, RunOptions, run};
//! use kube::api::{Api, PostParams};
//! use tokio_util::sync::CancellationToken;
//!
//! # async fn example() -> anyhow::Result<()> {
//! let client = kube::Client::try_default().await?;
//! let cancel = CancellationToken::new();
//! tokio::spawn(run(client.clone(), RunOptions::default(), cancel.clone()));
//! let foos: Api<Foo> = Api::namespaced(client, "default");
//! let spec = FooSpec { deployment_name: "example-foo".into(), replicas: Some(1) };
//! foos.create(&PostParams::default(), &Foo::new("example-foo", spec)).await?;
//! # Ok(())
//! # }
//! ```

pub mod controller;
pub mod deployment;
pub mod foo;
pub mod manager;
pub mod plan;
pub mod sync;

pub use controller::{CONTROLLER_NAME, FooController, FooControllerConfig};
pub use foo::{Foo, FooSpec, FooStatus, crd, crd_yaml};
pub use manager::{RunOptions, run};
