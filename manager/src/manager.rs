//! [`Manager`]: a controller-manager binary's `main`, around a registry of named controllers.
//!
//! What `kcm` does around its controllers, for any binary: parse kube-controller-manager's
//! flags (and the binary's own), validate them, set up klog-style logging, build the API
//! clients, handle SIGTERM/SIGINT, and run the enabled controllers (serving, leader election
//! or sharding, informers, graceful shutdown: `process`).

use std::ffi::OsString;
use std::process::ExitCode;

use tokio_util::sync::CancellationToken;

use crate::client::ClientFactory;
use crate::command_line::{self, NoFlags, ParsedArgs, Program};
use crate::controller::Controller;
use crate::feature_gates::FeatureGates;
use crate::logging::VModule;
use crate::metrics::Metrics;
use crate::options::{Options, validate};
use crate::process::{self, Exit};
use crate::registry::Registry;

/// A controller-manager: a name and the controllers it can run.
///
/// `--controllers` selects among the registered controllers by their names and aliases, as
/// kube-controller-manager's: `*` enables every controller, `name` enables one, `-name`
/// disables one.
pub struct Manager {
    program: Program,
    registry: Registry,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("name", &self.program.name)
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
            program: Program {
                name,
                about: None,
                long_about: None,
                defaults: Vec::new(),
            },
            registry: Registry::default(),
        }
    }

    /// The one-line description `-h` shows (and `--help`, without [`Manager::long_about`]).
    pub fn about(mut self, about: &'static str) -> Self {
        self.program.about = Some(about);
        self
    }

    /// The longer description `--help` shows.
    pub fn long_about(mut self, long_about: &'static str) -> Self {
        self.program.long_about = Some(long_about);
        self
    }

    /// Another default for one of [`Options`]' flags, named by its long name without dashes
    /// (`secure-port`): for instance a port of its own for a binary that runs beside
    /// kube-controller-manager (which serves on 10257). An unknown name panics when the
    /// command is built, as clap does for a misspelt argument.
    pub fn flag_default(mut self, flag: &'static str, value: &'static str) -> Self {
        self.program.defaults.push((flag, value));
        self
    }

    /// Registers a controller, with the flags and feature gates it brings: a [`Controller`],
    /// or a builder's controller (`Controller::for_::<K>(name)...run(reconcile)`).
    pub fn controller(mut self, controller: impl Into<Controller>) -> Self {
        self.registry.push(controller.into());
        self
    }

    /// Registers controllers.
    pub fn controllers(mut self, controllers: impl IntoIterator<Item = Controller>) -> Self {
        for controller in controllers {
            self.registry.push(controller);
        }
        self
    }

    /// The names of the registered controllers, in registration order.
    pub fn names(&self) -> Vec<&'static str> {
        self.registry.names()
    }

    /// The registered controllers that `options`' `--controllers` enables, in registration
    /// order.
    pub fn enabled(&self, options: &Options) -> Vec<&'static str> {
        self.registry.enabled_names(&options.controllers)
    }

    /// The command line of this manager: [`Options`]' flags and those of the registered
    /// controllers, named and described for it.
    pub fn command(&self) -> clap::Command {
        command_line::command(&self.program, &self.registry)
    }

    /// Parses `argv` (program name first): the manager's flags, the registered controllers'
    /// and those of `A`, the binary's own ([`NoFlags`] for none). kube-controller-manager's
    /// flags that this binary does not have are accepted and listed in
    /// [`ParsedArgs::ignored`].
    pub fn parse_args<A, I, T>(&self, argv: I) -> Result<(ParsedArgs, A), clap::Error>
    where
        A: clap::Args,
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        command_line::parse(self.command(), &self.registry.flag_groups(), argv)
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
        let name = self.program.name;
        let options = parsed.options;
        let (vmodule, gates, unused_gates) = match self.check(&options) {
            Ok(checked) => checked,
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
        tracing::info!(?gates, "feature gates");
        if !unused_gates.is_empty() {
            tracing::warn!(
                gates = unused_gates.join(","),
                "ignoring feature gates no controller of {name} consults"
            );
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
        runtime.block_on(self.run_until_signalled(options))
    }

    /// What clap cannot check, in order: `--controllers` against the registered controllers,
    /// the manager's flags, the controllers' flags. The `--vmodule` filter, the feature gates
    /// and the names of unknown gates; or the message to print.
    fn check(&self, options: &Options) -> Result<(VModule, FeatureGates, Vec<String>), String> {
        self.registry
            .check(&options.controllers)
            .and_then(|()| validate::validate(options))
            .map_err(|e| e.to_string())?;
        options.controller_flags().validate()?;
        let vmodule = validate::vmodule(options).map_err(|e| e.to_string())?;
        let declared = self.registry.feature_gates();
        let (gates, unused) =
            crate::feature_gates::resolve(&declared, options.feature_gates.as_deref())
                .map_err(|e| format!("--feature-gates: {e}"))?;
        Ok((vmodule, gates, unused))
    }

    /// [`Manager::run`] against the API server of `--kubeconfig`/`--master` until SIGTERM or
    /// SIGINT; the process's exit status.
    async fn run_until_signalled(self, options: Options) -> ExitCode {
        let name = self.program.name;
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
                process::signal::shutdown_signal().await;
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
    }

    /// Runs the enabled controllers in the current tokio runtime against the API server of
    /// `config` until `stop` fires or leadership is lost: what [`Manager::run_main`] does once
    /// the flags are checked and logging and signals are set up. Tests run a manager
    /// in-process with it.
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
        let whoami = clients.client(self.program.name)?;
        tokio::spawn(async move { crate::client::config::log_identity(&whoami).await });
        let gates = self.registry.feature_gates();
        let (feature_gates, _) =
            crate::feature_gates::resolve(&gates, options.feature_gates.as_deref())
                .map_err(|e| anyhow::anyhow!("--feature-gates: {e}"))?;
        let controllers = self.registry.into_enabled(&options.controllers);
        process::run(options, clients, metrics, controllers, feature_gates, stop).await
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
#[path = "manager_tests.rs"]
mod tests;
