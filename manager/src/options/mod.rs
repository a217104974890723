//! Command-line flags, named and defaulted as kube-controller-manager's where the concept exists.
//!
//! [`Options::parse_args`] is the entry point: it takes kube-controller-manager's flags that
//! belong to other controllers out of the command line ([`foreign`]), then parses the rest with
//! pflag's conventions ([`pflag`]), and reports which given flags kcm ignores.
//! [`Options::parse_args_with`] does the same for a binary of its own: its command (named after
//! it, see [`crate::Manager::command`]) and flags of its own beside these.
//!
//! The flags of kcm's own controllers (`--concurrent-deployment-syncs`,
//! `--concurrent-replicaset-syncs`) are here too, for every binary.

pub mod foreign;
pub mod pflag;
pub mod serving;

#[cfg(test)]
mod tests;

use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches, Parser};

use kcm_util::go_duration::parse_go_duration;
use pflag::parse_bool;
pub use serving::ServingOptions;

/// Controllers this binary runs: (canonical name, alias accepted by `--controllers`).
pub const KNOWN_CONTROLLERS: &[(&str, &str)] = &[
    ("deployment-controller", "deployment"),
    ("replicaset-controller", "replicaset"),
];

/// Flags of `kcm`.
#[derive(Debug, Clone, Parser)]
#[command(
    name = "kcm",
    version,
    // pflag: a flag given twice takes its last value (list flags append).
    args_override_self = true,
    about = "kcm runs kube-controller-manager's Deployment and ReplicaSet controllers.",
    long_about = "kcm runs kube-controller-manager's Deployment and ReplicaSet controllers.\n\n\
        Run it beside kube-controller-manager started with \
        --controllers=*,-deployment-controller,-replicaset-controller; everything it writes \
        (names, labels, annotations, owner references, status, conditions, events) matches \
        kube-controller-manager's.\n\n\
        kube-controller-manager's other flags (--allocate-node-cidrs, --cluster-cidr, \
        --root-ca-file, --service-account-private-key-file, ...) are accepted and ignored, \
        named in one warning at start, so its command line can be copied as it is."
)]
pub struct Options {
    // ---- Generic flags ----
    /// Path to kubeconfig file with authorization and master location information (the master
    /// location can be overridden by the master flag).
    #[arg(long, help_heading = "Generic flags", value_name = "string")]
    pub kubeconfig: Option<PathBuf>,

    /// The address of the Kubernetes API server (overrides any value in kubeconfig).
    #[arg(long, help_heading = "Generic flags", value_name = "string")]
    pub master: Option<String>,

