//! `sample-controller`: the Foo controller, optionally with kcm's Deployment and ReplicaSet
//! controllers, on kcm-manager (kube-controller-manager's flags, leader election, metrics and
//! health serving, logging, SIGTERM/SIGINT); `sample-controller crd` prints the CRD.

use std::process::ExitCode;

use clap::{Args, Subcommand};
use kcm_manager::{Manager, Options};
use kcm_sample_controller::{FooControllerConfig, controllers};

/// The sample's own flags, beside kcm-manager's and its controllers'.
#[derive(Debug, Args)]
struct SampleFlags {
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

/// Without `--with-builtin-controllers`, kcm's controllers run only where `--controllers`
/// names them: they are turned off after the entries given, and the first entry naming a
/// controller wins.
fn builtin_off_unless_named(options: &mut Options) {
    for controller in kcm::controllers() {
        options.controllers.push(format!("-{}", controller.name()));
    }
}

fn main() -> ExitCode {
    // Every controller is registered before the command line is parsed: their flags and
    // feature gates are on it, and `--help` lists them.
    let manager = Manager::new("sample-controller")
        .about(
            "A Foo custom resource that owns a Deployment, on kcm-rs. Controllers: \
             sample-controller; with --with-builtin-controllers also deployment-controller and \
             replicaset-controller.",
        )
        // Not kube-controller-manager's 10257: the two may run on one host.
        .flag_default("secure-port", "10260")
        .controllers(controllers(FooControllerConfig::default(), true));
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
    if !flags.with_builtin_controllers {
        builtin_off_unless_named(&mut parsed.options);
    }
    manager.run_main(parsed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kcms_controllers_run_only_when_asked_for() {
        let manager = Manager::new("sample-controller")
            .controllers(controllers(FooControllerConfig::default(), true));
        // (--controllers, --with-builtin-controllers, the enabled controllers)
        type Case<'a> = (&'a str, bool, &'a [&'a str]);
        let cases: &[Case] = &[
            ("*", false, &["sample-controller"]),
            (
                "*",
                true,
                &[
                    "sample-controller",
                    "deployment-controller",
                    "replicaset-controller",
                ],
            ),
            (
                "*,deployment",
                false,
                &["sample-controller", "deployment-controller"],
            ),
            (
                "*,-replicaset",
                true,
                &["sample-controller", "deployment-controller"],
            ),
            ("deployment-controller", false, &["deployment-controller"]),
        ];
        for (flag, with_builtin, want) in cases {
            let argv = ["sample-controller", &format!("--controllers={flag}")];
            let (mut parsed, kcm_manager::NoFlags {}) = manager.parse_args(argv).expect("parses");
            if !with_builtin {
                builtin_off_unless_named(&mut parsed.options);
            }
            assert_eq!(
                manager.enabled(&parsed.options),
                *want,
                "{flag} {with_builtin}"
            );
        }
    }
}
