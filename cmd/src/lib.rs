//! `kcm`: kube-controller-manager's Deployment and ReplicaSet controllers, registered on
//! kcm-manager as any binary registers its controllers: each brings its `--controllers` name
//! and alias, its flags (`--concurrent-*-syncs`) and the feature gates it consults.
//!
//! | module | upstream | what |
//! | --- | --- | --- |
//! | `controllers` | `cmd/kube-controller-manager/app/apps.go` (`newDeploymentControllerDescriptor`, `newReplicaSetControllerDescriptor`) | the two controllers' registrations |
//! | `flags` | `cmd/kube-controller-manager/app/options/{deployment,replicaset}controller.go` | `--concurrent-deployment-syncs`, `--concurrent-replicaset-syncs` |
//! | `feature_gates` | `pkg/features/kube_features.go` | the gates the two consult, with v1.37's stages and defaults |
//! | `managed_fields` | — | informer caches without managedFields |
//!
//! The binary is `kcm::manager().main()`; another binary can run kcm's controllers beside its
//! own:
//!
//! ```no_run
//! fn main() -> std::process::ExitCode {
//!     kcm_manager::Manager::new("my-controller-manager")
//!         .controllers(kcm::controllers())
//!         .main()
//! }
//! ```

mod controllers;
mod feature_gates;
mod flags;
mod managed_fields;

use kcm_manager::{Controller, Manager};

pub use controllers::{deployment_controller, replicaset_controller};

/// `-h`'s description of `kcm`.
const ABOUT: &str = "kcm runs kube-controller-manager's Deployment and ReplicaSet controllers.";

/// `--help`'s description of `kcm`.
const LONG_ABOUT: &str = "kcm runs kube-controller-manager's Deployment and ReplicaSet \
    controllers.\n\nRun it beside kube-controller-manager started with \
    --controllers=*,-deployment-controller,-replicaset-controller; everything it writes (names, \
    labels, annotations, owner references, status, conditions, events) matches \
    kube-controller-manager's.\n\nkube-controller-manager's other flags (--allocate-node-cidrs, \
    --cluster-cidr, --root-ca-file, --service-account-private-key-file, ...) are accepted and \
    ignored, named in one warning at start, so its command line can be copied as it is.";

/// `deployment-controller` and `replicaset-controller`, in that order.
pub fn controllers() -> Vec<Controller> {
    vec![deployment_controller(), replicaset_controller()]
}

/// The `kcm` controller-manager: kcm's two controllers on kcm-manager, named and described.
pub fn manager() -> Manager {
    Manager::new("kcm")
        .about(ABOUT)
        .long_about(LONG_ABOUT)
        .controllers(controllers())
}