    /// A list of controllers to enable. '*' enables all on-by-default controllers, 'foo' enables
    /// the controller named 'foo', '-foo' disables the controller named 'foo'.
    /// All controllers: deployment-controller, replicaset-controller (aliases: deployment,
    /// replicaset).
    #[arg(
        long,
        help_heading = "Generic flags",
        value_name = "strings",
        value_delimiter = ',',
        default_value = "*"
    )]
    pub controllers: Vec<String>,

    /// The resync period in reflectors will be random between MinResyncPeriod and
    /// 2*MinResyncPeriod.
    #[arg(long, help_heading = "Generic flags", value_name = "duration", default_value = "12h0m0s", value_parser = parse_go_duration)]
    pub min_resync_period: Duration,

    /// QPS to use while talking with kubernetes apiserver. 0 means client-go's default (5), a
    /// negative value turns client-side rate limiting off.
    #[arg(
        long,
        help_heading = "Generic flags",
        value_name = "float",
        default_value_t = 20.0,
        allow_negative_numbers = true
    )]
    pub kube_api_qps: f32,

    /// Burst to use while talking with kubernetes apiserver. 0 means client-go's default (10).
    #[arg(
        long,
        help_heading = "Generic flags",
        value_name = "int32",
        default_value_t = 30,
        allow_negative_numbers = true
    )]
    pub kube_api_burst: i32,

    /// Content type of requests sent to apiserver. kcm always speaks JSON (kube-client has no
    /// protobuf codec); other values are accepted and ignored with a warning.
    #[arg(long, help_heading = "Generic flags", value_name = "string")]
    pub kube_api_content_type: Option<String>,

    /// Interval between starting controller managers.
    #[arg(long, help_heading = "Generic flags", value_name = "duration", default_value = "0s", value_parser = parse_go_duration)]
    pub controller_start_interval: Duration,

    /// Time to wait for the controllers to shut down before terminating the executable
    #[arg(long, help_heading = "Generic flags", value_name = "duration", default_value = "10s", value_parser = parse_go_duration)]
    pub controller_shutdown_timeout: Duration,

    /// If true, use individual service account credentials for each controller.
    #[arg(long, help_heading = "Generic flags", value_name = "bool", default_value = "false", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub use_service_account_credentials: bool,

    /// A set of key=value pairs that describe feature gates for alpha/experimental features.
    /// kcm consults DeploymentReplicaSetTerminatingReplicas, StaleControllerConsistencyReplicaSet,
    /// PodDeletionCost and ControllerManagerReleaseLeaderElectionLockOnExit (v1.37's defaults);
    /// other gates are checked for syntax and named in one warning.
    #[arg(
        long,
        help_heading = "Feature gate flags",
        value_name = "mapStringBool"
    )]
    pub feature_gates: Option<String>,

    // ---- Controller flags ----
    /// The number of deployment objects that are allowed to sync concurrently. Larger number =
    /// more responsive deployments, but more CPU (and network) load
    #[arg(
        long,
        help_heading = "Deployment controller flags",
        value_name = "int32",
        default_value_t = 5
    )]
    pub concurrent_deployment_syncs: u32,

    /// The number of replica sets that are allowed to sync concurrently. Larger number = more
    /// responsive replica management, but more CPU (and network) load
    #[arg(
        long,
        help_heading = "Replicaset controller flags",
        value_name = "int32",
        default_value_t = 5
    )]
    pub concurrent_replicaset_syncs: u32,

    // ---- Leader election ----
    /// Start a leader election client and gain leadership before executing the main loop.
    /// Enable this when running replicated components for high availability.
    #[arg(long, help_heading = "Leader-election flags", value_name = "bool", default_value = "true", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub leader_elect: bool,

    /// The duration that non-leader candidates will wait after observing a leadership renewal
    /// until attempting to acquire leadership of a led but unrenewed leader slot. This is
    /// effectively the maximum duration that a leader can be stopped before it is replaced by
    /// another candidate. This is only applicable if leader election is enabled.
    #[arg(long, help_heading = "Leader-election flags", value_name = "duration", default_value = "15s", value_parser = parse_go_duration)]
    pub leader_elect_lease_duration: Duration,

    /// The interval between attempts by the acting master to renew a leadership slot before it
    /// stops leading. This must be less than the lease duration. This is only applicable if
    /// leader election is enabled.
    #[arg(long, help_heading = "Leader-election flags", value_name = "duration", default_value = "10s", value_parser = parse_go_duration)]
    pub leader_elect_renew_deadline: Duration,

    /// The duration the clients should wait between attempting acquisition and renewal of a
    /// leadership. This is only applicable if leader election is enabled.
    #[arg(long, help_heading = "Leader-election flags", value_name = "duration", default_value = "2s", value_parser = parse_go_duration)]
    pub leader_elect_retry_period: Duration,

    /// The type of resource object that is used for locking during leader election. Supported
    /// options are 'leases'.
    #[arg(
        long,
        help_heading = "Leader-election flags",
        value_name = "string",
        default_value = "leases"
    )]
    pub leader_elect_resource_lock: String,

    /// The name of resource object that is used for locking during leader election. kcm's
    /// own Lease by default, never kube-controller-manager's: the two run side by side.
    #[arg(
        long,
        help_heading = "Leader-election flags",
        value_name = "string",
        default_value = "kcm"
    )]
    pub leader_elect_resource_name: String,

    /// The namespace of resource object that is used for locking during leader election.
    #[arg(
        long,
        help_heading = "Leader-election flags",
        value_name = "string",
        default_value = "kube-system"
    )]
    pub leader_elect_resource_namespace: String,

    // ---- Sharding ----
    /// How replicas share the work. `none`: one elected leader runs every controller (as
    /// kube-controller-manager). `namespace`: every replica is active on its share of the
    /// namespaces (a consistent-hash ring of the replicas' membership Leases, named after
    /// --leader-elect-resource-name in --leader-elect-resource-namespace and timed by the
    /// --leader-elect-* durations); --leader-elect is then not used. See docs/sharding.md.
    #[arg(
        long,
        help_heading = "Sharding flags",
        value_name = "none|namespace",
        default_value = "none",
        value_parser = ["none", "namespace"]
    )]
    pub sharding: String,

    // ---- Serving ----
    /// Secure serving, authentication and authorization.
    #[command(flatten)]
    pub serving: ServingOptions,

    // ---- Logging ----
    /// number for the log level verbosity
    #[arg(
        short = 'v',
        long = "v",
        help_heading = "Logs flags",
        value_name = "Level",
        default_value_t = 0
    )]
    pub verbosity: u8,

    /// comma-separated list of pattern=N settings for file-filtered logging (only works for
    /// text log format); a pattern matches a source file's name without `.rs`
    #[arg(
        long,
        help_heading = "Logs flags",
        value_name = "pattern=N,...",
        default_value = ""
    )]
    pub vmodule: String,

    /// Sets the log format. Permitted formats: "json", "text".
    #[arg(
        long,
        help_heading = "Logs flags",
        value_name = "string",
        default_value = "text"
    )]
    pub logging_format: String,

    // ---- Debugging ----
    /// Enable profiling via web interface host:port/debug/pprof/ (a CPU profile at
    /// /debug/pprof/profile) and setting the log verbosity with PUT /debug/flags/v
    #[arg(long, help_heading = "Debugging flags", value_name = "bool", default_value = "true", value_parser = parse_bool, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
    pub profiling: bool,

    // ---- Not flags ----
    /// Watch (and so manage) only this namespace; `None` (the default): every namespace. Not a
    /// flag of kcm (kube-controller-manager has none); a binary of its own may set it from a
    /// flag of its own.
    #[arg(skip)]
    pub namespace: Option<String>,
}

