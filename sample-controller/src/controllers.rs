//! What the controller-manager runs: the Foo controller as an entry of kcm-manager's registry
//! of named controllers, and, for clusters without kube-controller-manager's, kcm's Deployment
//! and ReplicaSet controllers beside it (upstream's `main.go` wiring).
//!
//! The manager hands every controller the same informer factory (started once all were built),
//! its own client, and stops them together.

use kcm_manager::{Controller, ControllerContext, RunFuture};

use crate::controller::{CONTROLLER_NAME, FooController, FooControllerConfig};

/// The Foo controller, registered under [`CONTROLLER_NAME`] (`--controllers=*,-sample-controller`
/// turns it off).
pub fn foo_controller(config: FooControllerConfig) -> Controller {
    Controller {
        name: CONTROLLER_NAME,
        build: Box::new(move |ctx: &ControllerContext| {
            let controller = FooController::new(ctx.client.clone(), &ctx.factory, config)?;
            Ok(Box::new(move |cancel| {
                Box::pin(controller.run(cancel)) as RunFuture
            }))
        }),
    }
}

/// The Foo controller and, with `with_builtin_controllers`, kcm's Deployment and ReplicaSet
/// controllers ([`kcm_manager::builtin`]).
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
        controllers.extend(kcm_manager::builtin::controllers());
    }
    controllers
}
