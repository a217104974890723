//! `kcm`: kube-controller-manager's Deployment and ReplicaSet controllers, in Rust.
//!
//! The controllers are not wired into the binary yet (see README.md, Status).

fn main() -> std::process::ExitCode {
    eprintln!("kcm: the controllers are not wired into this binary yet (see README.md, Status)");
    std::process::ExitCode::FAILURE
}