/// A flag value that parses but is not acceptable, with upstream-like messages.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum OptionsError {
    /// `--controllers` names something unknown.
    #[error("{0:?} is not in the list of known controllers")]
    UnknownController(String),
    /// `--leader-elect-resource-lock` is not `leases`.
    #[error("unsupported --leader-elect-resource-lock {0:?}: only \"leases\" is supported")]
    UnsupportedLock(String),
    /// `--logging-format` is neither text nor json.
    #[error("unsupported --logging-format {0:?}: permitted formats are \"json\" and \"text\"")]
    UnsupportedLogFormat(String),
    /// A concurrency flag is zero.
    #[error("--{0} must be greater than 0")]
    ZeroWorkers(&'static str),
    /// `--kube-api-qps` is not a number or `--kube-api-burst` is negative.
    #[error("--kube-api-qps must be a number and --kube-api-burst must not be negative")]
    BadRateLimit,
    /// `--vmodule` is not a list of `pattern=N`.
    #[error("invalid argument {value:?} for \"--vmodule\" flag: {reason}")]
    BadVModule {
        /// The flag's value.
        value: String,
        /// component-base's message.
        reason: String,
    },
    /// `--vmodule` with a log format other than text.
    #[error("logging.vmodule: Forbidden: Only supported for text log format")]
    VModuleNeedsText,
    /// `--feature-gates` is not a list of `name=bool`.
    #[error("invalid --feature-gates {0:?}: want name=true|false[,name=...]")]
    BadFeatureGates(String),
}

/// Parsed flags, and the flags given that kcm accepts but ignores.
#[derive(Debug, Clone)]
pub struct ParsedArgs {
    /// The flags.
    pub options: Options,
    /// Names (without dashes) of given flags that have no effect in kcm, each once.
    pub ignored: Vec<String>,
}

impl Options {
    /// Whether `--sharding=namespace` was given.
    pub fn sharded(&self) -> bool {
        self.sharding == "namespace"
    }

    /// Checks what clap cannot: controller names, the lock type, log format, positive workers.
    /// Known controller names are kcm's ([`KNOWN_CONTROLLERS`]) and kube-controller-manager's
    /// others; [`Options::validate_with`] adds a binary's own.
    pub fn validate(&self) -> Result<(), OptionsError> {
        self.validate_with(&[])
    }

    /// [`Options::validate`], with the names of a binary's registered controllers also known
    /// to `--controllers`.
    pub fn validate_with(&self, registered: &[&str]) -> Result<(), OptionsError> {
        for entry in &self.controllers {
            let name = entry.strip_prefix('-').unwrap_or(entry);
            if !name.is_empty()
                && name != "*"
                && canonical_controller(name).is_none()
                && !registered.contains(&name)
                && !foreign::UPSTREAM_CONTROLLERS.contains(&name)
            {
                return Err(OptionsError::UnknownController(name.to_string()));
            }
        }
        if self.leader_elect_resource_lock != "leases" {
            return Err(OptionsError::UnsupportedLock(
                self.leader_elect_resource_lock.clone(),
            ));
        }
        if !matches!(self.logging_format.as_str(), "text" | "json") {
            return Err(OptionsError::UnsupportedLogFormat(
                self.logging_format.clone(),
            ));
        }
        let vmodule = self.vmodule()?;
        if !vmodule.is_empty() && self.logging_format != "text" {
            return Err(OptionsError::VModuleNeedsText);
        }
        if self.concurrent_deployment_syncs == 0 {
            return Err(OptionsError::ZeroWorkers("concurrent-deployment-syncs"));
        }
        if self.concurrent_replicaset_syncs == 0 {
            return Err(OptionsError::ZeroWorkers("concurrent-replicaset-syncs"));
        }
        if self.kube_api_qps.is_nan() || self.kube_api_burst < 0 {
            return Err(OptionsError::BadRateLimit);
        }
        if let Some(gates) = &self.feature_gates {
            feature_gates(gates).map_err(|_| OptionsError::BadFeatureGates(gates.clone()))?;
        }
        Ok(())
    }

