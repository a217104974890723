//! Command-line flags, named and defaulted as kube-controller-manager's where the concept exists.

use std::net::IpAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Parser;

use crate::duration::parse_go_duration;

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
    about = "kcm runs kube-controller-manager's Deployment and ReplicaSet controllers.",
    long_about = "kcm runs kube-controller-manager's Deployment and ReplicaSet controllers.\n\n\
        Run it beside kube-controller-manager started with \
        --controllers=*,-deployment-controller,-replicaset-controller; everything it writes \
        (names, labels, annotations, owner references, status, conditions, events) matches \
        kube-controller-manager's."
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

    /// QPS to use while talking with kubernetes apiserver.
    #[arg(
        long,
        help_heading = "Generic flags",
        value_name = "float",
        default_value_t = 20.0
    )]
    pub kube_api_qps: f32,

    /// Burst to use while talking with kubernetes apiserver.
    #[arg(
        long,
        help_heading = "Generic flags",
        value_name = "int32",
        default_value_t = 30
    )]
    pub kube_api_burst: u32,

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
    #[arg(long, help_heading = "Leader-election flags", value_name = "bool", default_value_t = true, action = clap::ArgAction::Set, num_args = 0..=1, require_equals = true, default_missing_value = "true")]
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

    // ---- Serving ----
    /// The IP address on which to listen for the --secure-port port (metrics and health). If
    /// blank or an unspecified address (0.0.0.0 or ::), all interfaces and IP address families
    /// will be used.
    #[arg(
        long,
        help_heading = "Serving flags",
        value_name = "ip",
        default_value = "0.0.0.0"
    )]
    pub bind_address: IpAddr,

    /// The port on which to serve /metrics, /healthz, /readyz and /livez. kcm serves them over
    /// plain HTTP without authentication (put it behind a NetworkPolicy or bind to 127.0.0.1).
    /// If 0, don't serve at all.
    #[arg(
        long,
        help_heading = "Serving flags",
        value_name = "int",
        default_value_t = 10257
    )]
    pub secure_port: u16,

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

    /// Sets the log format. Permitted formats: "json", "text".
    #[arg(
        long,
        help_heading = "Logs flags",
        value_name = "string",
        default_value = "text"
    )]
    pub logging_format: String,
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
    /// `--kube-api-qps` / `--kube-api-burst` unusable.
    #[error("--kube-api-qps must be greater than 0 and --kube-api-burst at least 1")]
    BadRateLimit,
}

impl Options {
    /// Checks what clap cannot: controller names, the lock type, log format, positive workers.
    pub fn validate(&self) -> Result<(), OptionsError> {
        for entry in &self.controllers {
            let name = entry.strip_prefix('-').unwrap_or(entry);
            if name != "*" && canonical_controller(name).is_none() {
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
        if self.concurrent_deployment_syncs == 0 {
            return Err(OptionsError::ZeroWorkers("concurrent-deployment-syncs"));
        }
        if self.concurrent_replicaset_syncs == 0 {
            return Err(OptionsError::ZeroWorkers("concurrent-replicaset-syncs"));
        }
        if self.kube_api_qps.is_nan() || self.kube_api_qps <= 0.0 || self.kube_api_burst == 0 {
            return Err(OptionsError::BadRateLimit);
        }
        Ok(())
    }

    /// Whether `--controllers` enables the controller `name` (canonical name), with
    /// kube-controller-manager's rules: an explicit name or `-name` wins, in order; otherwise
    /// `*` enables every on-by-default controller (both of ours are on by default).
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
            if canonical_controller(raw) == Some(name) {
                return !negated;
            }
        }
        star
    }
}

/// The canonical controller name for a name or alias.
pub fn canonical_controller(name: &str) -> Option<&'static str> {
    KNOWN_CONTROLLERS
        .iter()
        .find(|(canonical, alias)| *canonical == name || *alias == name)
        .map(|(canonical, _)| *canonical)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Options {
        let mut argv = vec!["kcm"];
        argv.extend_from_slice(args);
        Options::try_parse_from(argv).expect("flags parse")
    }

    #[test]
    fn defaults_are_kube_controller_managers() {
        let o = parse(&[]);
        assert_eq!(o.controllers, vec!["*"]);
        assert_eq!(o.concurrent_deployment_syncs, 5);
        assert_eq!(o.concurrent_replicaset_syncs, 5);
        assert_eq!(o.kube_api_qps, 20.0);
        assert_eq!(o.kube_api_burst, 30);
        assert!(o.leader_elect);
        assert_eq!(o.leader_elect_lease_duration, Duration::from_secs(15));
        assert_eq!(o.leader_elect_renew_deadline, Duration::from_secs(10));
        assert_eq!(o.leader_elect_retry_period, Duration::from_secs(2));
        assert_eq!(o.leader_elect_resource_namespace, "kube-system");
        assert_eq!(o.leader_elect_resource_name, "kcm");
        assert_eq!(o.min_resync_period, Duration::from_secs(12 * 3600));
        assert_eq!(o.secure_port, 10257);
        assert!(o.validate().is_ok());
    }

    #[test]
    fn controllers_flag_follows_upstream_rules() {
        let cases: &[(&[&str], bool, bool)] = &[
            (&["--controllers=*"], true, true),
            (&["--controllers=*,-deployment"], false, true),
            (&["--controllers=-replicaset-controller,*"], true, false),
            (&["--controllers=deployment"], true, false),
            (&["--controllers=replicaset-controller"], false, true),
            (&["--controllers=-deployment,deployment,*"], false, true),
            (&["--controllers="], false, false),
        ];
        for (args, deployment, replicaset) in cases {
            let o = parse(args);
            assert_eq!(
                o.controller_enabled("deployment-controller"),
                *deployment,
                "{args:?}"
            );
            assert_eq!(
                o.controller_enabled("replicaset-controller"),
                *replicaset,
                "{args:?}"
            );
        }
    }

    #[test]
    fn invalid_values_are_rejected_with_clear_messages() {
        let o = parse(&["--controllers=*,-bogus"]);
        assert_eq!(
            o.validate().expect_err("unknown").to_string(),
            "\"bogus\" is not in the list of known controllers"
        );
        let o = parse(&["--leader-elect-resource-lock=endpoints"]);
        assert!(matches!(
            o.validate(),
            Err(OptionsError::UnsupportedLock(_))
        ));
        let o = parse(&["--concurrent-deployment-syncs=0"]);
        assert_eq!(
            o.validate(),
            Err(OptionsError::ZeroWorkers("concurrent-deployment-syncs"))
        );
        let o = parse(&["--logging-format=yaml"]);
        assert!(matches!(
            o.validate(),
            Err(OptionsError::UnsupportedLogFormat(_))
        ));
        assert!(Options::try_parse_from(["kcm", "--leader-elect-lease-duration=15"]).is_err());
    }

    #[test]
    fn durations_and_bools_parse_like_pflag() {
        let o = parse(&[
            "--leader-elect=false",
            "--leader-elect-lease-duration=1m30s",
            "--min-resync-period=30m",
            "-v=4",
        ]);
        assert!(!o.leader_elect);
        assert!(
            parse(&["--leader-elect"]).leader_elect,
            "a bare bool flag means true, as pflag"
        );
        assert_eq!(o.leader_elect_lease_duration, Duration::from_secs(90));
        assert_eq!(o.min_resync_period, Duration::from_secs(1800));
        assert_eq!(o.verbosity, 4);
    }
}
