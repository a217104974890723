//! Command-line flags of `cargo xtask e2e`.

use std::path::PathBuf;

use anyhow::{Context, bail};

/// `cargo xtask e2e --help`.
pub(super) const USAGE: &str =
    "usage: cargo xtask e2e [--cluster testenv|upstream [--feature-gates GATES]]
                       [--kubeconfig PATH [--context NAME] [--no-kcm] [--strict] [--keep]
                       [--image-repo REPO]] [--timeout-scale F] [--only NAME,...] [--list]

Runs the end-to-end scenarios: user steps through the real kubectl, a rollout invariant checker
sampling every Deployment while it rolls out.

Without --kubeconfig: builds kcm and kcm-testenv, starts an embedded kcm-testenv cluster
(3 simulated nodes) and the kcm binary against it; images are fake (app:v1, app:v2, ...).

  --cluster upstream   run on the real control plane instead: etcd, kube-apiserver and
                       kube-controller-manager v1.37.2 built from upstream/ (cargo xtask upstream
                       build; Go needed), kube-controller-manager with
                       --controllers=*,-deployment-controller,-replicaset-controller, nodes,
                       scheduler and kubelets simulated by `kcm-testenv sim`; kcm runs as the
                       ServiceAccount of deploy/rbac.yaml, and a 403 in its log fails the run
  --cluster testenv    the default
  --feature-gates G    with --cluster upstream: kube-apiserver's and kube-controller-manager's
                       --feature-gates
  --kubeconfig PATH    run against the cluster of this kubeconfig instead; no kcm-testenv is
                       started. Upstream kube-controller-manager must run there with its
                       Deployment and ReplicaSet controllers disabled
                       (--controllers=*,-deployment-controller,-replicaset-controller), and the
                       nodes must be able to pull the pause images. kcm is started locally
                       against the cluster (--leader-elect=false) unless --no-kcm. Scenarios run
                       in namespaces kcm-e2e-<run>-<scenario>, labelled kcm-rs.io/e2e-run=<run>,
                       deleted when each scenario ends.
  --context NAME       the kubeconfig context to use (default: its current context)
  --no-kcm             kcm already runs in the cluster (e.g. deploy/deployment.yaml): start none;
                       the scenarios that kill and start kcm processes are skipped
  --strict             abort when the preflight checks warn (upstream controllers look active,
                       or a kcm already runs in the cluster without --no-kcm)
  --keep               keep the scenario namespaces for inspection
  --image-repo REPO    pause image repository (default registry.k8s.io/pause; tags 3.10, 3.9,
                       3.8, 3.7 are used), for clusters with a mirror
  --timeout-scale F    multiply every wait (default 1 on kcm-testenv, 3 with --kubeconfig)
  --only NAME,...      run only these scenarios (see --list)
  --list               print the scenario names and exit
  -h, --help           this text
";

/// What `cargo xtask e2e` was asked to do.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Options {
    /// Start the upstream control plane (`--cluster upstream`) instead of a `kcm-testenv`.
    pub upstream: bool,
    /// `--feature-gates` for the upstream control plane.
    pub feature_gates: Option<String>,
    /// External cluster; `None` starts a `kcm-testenv`.
    pub kubeconfig: Option<PathBuf>,
    /// Kubeconfig context.
    pub context: Option<String>,
    /// kcm already runs in the cluster.
    pub no_kcm: bool,
    /// Preflight warnings abort.
    pub strict: bool,
    /// Keep the scenario namespaces.
    pub keep: bool,
    /// Pause image repository override.
    pub image_repo: Option<String>,
    /// Explicit wait multiplier.
    pub timeout_scale: Option<f64>,
    /// Scenario filter (empty: all).
    pub only: Vec<String>,
    /// Print the scenario names and exit.
    pub list: bool,
    /// Print the usage and exit.
    pub help: bool,
}

/// Default wait multiplier with `--kubeconfig`: real kubelets pull images and run probes.
pub(super) const EXTERNAL_TIMEOUT_SCALE: f64 = 3.0;

