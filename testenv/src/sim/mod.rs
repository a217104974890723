//! The rest of a cluster, simulated against the test API server through its own HTTP API: nodes with
//! heartbeats, a scheduler, kubelets, the garbage collector and the namespace controller.
//!
//! Every component talks to the server the way the real one talks to kube-apiserver: list + watch
//! through kcm-informer's shared informers and kcm-reflector (surviving 410 Gone and dropped
//! connections), work on kcm-workqueue queues, then writes — bindings, `/status` patches, deletes
//! with preconditions, finalizer patches — each with its own resourceVersion, so controllers under
//! test see the same intermediate states as in a real cluster. The garbage collector and the
//! namespace controller find what to watch and empty through discovery, so they handle every kind
//! the server serves, custom resources included.
//!
//! Pods can ask for special behaviour through annotations (see [`annotations`]), so a Deployment's
//! template can produce slow, never-ready, crash-looping, failing or unschedulable pods; images
//! matching [`SimConfig::missing_images`] are never pulled (`ErrImagePull`, `ImagePullBackOff`).
//!
//! ```no_run
//! # async fn demo(client: kube::Client) -> Result<(), Box<dyn std::error::Error>> {
//! use kcm_testenv::sim::{SimConfig, Simulation};
//! use std::time::Duration;
//!
//! let config = SimConfig { nodes: 2, pod_ready_after: Duration::from_millis(50), ..SimConfig::default() };
//! let sim = Simulation::start(client, config).await?;
//! // ... create pods: they get bound to node-1 / node-2 and become Ready 50 ms later ...
//! sim.set_node_ready("node-1", false).await?; // node-1 NotReady, its pods lose Ready
//! sim.shutdown().await;
//! # Ok(()) }
//! ```

pub mod annotations;
mod changes;
mod config;
mod discovery;
mod error;
mod events;
mod gc;
mod kubelet;
mod metadata;
mod namespace;
pub mod node_control;
mod nodes;
mod scheduler;
mod simulation;
mod timestamps;

pub use annotations::PodBehaviour;
pub use config::{DEFAULT_MISSING_IMAGES, SimArgs, SimConfig};
pub use error::SimError;
pub use nodes::{NODE_LEASE_NAMESPACE, UNREACHABLE_TAINT};
pub use scheduler::DEFAULT_SCHEDULER;
pub use simulation::{SimHandle, Simulation};
