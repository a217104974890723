//! `kcm`: kube-controller-manager's Deployment and ReplicaSet controllers, in Rust: the
//! controller-manager of `kcm-manager` with kcm's two controllers registered ([`kcm::manager`]).

use std::process::ExitCode;

fn main() -> ExitCode {
    kcm::manager().main()
}
