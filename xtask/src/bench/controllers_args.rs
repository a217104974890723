//! The options of `cargo xtask bench controllers` (the single-replica run), parsed from the
//! command line with clear errors, and the names they imply: the namespaces the Deployments go
//! into and the client burst that goes with a QPS.

use std::time::Duration;

use anyhow::{Context, bail};

use crate::cluster::ClusterKind;

/// The client QPS both sides get unless `--qps` says otherwise: kube-controller-manager's
/// default, and kcm's.
pub const DEFAULT_QPS: u32 = 20;
/// The burst that goes with [`DEFAULT_QPS`] (both binaries' default).
const DEFAULT_BURST: u32 = 30;

/// What one `cargo xtask bench controllers` run measures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// `--deployments N` (default 300): Deployments of 10 replicas each.
    pub deployments: usize,
    /// `--namespaces M` (default 1): the Deployments go round-robin into M namespaces.
    pub namespaces: usize,
    /// `--qps Q` (default 20): the client rate limit of both sides' controllers.
    pub qps: u32,
    /// `--cluster upstream|testenv` (default upstream).
    pub cluster: ClusterKind,
    /// `--plot`: only draw the CPU plot from the JSON lines kept so far; run nothing.
    pub plot_only: bool,
    /// `--rollout-limit MINUTES`: a side's rollout still going after this long is measured to
    /// that moment (its CPU, writes and server CPU then are lower bounds, its time unknown)
    /// instead of failing the run; without it a rollout gets 30 minutes per 300 Deployments
    /// and failing to finish is an error.
    pub rollout_limit: Option<Duration>,
}

impl Options {
    /// `--kube-api-burst` for both sides: the defaults' 30 up to QPS 30, then the QPS itself
    /// (upstream's scale tests run kube-controller-manager at 100/100).
    pub fn burst(&self) -> u32 {
        burst(self.qps)
    }

    /// The namespaces the Deployments go into: `bench` alone for one (the layout before
    /// `--namespaces`), `n0-bench`, `n1-bench`, … for more (names that differ at the start, as
    /// the sharded benchmark uses).
    pub fn namespace_names(&self) -> Vec<String> {
        namespace_names(self.namespaces)
    }
}

/// See [`Options::burst`].
pub fn burst(qps: u32) -> u32 {
    qps.max(DEFAULT_BURST)
}

/// See [`Options::namespace_names`].
pub fn namespace_names(m: usize) -> Vec<String> {
    if m == 1 {
        return vec!["bench".to_string()];
    }
    (0..m).map(bench_namespace).collect()
}

/// The `i`-th benchmark namespace of several: names that differ at the start, which FNV-1a
/// (kube-apiserver's shard hash) spreads well; names differing only at the end cluster
/// (docs/sharding.md §4).
pub fn bench_namespace(i: usize) -> String {
    format!("n{i}-bench")
}

/// `--deployments N` alone (default 300), for the sharded run, which reads its other options
/// itself.
pub fn deployments(args: &[String]) -> anyhow::Result<usize> {
    positive(args, "--deployments", 300)
}

/// Parses the controllers benchmark's options out of `cargo xtask bench` arguments (other
/// benchmarks' options and names are left alone).
pub fn parse(args: &[String]) -> anyhow::Result<Options> {
    let deployments = deployments(args)?;
    let namespaces = positive(args, "--namespaces", 1)?;
    let qps = positive(args, "--qps", DEFAULT_QPS as usize)?;
    let qps = u32::try_from(qps)
        .ok()
        .with_context(|| format!("--qps {qps} is too large"))?;
    if namespaces > deployments {
        bail!(
            "--namespaces {namespaces} is more than --deployments {deployments}: some namespaces \
             would stay empty"
        );
    }
    let cluster = match value(args, "--cluster")? {
        None | Some("upstream") => ClusterKind::Upstream,
        Some("testenv") => ClusterKind::Testenv,
        Some(other) => bail!("--cluster takes upstream or testenv, not `{other}`"),
    };
    let rollout_limit = match value(args, "--rollout-limit")? {
        None => None,
        Some(_) => {
            let minutes = positive(args, "--rollout-limit", 0)?;
            let secs = u64::try_from(minutes)
                .ok()
                .and_then(|m| m.checked_mul(60))
                .with_context(|| format!("--rollout-limit {minutes} is too large"))?;
            Some(Duration::from_secs(secs))
        }
    };
    Ok(Options {
        deployments,
        namespaces,
        qps,
        cluster,
        plot_only: args.iter().any(|a| a == "--plot"),
        rollout_limit,
    })
}

