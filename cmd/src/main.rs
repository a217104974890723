//! `kcm`: kube-controller-manager's Deployment and ReplicaSet controllers, in Rust: the
//! controller-manager of `kcm-manager` with kcm's two controllers registered.

use std::process::ExitCode;

fn main() -> ExitCode {
    kcm_manager::Manager::new("kcm")
        .controllers(kcm_manager::builtin::controllers())
        .main()
}
