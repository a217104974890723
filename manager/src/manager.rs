//! [`Manager`]: a controller-manager binary's `main`, around a registry of named controllers.
//!
//! What `kcm` does around its controllers, for any binary: parse kube-controller-manager's
//! flags (and the binary's own), validate them, set up klog-style logging, build the API
//! clients, handle SIGTERM/SIGINT, and [`crate::app::run`] the enabled controllers (serving,
//! leader election or sharding, informers, graceful shutdown).

use std::ffi::OsString;
use std::process::ExitCode;

use clap::CommandFactory;
use tokio_util::sync::CancellationToken;

use crate::app::{self, Controller, Exit};
use crate::client::ClientFactory;
use crate::metrics::Metrics;
use crate::options::{KNOWN_CONTROLLERS, NoFlags, Options, ParsedArgs};

/// A controller-manager: a name and the controllers it can run.
///
/// `--controllers` selects among the registered controllers by their names, as
/// kube-controller-manager's: `*` enables every controller, `name` enables one, `-name`
/// disables one; kcm's controllers also answer to their aliases (`deployment`, `replicaset`).
pub struct Manager {
    name: &'static str,
    about: Option<&'static str>,
    defaults: Vec<(&'static str, &'static str)>,
    controllers: Vec<Controller>,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("name", &self.name)
            .field("controllers", &self.names())
            .finish_non_exhaustive()
    }
}

impl Manager {
    /// A manager named `name`: the program name in `--help` and in the messages of a failed
    /// start (`<name>: ...`), the name of its own API client, and the default
    /// `--leader-elect-resource-name`.
    pub fn new(name: &'static str) -> Self {
        Manager {
            name,
            about: None,
            defaults: Vec::new(),
            controllers: Vec::new(),
        }
    }

    /// The one-line description `--help` shows.
    pub fn about(mut self, about: &'static str) -> Self {
        self.about = Some(about);
        self
    }

    /// Another default for one of [`Options`]' flags, named by its long name without dashes
    /// (`secure-port`): for instance a port of its own for a binary that runs beside
    /// kube-controller-manager (which serves on 10257). An unknown name panics when the
    /// command is built, as clap does for a misspelt argument.
    pub fn flag_default(mut self, flag: &'static str, value: &'static str) -> Self {
        self.defaults.push((flag, value));
        self
    }

    /// Registers a controller.
    pub fn controller(mut self, controller: Controller) -> Self {
        self.controllers.push(controller);
        self
    }

    /// Registers controllers (for instance kcm's, [`crate::builtin::controllers`]).
    pub fn controllers(mut self, controllers: impl IntoIterator<Item = Controller>) -> Self {
        self.controllers.extend(controllers);
        self
    }

