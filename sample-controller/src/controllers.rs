//! What the controller-manager runs: the Foo controller as an entry of kcm-manager's registry
//! of named controllers, with its flag `--workers`, and, for clusters without
//! kube-controller-manager's, kcm's Deployment and ReplicaSet controllers beside it (upstream's
//! `main.go` wiring).
//!
//! The manager hands every controller the same informer factory (started once all were built),
//! its own client, and stops them together.

use kcm_manager::{Controller, ControllerFlags};

use crate::controller::{CONTROLLER_NAME, FooControllerConfig, foo_reconciler};

/// The Foo controller's flags.
#[derive(Debug, Clone, clap::Args)]
pub struct FooFlags {
    /// Concurrent Foo syncs.
    #[arg(long, help_heading = "Sample controller flags", default_value_t = 2)]
    pub workers: usize,
}

impl ControllerFlags for FooFlags {}

/// The Foo controller, registered under [`CONTROLLER_NAME`] (`--controllers=*,-sample-controller`
/// turns it off) with its flag `--workers` ([`FooFlags`]), which sets `config`'s workers.
pub fn foo_controller(config: FooControllerConfig) -> Controller {
    Controller::new(CONTROLLER_NAME, move |ctx| {
        let flags = ctx.options.flags::<FooFlags>()?;
        let config = FooControllerConfig {
            workers: flags.workers,
            ..config
        };
        Ok(foo_reconciler(config).start(ctx.env())?)
    })
    .flags::<FooFlags>()
}

/// The Foo controller and, with `with_builtin_controllers`, kcm's Deployment and ReplicaSet
/// controllers ([`kcm::controllers`]) with their flags and feature gates.
///
/// ```no_run
/// use kcm_sample_controller::{FooControllerConfig, controllers};
///
/// fn main() -> std::process::ExitCode {
///     kcm_manager::Manager::new("sample-controller")
///         .controllers(controllers(FooControllerConfig::default(), true))
///         .main()
/// }
/// ```
pub fn controllers(foo: FooControllerConfig, with_builtin_controllers: bool) -> Vec<Controller> {
    let mut controllers = vec![foo_controller(foo)];
    if with_builtin_controllers {
        controllers.extend(kcm::controllers());
    }
    controllers
}