/// Default wait multiplier with `--cluster upstream`: simulated nodes, but a real API server and
/// etcd, slower than kcm-testenv's memory, on a machine that also runs kube-controller-manager.
pub(super) const UPSTREAM_TIMEOUT_SCALE: f64 = 2.0;

impl Options {
    /// Parses the arguments after `e2e`; `--flag value` and `--flag=value` are both accepted.
    pub(super) fn parse(args: &[String]) -> anyhow::Result<Options> {
        let mut o = Options::default();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
                _ => (arg.as_str(), None),
            };
            let mut value = |name: &str| -> anyhow::Result<String> {
                let v = match inline.clone() {
                    Some(v) => v,
                    None => it
                        .next()
                        .cloned()
                        .with_context(|| format!("{name} needs a value\n\n{USAGE}"))?,
                };
                if v.is_empty() {
                    bail!("{name} needs a non-empty value");
                }
                Ok(v)
            };
            let switch = |o: &mut bool| -> anyhow::Result<()> {
                if inline.is_some() {
                    bail!("{flag} takes no value");
                }
                *o = true;
                Ok(())
            };
            match flag {
                "--cluster" => match value(flag)?.as_str() {
                    "upstream" => o.upstream = true,
                    "testenv" => o.upstream = false,
                    other => bail!("--cluster wants testenv or upstream, got {other:?}"),
                },
                "--feature-gates" => o.feature_gates = Some(value(flag)?),
                "--kubeconfig" => o.kubeconfig = Some(PathBuf::from(value(flag)?)),
                "--context" => o.context = Some(value(flag)?),
                "--image-repo" => o.image_repo = Some(value(flag)?),
                "--timeout-scale" => {
                    let v = value(flag)?;
                    let f: f64 = v
                        .parse()
                        .ok()
                        .filter(|f: &f64| f.is_finite() && *f > 0.0)
                        .with_context(|| {
                            format!("--timeout-scale wants a positive number, got {v:?}")
                        })?;
                    o.timeout_scale = Some(f);
                }
                "--only" => o.only.extend(
                    value(flag)?
                        .split(',')
                        .map(str::trim)
                        .filter(|s| !s.is_empty())
                        .map(str::to_string),
                ),
                "--no-kcm" => switch(&mut o.no_kcm)?,
                "--strict" => switch(&mut o.strict)?,
                "--keep" => switch(&mut o.keep)?,
                "--list" => switch(&mut o.list)?,
                "-h" | "--help" => switch(&mut o.help)?,
                other => bail!("unknown argument `{other}`\n\n{USAGE}"),
            }
        }
        if o.kubeconfig.is_none() {
            let needs: [(&str, bool); 5] = [
                ("--context", o.context.is_some()),
                ("--no-kcm", o.no_kcm),
                ("--strict", o.strict),
                ("--keep", o.keep),
                ("--image-repo", o.image_repo.is_some()),
            ];
            if let Some((name, _)) = needs.iter().find(|(_, set)| *set) {
                bail!("{name} only applies with --kubeconfig PATH (an external cluster)");
            }
        } else if o.upstream {
            bail!("--cluster upstream starts its own cluster; it does not go with --kubeconfig");
        }
        if o.feature_gates.is_some() && !o.upstream {
            bail!("--feature-gates only applies with --cluster upstream");
        }
        Ok(o)
    }

    /// Whether the scenarios run against an external cluster.
    pub(super) fn external(&self) -> bool {
        self.kubeconfig.is_some()
    }

    /// The multiplier applied to every wait.
    pub(super) fn timeout_scale(&self) -> f64 {
        self.timeout_scale.unwrap_or(if self.external() {
            EXTERNAL_TIMEOUT_SCALE
        } else if self.upstream {
            UPSTREAM_TIMEOUT_SCALE
        } else {
            1.0
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> anyhow::Result<Options> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        Options::parse(&args)
    }

    #[test]
    fn no_arguments_is_the_testenv_run() {
        let o = parse(&[]).unwrap();
        assert_eq!(o, Options::default());
        assert!(!o.external());
        assert_eq!(o.timeout_scale(), 1.0);
    }

    #[test]
    fn external_flags_in_both_spellings() {
        let o = parse(&[
            "--kubeconfig",
            "/k",
            "--context=kind-kind",
            "--no-kcm",
            "--strict",
            "--keep",
            "--image-repo=mirror.local/pause",
            "--timeout-scale",
            "2.5",
            "--only",
            "recreate, rollout-undo",
            "--only=leader-election",
        ])
        .unwrap();
        assert_eq!(
            o,
            Options {
                upstream: false,
                feature_gates: None,
                kubeconfig: Some(PathBuf::from("/k")),
                context: Some("kind-kind".into()),
                no_kcm: true,
                strict: true,
                keep: true,
                image_repo: Some("mirror.local/pause".into()),
                timeout_scale: Some(2.5),
                only: vec![
                    "recreate".into(),
                    "rollout-undo".into(),
                    "leader-election".into()
                ],
                list: false,
                help: false,
            }
        );
        assert!(o.external());
        assert_eq!(o.timeout_scale(), 2.5);
    }

    #[test]
    fn external_mode_scales_waits_by_default() {
        let o = parse(&["--kubeconfig=/k"]).unwrap();
        assert_eq!(o.timeout_scale(), EXTERNAL_TIMEOUT_SCALE);
        let o = parse(&["--timeout-scale=4"]).unwrap();
        assert_eq!(o.timeout_scale(), 4.0, "allowed on kcm-testenv too");
    }

    #[test]
    fn rejected_arguments() {
        let cases: &[(&[&str], &str)] = &[
            (&["--bogus"], "unknown argument `--bogus`"),
            (&["positional"], "unknown argument `positional`"),
            (&["--kubeconfig"], "--kubeconfig needs a value"),
            (&["--kubeconfig="], "--kubeconfig needs a non-empty value"),
            (&["--no-kcm"], "--no-kcm only applies with --kubeconfig"),
            (
                &["--context", "x"],
                "--context only applies with --kubeconfig",
            ),
            (&["--keep"], "--keep only applies with --kubeconfig"),
            (&["--strict"], "--strict only applies with --kubeconfig"),
            (
                &["--image-repo", "r"],
                "--image-repo only applies with --kubeconfig",
            ),
            (&["--timeout-scale", "0"], "positive number"),
            (&["--timeout-scale", "-1"], "positive number"),
            (&["--timeout-scale", "NaN"], "positive number"),
            (&["--timeout-scale", "fast"], "positive number"),
            (
                &["--kubeconfig=/k", "--no-kcm=yes"],
                "--no-kcm takes no value",
            ),
        ];
        for (args, want) in cases {
            let err = format!("{:#}", parse(args).unwrap_err());
            assert!(err.contains(want), "{args:?}: {err}");
        }
    }

    #[test]
    fn upstream_cluster() {
        let o = parse(&["--cluster", "upstream", "--feature-gates=A=false"]).unwrap();
        assert!(o.upstream && !o.external());
        assert_eq!(o.feature_gates.as_deref(), Some("A=false"));
        assert!(!parse(&["--cluster=testenv"]).unwrap().upstream);
        let cases: &[(&[&str], &str)] = &[
            (
                &["--cluster", "kind"],
                "--cluster wants testenv or upstream",
            ),
            (
                &["--cluster=upstream", "--kubeconfig=/k"],
                "does not go with --kubeconfig",
            ),
            (
                &["--feature-gates=A=true"],
                "only applies with --cluster upstream",
            ),
        ];
        for (args, want) in cases {
            let err = format!("{:#}", parse(args).unwrap_err());
            assert!(err.contains(want), "{args:?}: {err}");
        }
    }

    #[test]
    fn help_and_list() {
        assert!(parse(&["-h"]).unwrap().help);
        assert!(parse(&["--help"]).unwrap().help);
        assert!(parse(&["--list"]).unwrap().list);
    }
}
