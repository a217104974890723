//! A binary's command line as a [`Manager`] composes it: named and described for the binary,
//! its controllers listed, their flags parsed, placed and validated, their gates named.

use super::*;
use crate::controller::Controller;
use crate::feature_gates::{FeatureGate, Stage};
use crate::flags::ControllerFlags;

/// Flags of the test's controller.
#[derive(Debug, Clone, clap::Args)]
struct FooFlags {
    /// The number of foo objects that are allowed to sync concurrently
    #[arg(long, help_heading = "Foo controller flags", default_value_t = 5)]
    concurrent_foo_syncs: u32,
}

impl ControllerFlags for FooFlags {
    fn validate(&self) -> Result<(), String> {
        if self.concurrent_foo_syncs == 0 {
            return Err("--concurrent-foo-syncs must be greater than 0".into());
        }
        Ok(())
    }
}

const FOO_GATE: FeatureGate = FeatureGate {
    name: "FooGate",
    stage: Stage::Beta,
    default: true,
};

fn idle(name: &'static str) -> Controller {
    Controller::new(name, |_| {
        Ok(|cancel: CancellationToken| async move { cancel.cancelled().await })
    })
}

fn foo_manager() -> Manager {
    Manager::new("foo-manager")
        .about("Runs foos.")
        .flag_default("secure-port", "10260")
        .controller(
            idle("foo-controller")
                .alias("foo")
                .flags::<FooFlags>()
                .feature_gates(&[FOO_GATE]),
        )
        // A second controller with the same flags and gate: each is on the command line once.
        .controller(
            idle("bar-controller")
                .flags::<FooFlags>()
                .feature_gates(&[FOO_GATE]),
        )
}

fn help(manager: &Manager) -> String {
    manager.command().render_long_help().to_string()
}

#[test]
fn a_binary_is_named_and_lists_its_controllers_flags_and_gates() {
    let manager = foo_manager();
    assert_eq!(manager.names(), ["foo-controller", "bar-controller"]);
    let text = help(&manager);
    assert!(text.starts_with("Runs foos."), "{text}");
    assert!(text.contains("Usage: foo-manager"), "{text}");
    for line in [
        "All controllers: foo-controller, bar-controller (aliases: foo)\n",
        "foo-manager consults FooGate and ControllerManagerReleaseLeaderElectionLockOnExit \
         (v1.37's defaults)",
        "foo-manager's own Lease by default",
        "[default: foo-manager]",
        "[default: 10260]",
    ] {
        assert!(text.contains(line), "missing {line:?} in\n{text}");
    }
    // The controllers' flags come after the feature gates and before leader election.
    let at = |heading: &str| text.find(heading).unwrap_or_else(|| panic!("{heading}"));
    assert!(at("Feature gate flags:") < at("Foo controller flags:"));
    assert!(at("Foo controller flags:") < at("Leader-election flags:"));
    assert_eq!(text.matches("--concurrent-foo-syncs").count(), 1, "{text}");
}

#[test]
fn controller_flags_are_parsed_for_the_controller() {
    let manager = foo_manager();
    let (parsed, NoFlags {}) = manager
        .parse_args([
            "foo-manager",
            "--concurrent-foo-syncs",
            "7",
            "--controllers=*,-foo",
        ])
        .expect("parses");
    let flags = parsed.options.flags::<FooFlags>().expect("registered");
    assert_eq!(flags.concurrent_foo_syncs, 7);
    assert_eq!(parsed.options.leader_elect_resource_name, "foo-manager");
    assert_eq!(parsed.options.serving.secure_port, 10260);
    assert_eq!(manager.enabled(&parsed.options), ["bar-controller"]);
    assert_eq!(parsed.options.controller_flags().validate(), Ok(()));

    let (parsed, NoFlags {}) = manager
        .parse_args(["foo-manager", "--concurrent-foo-syncs=0"])
        .expect("parses");
    assert_eq!(
        parsed.options.controller_flags().validate(),
        Err("--concurrent-foo-syncs must be greater than 0".into())
    );
    assert!(
        manager
            .parse_args::<NoFlags, _, _>(["foo-manager", "--concurrent-foo-syncs=x"])
            .is_err()
    );
}

#[test]
fn flags_no_controller_brings_are_an_error_to_read_and_foreign_to_parse() {
    let manager = Manager::new("bare").controller(idle("bar-controller"));
    let (parsed, NoFlags {}) = manager
        .parse_args(["bare", "--concurrent-deployment-syncs=3"])
        .expect("parses");
    // kube-controller-manager's flag, which this binary does not have: accepted, ignored.
    assert_eq!(parsed.ignored, ["concurrent-deployment-syncs"]);
    let error = parsed
        .options
        .flags::<FooFlags>()
        .expect_err("not registered");
    assert!(error.to_string().contains("FooFlags"), "{error}");
}

#[test]
fn a_binarys_own_flags_parse_beside_the_managers() {
    #[derive(Debug, clap::Args)]
    struct OwnFlags {
        /// A flag of the binary's own.
        #[arg(long, default_value_t = 2)]
        workers: usize,
    }
    let manager = foo_manager();
    let argv = [
        "foo-manager",
        "--workers",
        "7",
        "--kube-api-qps=9",
        "--cluster-cidr=10.0.0.0/8",
    ];
    let (parsed, own): (ParsedArgs, OwnFlags) = manager.parse_args(argv).expect("parses");
    assert_eq!(own.workers, 7);
    assert_eq!(parsed.options.kube_api_qps, 9.0);
    assert_eq!(parsed.ignored, ["cluster-cidr"]);
    let (_, own): (ParsedArgs, OwnFlags) = manager.parse_args(["foo-manager"]).expect("parses");
    assert_eq!(own.workers, 2);
    assert!(
        manager
            .parse_args::<OwnFlags, _, _>(["foo-manager", "--workers=x"])
            .is_err()
    );
    // `--help` keeps the binary's description, not `OwnFlags`' doc comment.
    let help = manager
        .parse_args::<OwnFlags, _, _>(["foo-manager", "--help"])
        .expect_err("help")
        .to_string();
    assert!(help.starts_with("Runs foos."), "{help}");
    assert!(help.contains("--workers <WORKERS>"), "{help}");
}

#[test]
fn a_manager_without_a_description_gets_one() {
    let text = help(&Manager::new("plain"));
    assert!(
        text.starts_with("A controller-manager built on kcm-manager."),
        "{text}"
    );
    assert!(text.contains("plain consults ControllerManagerReleaseLeaderElectionLockOnExit ("));
}
