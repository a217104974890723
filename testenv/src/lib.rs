//! An embedded Kubernetes API server over real HTTP, for tests: the real `kubectl` and
//! kube-client talk to it unchanged.
//!
//! Storage is generic over JSON objects with per-kind strategies (defaults, validation,
//! generation, status separation), one global resourceVersion, a bounded watch history
//! (so "too old" really happens), list pagination with consistent snapshots, label and
//! field selectors, watch with bookmarks and streaming lists, deletion with finalizers and
//! graceful pods, merge / JSON / strategic merge patches, and custom resources from
//! CustomResourceDefinitions (structural schema pruning, defaulting and validation, status and
//! scale subresources, discovery). [`TestCluster`] adds the
//! simulated rest of a cluster ([`sim`]: nodes, scheduler, kubelets, garbage collector,
//! namespace controller) and [`faults`] injection around it.
//!
//! Layers, each importing only those below it: [`sim`], [`faults`] and [`TestEnv`] →
//! [`apiserver`] (HTTP) → [`storage`] (objects, revisions, watch history) → [`registry`]
//! (per-kind rules: defaults, strategy, validation, patches, Status errors).
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! use k8s_openapi::api::core::v1::Pod;
//! use kcm_testenv::{TestEnv, TestEnvConfig};
//!
//! let env = TestEnv::start(TestEnvConfig::default()).await?;
//! let pods: kube::Api<Pod> = kube::Api::namespaced(env.client(), "default");
//! let pod: Pod = serde_json::from_value(serde_json::json!({
//!     "metadata": {"name": "web"},
//!     "spec": {"containers": [{"name": "web", "image": "nginx"}]}
//! }))?;
//! let created = pods.create(&Default::default(), &pod).await?;
//! assert_eq!(created.status.and_then(|s| s.phase).as_deref(), Some("Pending"));
//! assert_eq!(pods.list(&Default::default()).await?.items.len(), 1);
//! // `kubectl --kubeconfig <path>` works against the same server
//! assert!(env.kubeconfig_path().exists());
//! assert_eq!(env.counters().count("create", "pods"), 1);
//! env.shutdown().await;
//! # Ok(()) }
//! ```

pub mod apiserver;
pub mod faults;
pub mod kubeconfig;
pub mod registry;
pub mod sim;
pub mod storage;

mod cluster;
mod env;

pub use apiserver::metrics::RequestCounts;
pub use apiserver::{ApiServer, HookDecision, RequestHook, RequestInfo};
pub use cluster::{TestCluster, TestClusterBuilder, TestClusterError};
pub use env::{TestEnv, TestEnvConfig, TestEnvError};
pub use registry::api_status::ApiError;
