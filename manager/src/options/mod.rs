//! Command-line flags, named and defaulted as kube-controller-manager's where the concept exists.
//!
//! [`Options`] are the manager's own flags. The command line of a binary adds the flags of its
//! controllers and its own (`command_line`); kube-controller-manager's flags that belong to its
//! other controllers are taken out first and reported (`foreign`), and the rest is parsed with
//! pflag's conventions (`pflag`). `validate` checks what clap cannot.

pub(crate) mod foreign;
pub(crate) mod pflag;
pub(crate) mod serving;
pub(crate) mod validate;

#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;

use crate::flags::{ControllerFlags, FlagValues};
use kcm_util::go_duration::parse_go_duration;
pub(crate) use pflag::parse_bool;
pub use serving::ServingOptions;

/// kube-controller-manager's flags that every controller-manager takes, named and defaulted as
/// upstream's (`cmd/kube-controller-manager/app/options`): what a controller reads from
/// [`crate::ControllerContext::options`], and with [`Options::flags`] the flags its own
/// registration brought.
#[derive(Debug, Clone, Args)]
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
    /// the controller named 'foo', '-foo' disables the controller named 'foo'. (`--help` lists
    /// the registered controllers.)
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
    /// (`--help` names the gates the registered controllers and the manager consult; the
    /// process reads them from [`crate::ControllerContext::feature_gates`].)
    #[arg(
        long,
        help_heading = "Feature gate flags",
        value_name = "mapStringBool"
    )]
    pub feature_gates: Option<String>,

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

    /// The name of resource object that is used for locking during leader election. The
    /// binary's own Lease by default (named after it), never kube-controller-manager's: the two
    /// run side by side.
    #[arg(
        long,
        help_heading = "Leader-election flags",
        value_name = "string",
        default_value = "kcm-manager"
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
    /// How replicas divide the work. `none`: one elected leader runs every controller (as
    /// kube-controller-manager). `namespace`: every replica is active on its shard of the
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

    /// The parsed flags of the registered controllers ([`crate::Controller::flags`]).
    #[arg(skip)]
    controller_flags: FlagValues,
}

impl Options {
    /// Whether `--sharding=namespace` was given.
    pub fn sharded(&self) -> bool {
        self.sharding == "namespace"
    }

    /// The flags `F` that a registered controller brought ([`crate::Controller::flags`]).
    ///
    /// # Errors
    ///
    /// When no registered controller brought `F` (so the command line had no such flags).
    pub fn flags<F: ControllerFlags>(&self) -> anyhow::Result<&F> {
        self.controller_flags.get::<F>().ok_or_else(|| {
            anyhow::anyhow!(
                "no registered controller brings the flags {} (Controller::flags)",
                std::any::type_name::<F>()
            )
        })
    }

    /// The controllers' flags, to fill in once they are parsed.
    pub(crate) fn controller_flags_mut(&mut self) -> &mut FlagValues {
        &mut self.controller_flags
    }

    /// The controllers' flags.
    pub(crate) fn controller_flags(&self) -> &FlagValues {
        &self.controller_flags
    }
}

/// The manager's flags of `argv` (program name first), parsed by clap alone (no controllers,
/// no foreign flags): what unit tests of the serving and logging options need of a command line.
#[cfg(test)]
pub(crate) fn parse(argv: &[&str]) -> Result<Options, clap::Error> {
    use clap::{Args, FromArgMatches};
    let matches = Options::augment_args(clap::Command::new("kcm")).try_get_matches_from(argv)?;
    Options::from_arg_matches(&matches)
}
