//! Utilities shared by the ReplicaSet and Deployment controllers — the Rust
//! counterpart of kube-controller-manager's `pkg/controller` package and of
//! client-go's `tools/record`.
//!
//! | module | upstream | what |
//! | --- | --- | --- |
//! | [`builder`] | controller-runtime's and kube-runtime's builders | your own controller in a few lines, on this machinery |
//! | [`api_write`] | — | one debug line (`-v=2`) per API write: verb, resource, key, reason, result |
//! | [`expectations`] | `ControllerExpectations`, `UIDTrackingControllerExpectations` | pending creates/deletes per controller key, 5-minute TTL |
//! | [`pod_view`] | — | [`PodView`], a ~12× smaller cached Pod |
//! | [`owner_index`] | `PodControllerIndex`, `FilterPodsByOwner`, the `controllerUID` index | pods and ReplicaSets by controller, orphans per namespace |
//! | [`label_index`] | — | objects by the value of one label (`pod-template-hash`) |
//! | [`related_pods`] | `getReplicaSetsWithSameController`, `getIndirectlyRelatedPods` | pods of a ReplicaSet's siblings, through the indexes |
//! | [`pod_util`] | `IsPodActive`, `IsPodReady`, `IsPodAvailable`, deletion cost | pod predicates over [`PodLike`](pod_util::PodLike) |
//! | [`ranking`] | `ActivePodsWithRanks`, `getPodsToDelete` | which pods to delete first |
//! | [`slow_start`] | `slowStartBatch` | 1, 2, 4, … concurrent calls, stop at first failing batch |
//! | [`pod_control`] | `PodControlInterface`, `RealPodControl`, `FakePodControl` | create/delete/patch pods + events |
//! | [`rs_control`] | `RSControlInterface` | patch ReplicaSets |
//! | [`controller_ref_manager`] | `ClaimPods`, `ClaimReplicaSets`, `RecheckDeletionTimestamp` | adopt/release dependents |
//! | [`event_recorder`], [`event_correlator`] | `tools/record` | core/v1 Events with aggregation, dedup and spam filtering |
//! | [`worker`] | `processNextWorkItem` / `handleErr` | worker loop over `kcm-workqueue` |
//! | [`sync_metrics`] | — | sync durations for a process-wide observer (metrics) |
//! | [`consistency`] | `pkg/controller/util/consistency` | stale-controller consistency: a sync waits until the caches show the controller's own writes |
//! | [`namespace_gate`] | — | which namespaces a sharded controller may sync ([`NamespaceGate`]) |
//! | [`names`] | `getPodsPrefix` | object-name validation and generation |
//! | [`error`] | `apierrors.Is*` | [`ControlError`] |
//! | [`clock`] | `k8s.io/utils/clock` | real and fake clocks |
//! | `testing` (feature `testing`) | — | a `kube::Client` over an in-process mock API server |
//!
//! Libraries using this crate pick no k8s-openapi version feature; binaries and
//! tests do (e.g. `features = ["v1_33"]`).
//!
//! # Example: one scale-up step of a ReplicaSet-like controller
//!
//! ```
//! use std::sync::Arc;
//! use k8s_openapi::api::apps::v1::ReplicaSet;
//! use k8s_openapi::api::core::v1::PodTemplateSpec;
//! use kcm_controller::controller_ref_manager::ControllerRefOwner;
//! use kcm_controller::event_recorder::object_reference;
//! use kcm_controller::expectations::UIDTrackingControllerExpectations;
//! use kcm_controller::pod_control::{FakePodControl, PodControl};
//! use kcm_controller::slow_start::{slow_start_batch, SLOW_START_INITIAL_BATCH_SIZE};
//! use kcm_store::ObjectKey;
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() {
//! let mut rs = ReplicaSet::default();
//! rs.metadata.name = Some("web".into());
//! rs.metadata.namespace = Some("default".into());
//! rs.metadata.uid = Some("uid-1".into());
//! let key = &ObjectKey::new("default", "web");
//! let owner = ControllerRefOwner::of(&rs);
//! let pods = FakePodControl::default();
//! let expectations = UIDTrackingControllerExpectations::new();
//!
//! // Expect 3 creations *before* issuing them, then create in slow-start batches.
//! let (template, owner_ref, controller_ref) =
//!     (PodTemplateSpec::default(), object_reference(&rs), owner.controller_ref());
//! expectations.expect_creations(key, 3);
//! let (created, err) = slow_start_batch(3, SLOW_START_INITIAL_BATCH_SIZE, || {
//!     pods.create_pods("default", &template, &owner_ref, &controller_ref)
//! })
//! .await;
//! assert_eq!((created, err.is_none()), (3, true));
//! assert!(!expectations.satisfied_expectations(key)); // until the informer sees the pods
//! for _ in 0..3 {
//!     expectations.creation_observed(key); // from the pod add handler
//! }
//! assert!(expectations.satisfied_expectations(key));
//! assert_eq!(pods.state().templates.len(), 3);
//! # }
//! ```

pub mod api_write;
pub mod builder;
pub mod clock;
pub mod consistency;
pub mod controller_ref_manager;
pub mod error;
pub mod event_correlator;
pub mod event_recorder;
pub mod expectations;
pub mod label_index;
mod lru;
pub mod names;
pub mod namespace_gate;
pub mod owner_index;
mod patch;
pub mod pod_control;
pub mod pod_util;
pub mod pod_view;
pub mod ranking;
pub mod related_pods;
pub mod rs_control;
pub mod slow_start;
pub mod sync_metrics;
#[cfg(any(test, feature = "testing"))]
pub mod testing;
pub mod worker;

pub use error::ControlError;
pub use expectations::{ControllerExpectations, UIDTrackingControllerExpectations};
pub use namespace_gate::NamespaceGate;
pub use pod_view::PodView;