    /// `--vmodule`, parsed.
    pub fn vmodule(&self) -> Result<crate::logging::VModule, OptionsError> {
        crate::logging::VModule::parse(&self.vmodule).map_err(|reason| OptionsError::BadVModule {
            value: self.vmodule.clone(),
            reason,
        })
    }

    /// Parses a command line (program name first) as kube-controller-manager would accept it:
    /// flags of upstream's other controllers are removed and reported in
    /// [`ParsedArgs::ignored`], as are given flags of ours that have no effect in kcm.
    pub fn parse_args<I, T>(argv: I) -> Result<ParsedArgs, clap::Error>
    where
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        let (parsed, NoFlags {}) = Options::parse_args_with(Options::command(), argv)?;
        Ok(parsed)
    }

    /// [`Options::parse_args`] for a binary of its own: `command` is [`Options`]' command as
    /// that binary names and describes it; the flags (and subcommands) of `A` are parsed beside
    /// ours and returned with them.
    pub fn parse_args_with<A, I, T>(
        command: clap::Command,
        argv: I,
    ) -> Result<(ParsedArgs, A), clap::Error>
    where
        A: clap::Args,
        I: IntoIterator<Item = T>,
        T: Into<OsString>,
    {
        // `A`'s doc comment would replace the binary's description: keep the binary's.
        let (about, long_about) = (
            command.get_about().cloned(),
            command.get_long_about().cloned(),
        );
        let mut command = A::augment_args(command).about(None).long_about(None);
        if let Some(about) = about {
            command = command.about(about);
        }
        if let Some(long_about) = long_about {
            command = command.long_about(long_about);
        }
        let takes_value = |name: &str| {
            command.get_arguments().any(|a| {
                a.get_long() == Some(name)
                    && a.get_action().takes_values()
                    && !a.is_require_equals_set()
            })
        };
        let (kept, mut ignored) =
            pflag::strip_foreign(argv.into_iter().map(Into::into), takes_value).map_err(|e| {
                command
                    .clone()
                    .error(clap::error::ErrorKind::InvalidValue, e)
            })?;
        let matches = command.try_get_matches_from(kept)?;
        let options = Options::from_arg_matches(&matches)?;
        let extra = A::from_arg_matches(&matches)?;
        if options
            .kube_api_content_type
            .as_deref()
            .is_some_and(|t| t != "application/json")
        {
            ignored.push("kube-api-content-type".into());
        }
        Ok((ParsedArgs { options, ignored }, extra))
    }

    /// Whether `--controllers` enables the controller `name` (canonical name, or the name a
    /// binary registered it under), with kube-controller-manager's rules: an explicit name or
    /// `-name` wins, in order; otherwise `*` enables every on-by-default controller (every
    /// controller is on by default).
    pub fn controller_enabled(&self, name: &str) -> bool {
        let mut star = false;
        for entry in &self.controllers {
            if entry == "*" {
                star = true;
                continue;
            }
            let (negated, raw) = match entry.strip_prefix('-') {
                Some(rest) => (true, rest),
                None => (false, entry.as_str()),
            };
            if raw == name || canonical_controller(raw) == Some(name) {
                return !negated;
            }
        }
        star
    }
}

/// No flags: what [`Options::parse_args_with`] parses beside ours for a binary without flags of
/// its own.
#[derive(Debug, Clone, Copy, Default, clap::Args)]
pub struct NoFlags {}

/// Parses `--feature-gates` (`name=bool,...`, pflag's mapStringBool) into pairs.
pub fn feature_gates(value: &str) -> Result<Vec<(String, bool)>, String> {
    value
        .split(',')
        .map(str::trim)
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, enabled) = pair
                .split_once('=')
                .ok_or_else(|| format!("missing bool value for {pair}"))?;
            let enabled = parse_bool(enabled.trim())?;
            Ok((name.trim().to_string(), enabled))
        })
        .collect()
}

/// The canonical controller name for a name or alias.
pub fn canonical_controller(name: &str) -> Option<&'static str> {
    KNOWN_CONTROLLERS
        .iter()
        .find(|(canonical, alias)| *canonical == name || *alias == name)
        .map(|(canonical, _)| *canonical)
}
