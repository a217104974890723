//! Names and configuration of the Deployment controller.

use kcm_controller::clock::{SharedClock, real_clock};

use crate::features::FeatureGates;

/// Name of the work queue (and of the controller in logs).
pub const QUEUE_NAME: &str = "deployment";

/// Default number of workers (`--concurrent-deployment-syncs`).
pub const DEFAULT_WORKERS: usize = 5;

/// Settings of a [`DeploymentController`](crate::DeploymentController).
#[derive(Debug, Clone)]
pub struct DeploymentControllerConfig {
    /// Worker tasks (`--concurrent-deployment-syncs`, default 5).
    pub workers: usize,
    /// Feature gates consulted by the decisions.
    pub features: FeatureGates,
    /// Source of "now" for conditions and progress deadlines.
    pub clock: SharedClock,
    /// Sync only Deployments of the namespaces the gate allows (a sharded controller manager's
    /// active shard); `None`: every namespace.
    pub namespace_gate: Option<kcm_controller::NamespaceGate>,
}

impl Default for DeploymentControllerConfig {
    fn default() -> Self {
        Self {
            workers: DEFAULT_WORKERS,
            features: FeatureGates::default(),
            clock: real_clock(),
            namespace_gate: None,
        }
    }
}
