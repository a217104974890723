//! `sample-controller`: the Foo controller, optionally with kcm's Deployment and ReplicaSet
//! controllers, on kcm-manager (kube-controller-manager's flags, leader election, metrics and
//! health serving, logging, SIGTERM/SIGINT); `sample-controller crd` prints the CRD.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use kcm_manager::Manager;
use kcm_sample_controller::{FooControllerConfig, controllers};

/// The sample's own flags, beside kcm-manager's.
#[derive(Debug, Args)]
struct SampleFlags {
    /// Concurrent Foo syncs.
    #[arg(long, help_heading = "Sample controller flags", default_value_t = 2)]
    workers: usize,
    /// Also run kcm's Deployment and ReplicaSet controllers (for clusters without
    /// kube-controller-manager's, such as kcm-testenv).
    #[arg(long, help_heading = "Sample controller flags")]
    with_builtin_controllers: bool,
    /// Manage only the objects of this namespace (default: all namespaces).
    #[arg(long, help_heading = "Sample controller flags")]
    namespace: Option<String>,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Print the Foo CustomResourceDefinition as YAML (`| kubectl apply -f -`).
    Crd,
}

fn main() -> ExitCode {
    let manager = Manager::new("sample-controller")
        .about(
            "A Foo custom resource that owns a Deployment, on kcm-rs. Controllers: \
             sample-controller; with --with-builtin-controllers also deployment-controller and \
             replicaset-controller.",
        )
        // Not kube-controller-manager's 10257: the two may run on one host.
        .flag_default("secure-port", "10260");
    let (mut parsed, flags) = match manager.parse_args::<SampleFlags, _, _>(std::env::args_os()) {
        Ok(parsed) => parsed,
        Err(e) => e.exit(),
    };
    if let Some(Command::Crd) = flags.command {
        return match kcm_sample_controller::crd_yaml() {
            Ok(yaml) => {
                print!("{yaml}");
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("sample-controller: {e}");
                ExitCode::FAILURE
            }
        };
    }
    parsed.options.namespace = flags.namespace;
    let foo = FooControllerConfig {
        workers: flags.workers,
        ..FooControllerConfig::default()
    };
    manager
        .controllers(controllers(foo, flags.with_builtin_controllers))
        .run_main(parsed)
}