    /// The names of the registered controllers, in registration order.
    pub fn names(&self) -> Vec<&'static str> {
        self.controllers.iter().map(|c| c.name).collect()
    }

    /// The command line of this manager: [`Options`]' flags, named and described for it.
    pub fn command(&self) -> clap::Command {
        let mut command = Options::command();
        if command.get_name() != self.name {
            let name = self.name;
            command = command
                .name(name)
                .bin_name(name)
                .about(
                    self.about
                        .unwrap_or("A controller-manager built on kcm-manager."),
                )
                .long_about(None)
                .mut_arg("leader_elect_resource_name", |a| a.default_value(name));
        } else if let Some(about) = self.about {
            command = command.about(about).long_about(None);
        }
        let kcm: Vec<&str> = KNOWN_CONTROLLERS.iter().map(|(n, _)| *n).collect();
        if self.names() != kcm {
            let mut help = "A list of controllers to enable. '*' enables all on-by-default \
                controllers, 'foo' enables the controller named 'foo', '-foo' disables the \
                controller named 'foo'."
                .to_string();
            if !self.controllers.is_empty() {
                help.push_str(&format!("\nAll controllers: {}.", self.names().join(", ")));
            }
            command = command.mut_arg("controllers", |a| a.help(help));
        }
        for (flag, value) in &self.defaults {
            let id = command
                .get_arguments()
                .find(|a| a.get_long() == Some(flag))
                .map(|a| a.get_id().clone());
            match id {
                Some(id) => command = command.mut_arg(id, |a| a.default_value(*value)),
                None => panic!("Manager::flag_default: no flag --{flag}"),
            }
        }
        command
    }

    /// Parses `argv` (program name first) with [`Options::parse_args_with`]: our flags and
    /// those of `A`, the binary's own ([`NoFlags`] for none).
    pub fn parse_args<A, I, T>(&self, argv: I) -> Result<(ParsedArgs, A), clap::Error>
    where
        A: clap::Args,
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        Options::parse_args_with(self.command(), argv)
    }

    /// The whole `main` of a binary without flags of its own: parses the process's arguments
    /// and [`Manager::run_main`]s.
    pub fn main(self) -> ExitCode {
        match self.parse_args::<NoFlags, _, _>(std::env::args_os()) {
            Ok((parsed, NoFlags {})) => self.run_main(parsed),
            Err(e) => e.exit(),
        }
    }

    /// Runs the process on parsed flags: validates them (exit status 2 and one line on stderr
    /// when they are unusable), sets up logging, starts a tokio runtime (of at most
    /// [`RUNTIME_WORKER_THREADS`] workers unless `TOKIO_WORKER_THREADS` is set), builds the
    /// clients of `--kubeconfig`/`--master`, and runs the controllers until SIGTERM or SIGINT
    /// (exit 0) or until the leader lease is lost (exit 1).
    pub fn run_main(self, parsed: ParsedArgs) -> ExitCode {
        let name = self.name;
        let options = parsed.options;
        if let Err(e) = options.validate_with(&self.names()) {
            eprintln!("{name}: {e}");
            return ExitCode::from(2);
        }
        let vmodule = match options.vmodule() {
            Ok(vmodule) => vmodule,
            Err(e) => {
                eprintln!("{name}: {e}");
                return ExitCode::from(2);
            }
        };
        crate::logging::init(
            u32::from(options.verbosity),
            vmodule,
            &options.logging_format,
        );
        match crate::feature_gates::resolve(options.feature_gates.as_deref()) {
            Ok((gates, unused)) => {
                tracing::info!(?gates, "feature gates");
                if !unused.is_empty() {
                    tracing::warn!(
                        gates = unused.join(","),
                        "ignoring feature gates the Deployment and ReplicaSet controllers do not consult"
                    );
                }
            }
            Err(e) => {
                eprintln!("{name}: --feature-gates: {e}");
                return ExitCode::from(2);
            }
        }
        if !parsed.ignored.is_empty() {
            tracing::warn!(
                flags = parsed.ignored.join(","),
                "ignoring flags that have no effect in {name} (they configure kube-controller-manager's other controllers or features {name} does not have)"
            );
        }
        let runtime = match runtime_builder().enable_all().build() {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("{name}: cannot start the async runtime: {e}");
                return ExitCode::FAILURE;
            }
        };
        runtime.block_on(async {
            let result = async {
                let loaded = crate::client::load_config(
                    options.kubeconfig.as_deref(),
                    options.master.as_deref(),
                )
                .await?;
                tracing::info!(
                    server = %loaded.config.cluster_url,
                    config = %loaded.source,
                    credentials = crate::client::config::credentials(&loaded.config.auth_info),
                    user_agent = crate::client::user_agent::default_user_agent(),
                    "using the API server"
                );
                let stop = CancellationToken::new();
                let signal_stop = stop.clone();
                tokio::spawn(async move {
                    app::shutdown_signal().await;
                    signal_stop.cancel();
                });
                self.run(&options, loaded.config, stop).await
            }
            .await;
            match result {
                Ok(Exit::Stopped) => ExitCode::SUCCESS,
                Ok(Exit::LeaderElectionLost) => ExitCode::FAILURE,
                Err(e) => {
                    tracing::error!(
                        error = crate::error_chain::display_anyhow(&e),
                        "{name} failed"
                    );
                    ExitCode::FAILURE
                }
            }
        })
    }

    /// Runs the enabled controllers in the current tokio runtime against the API server of
    /// `config` until `stop` fires or leadership is lost: what [`Manager::run_main`] does once
    /// logging and signals are set up. Tests run a manager in-process with it.
    ///
    /// The clients take `--kube-api-qps`/`--kube-api-burst` from `options`; `/metrics` serves
    /// their request metrics with those of the work queues and syncs.
    pub async fn run(
        self,
        options: &Options,
        config: kube::Config,
        stop: CancellationToken,
    ) -> anyhow::Result<Exit> {
        let metrics = Metrics::new();
        let clients = ClientFactory::new(
            config,
            options.kube_api_qps,
            options.kube_api_burst,
            metrics.clone(),
        )?;
        let whoami = clients.client(self.name)?;
        tokio::spawn(async move { crate::client::config::log_identity(&whoami).await });
        app::run(options, clients, metrics, self.controllers, stop).await
    }
}