/// The value after `name`: `None` without the flag, an error when the flag ends the line or is
/// followed by another flag.
pub fn value<'a>(args: &'a [String], name: &str) -> anyhow::Result<Option<&'a str>> {
    let Some(i) = args.iter().position(|a| a == name) else {
        return Ok(None);
    };
    match args.get(i + 1).map(String::as_str) {
        Some(v) if !v.starts_with("--") => Ok(Some(v)),
        _ => bail!("{name} needs a value"),
    }
}

/// A positive whole number after `name`, or `default` without the flag.
pub fn positive(args: &[String], name: &str, default: usize) -> anyhow::Result<usize> {
    let Some(v) = value(args, name)? else {
        return Ok(default);
    };
    v.parse::<usize>()
        .ok()
        .filter(|n| *n > 0)
        .with_context(|| format!("{name} needs a positive whole number, not `{v}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(a: &[&str]) -> Vec<String> {
        a.iter().map(|x| x.to_string()).collect()
    }

    fn err(a: &[&str]) -> String {
        parse(&s(a))
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default()
    }

    #[test]
    fn defaults_are_the_run_before_these_options() {
        let o = parse(&s(&["controllers"])).expect("defaults parse");
        assert_eq!(
            o,
            Options {
                deployments: 300,
                namespaces: 1,
                qps: 20,
                cluster: ClusterKind::Upstream,
                plot_only: false,
                rollout_limit: None,
            }
        );
        assert_eq!(o.burst(), 30);
        assert_eq!(o.namespace_names(), ["bench"]);
    }

    #[test]
    fn every_option_is_read_wherever_it_stands() {
        let o = parse(&s(&[
            "--qps",
            "100",
            "controllers",
            "--namespaces",
            "3",
            "--deployments",
            "30",
            "--rounds",
            "1",
            "--cluster",
            "testenv",
            "--plot",
            "--rollout-limit",
            "25",
        ]))
        .expect("parses");
        assert_eq!(
            (o.deployments, o.namespaces, o.qps, o.cluster, o.plot_only),
            (30, 3, 100, ClusterKind::Testenv, true)
        );
        assert_eq!(o.rollout_limit, Some(Duration::from_secs(25 * 60)));
        assert_eq!(o.namespace_names(), ["n0-bench", "n1-bench", "n2-bench"]);
    }

    #[test]
    fn burst_is_the_default_at_low_qps_and_the_qps_from_there() {
        assert_eq!(
            [1, 20, 30, 50, 100, 400].map(burst),
            [30, 30, 30, 50, 100, 400]
        );
    }

    #[test]
    fn bad_values_say_which_flag_and_what_it_needs() {
        for (args, want) in [
            (
                &["--qps", "0"][..],
                "--qps needs a positive whole number, not `0`",
            ),
            (
                &["--qps", "fast"],
                "--qps needs a positive whole number, not `fast`",
            ),
            (
                &["--qps", "2.5"],
                "--qps needs a positive whole number, not `2.5`",
            ),
            (
                &["--qps", "-5"],
                "--qps needs a positive whole number, not `-5`",
            ),
            (&["--qps"], "--qps needs a value"),
            (&["--qps", "99999999999"], "--qps 99999999999 is too large"),
            (
                &["--namespaces", "0"],
                "--namespaces needs a positive whole number, not `0`",
            ),
            (
                &["--namespaces", "--qps", "100"],
                "--namespaces needs a value",
            ),
            (
                &["--deployments", "x"],
                "--deployments needs a positive whole number, not `x`",
            ),
            (
                &["--cluster", "kind"],
                "--cluster takes upstream or testenv, not `kind`",
            ),
            (&["--cluster"], "--cluster needs a value"),
            (
                &["--rollout-limit", "0"],
                "--rollout-limit needs a positive whole number, not `0`",
            ),
            (
                &["--rollout-limit", "1.5"],
                "--rollout-limit needs a positive whole number, not `1.5`",
            ),
            (&["--rollout-limit"], "--rollout-limit needs a value"),
            (
                &["--rollout-limit", "99999999999999999999"],
                "--rollout-limit needs a positive whole number, not `99999999999999999999`",
            ),
            (
                &["--rollout-limit", "999999999999999999"],
                "--rollout-limit 999999999999999999 is too large",
            ),
        ] {
            assert_eq!(err(args), want, "{args:?}");
        }
        assert!(
            err(&["--deployments", "2", "--namespaces", "3"])
                .starts_with("--namespaces 3 is more than --deployments 2")
        );
    }
}