/// The most worker threads a manager's runtime starts with unless `TOKIO_WORKER_THREADS` says
/// otherwise (fewer on a machine with fewer cores).
///
/// Two, not one per core: the controllers' work comes in small pieces (a sync, a handler, a
/// request), and with more workers than there is work, tokio wakes an idle worker for most
/// tasks it schedules, which costs more CPU than the work itself. Not one either: measured on
/// the Deployment and ReplicaSet controllers (docs/benchmarks.md, "Where kcm's CPU goes"), one
/// worker saved 2–10 % of the CPU but let a burst of 1,000 Deployment creates wait 1.7× longer
/// for their ReplicaSets. Heavy or blocking work belongs on `spawn_blocking`, whose threads are
/// apart from these.
pub const RUNTIME_WORKER_THREADS: usize = 2;

/// A multi-thread runtime (the delaying queues' precise timers and `spawn_blocking` need one)
/// with [`RUNTIME_WORKER_THREADS`] workers or one per core if fewer, or as many as
/// `TOKIO_WORKER_THREADS` asks (tokio reads it when no count is set here).
fn runtime_builder() -> tokio::runtime::Builder {
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if std::env::var_os("TOKIO_WORKER_THREADS").is_none() {
        let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
        builder.worker_threads(cores.min(RUNTIME_WORKER_THREADS));
    }
    builder
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::app::{ControllerContext, RunFuture};

    fn idle(name: &'static str) -> Controller {
        Controller {
            name,
            build: Box::new(|_: &ControllerContext| {
                Ok(Box::new(|cancel: CancellationToken| {
                    Box::pin(async move { cancel.cancelled().await }) as RunFuture
                }))
            }),
        }
    }

    fn help(command: &mut clap::Command) -> String {
        command.render_long_help().to_string()
    }

    #[test]
    fn kcms_command_is_options_command() {
        let kcm = Manager::new("kcm").controllers(crate::builtin::controllers());
        assert_eq!(
            kcm.names(),
            ["deployment-controller", "replicaset-controller"]
        );
        assert_eq!(help(&mut kcm.command()), help(&mut Options::command()));
    }

    #[test]
    fn another_binary_is_named_and_lists_its_controllers() {
        let manager = Manager::new("foo-manager")
            .about("Runs foos.")
            .flag_default("secure-port", "10260")
            .controller(idle("foo-controller"))
            .controllers(crate::builtin::controllers());
        let (parsed, NoFlags {}) = manager
            .parse_args(["foo-manager", "--controllers=*,-foo-controller"])
            .expect("parses");
        assert_eq!(parsed.options.leader_elect_resource_name, "foo-manager");
        assert_eq!(parsed.options.serving.secure_port, 10260);
        assert_eq!(parsed.options.validate_with(&manager.names()), Ok(()));
        assert!(!parsed.options.controller_enabled("foo-controller"));
        assert!(parsed.options.controller_enabled("replicaset-controller"));
        let text = help(&mut manager.command());
        assert!(text.starts_with("Runs foos."), "{text}");
        assert!(
            text.contains(
                "All controllers: foo-controller, deployment-controller, replicaset-controller."
            ),
            "{text}"
        );
        assert!(text.contains("Usage: foo-manager"), "{text}");
    }
}
