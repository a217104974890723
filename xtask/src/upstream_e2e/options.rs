//! `cargo xtask upstream-e2e` flags, and the tests that cannot run on simulated nodes.

use anyhow::bail;

pub const USAGE: &str = "usage: cargo xtask upstream-e2e [--controllers kcm|upstream|both]
                                 [--focus REGEX] [--skip REGEX] [--nodes N]

Runs upstream v1.37.2's own e2e tests of Deployments and ReplicaSets (test/e2e/apps/
deployment.go and replica_set.go, built as e2e.test from upstream/) on etcd + kube-apiserver +
kube-controller-manager v1.37.2 with nodes simulated by `kcm-testenv sim`, once per side:

  upstream  kube-controller-manager runs all its controllers (its own Deployment and
            ReplicaSet controllers included)
  kcm       kube-controller-manager runs without those two
            (--controllers=*,-deployment-controller,-replicaset-controller) and kcm runs them

prints a table of each test's outcome on both sides, and fails if a test passes under
kube-controller-manager but not under kcm, unless xtask/src/upstream_e2e/expected_differences.txt
lists it with a reason. Reports (Ginkgo JSON, JUnit XML), e2e.test's log and the cluster's logs
are kept in target/upstream-e2e/<side>/; the table is written to target/upstream-e2e/table.md.

  --controllers SIDE  kcm, upstream, or both (default both; one side alone fails only when its
                      suite could not run)
  --focus REGEX       Ginkgo focus (default: \\[sig-apps\\] (Deployment|ReplicaSet))
  --skip REGEX        more to skip, besides the tests that cannot run on simulated nodes
                      (listed in docs/upstream-e2e.md)
  --nodes N           simulated nodes (default 3)
";

/// The default focus: both files' `SIGDescribe`s.
pub const DEFAULT_FOCUS: &str = r"\[sig-apps\] (Deployment|ReplicaSet)";

/// The test names the table keeps (Ginkgo's report lists every spec of the binary).
pub const SCOPE: &[&str] = &["[sig-apps] Deployment", "[sig-apps] ReplicaSet"];

/// Tests that cannot run on simulated nodes, as Ginkgo skip patterns, with the reason. They
/// would make kube-apiserver reach a pod or a node by its IP, which the simulation makes up in
/// private ranges (pods 10.244.0.0/16, nodes 172.18.0.0/16) where nothing listens; on this
/// machine no traffic may go to a private-range address at all.
pub const CANNOT_RUN: &[(&str, &str)] = &[
    (
        r"should serve a basic image on each replica with a public image",
        "checks every pod answers HTTP through kube-apiserver's pod proxy \
         (e2epod.WaitForPodsResponding): simulated pods run no container and their IPs are made up",
    ),
    (
        r"should serve a basic image on each replica with a private image",
        "the same check, and provider gce only (private registry credentials)",
    ),
    (
        r"should not disrupt a cloud load-balancer's connectivity during rollout",
        "a cloud load balancer (providers aws, azure, gce) polled over HTTP while rolling out",
    ),
];

/// Why `name` cannot run on simulated nodes, if it is one of [`CANNOT_RUN`].
pub fn cannot_run_reason(name: &str) -> Option<&'static str> {
    CANNOT_RUN
        .iter()
        .find(|(pattern, _)| name.contains(pattern))
        .map(|(_, why)| *why)
}

/// Which controllers run the two workloads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    /// kube-controller-manager's own.
    Upstream,
    /// kcm's, next to kube-controller-manager without its two.
    Kcm,
}

impl Side {
    /// `upstream` or `kcm`.
    pub fn name(self) -> &'static str {
        match self {
            Side::Upstream => "upstream",
            Side::Kcm => "kcm",
        }
    }
}

/// Parsed flags.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// Sides to run, upstream first.
    pub sides: Vec<Side>,
    /// `--ginkgo.focus`.
    pub focus: String,
    /// Extra `--ginkgo.skip`.
    pub skip: Option<String>,
    /// Simulated nodes.
    pub nodes: usize,
}

impl Options {
    /// Parses the flags after `upstream-e2e`; `None` for `--help`.
    pub fn parse(args: &[String]) -> anyhow::Result<Option<Options>> {
        let mut o = Options {
            sides: vec![Side::Upstream, Side::Kcm],
            focus: DEFAULT_FOCUS.into(),
            skip: None,
            nodes: 3,
        };
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
                _ => (arg.as_str(), None),
            };
            if matches!(flag, "-h" | "--help") {
                return Ok(None);
            }
            let mut value = || {
                inline
                    .clone()
                    .or_else(|| it.next().cloned())
                    .ok_or_else(|| anyhow::anyhow!("{flag} needs a value\n\n{USAGE}"))
            };
            match flag {
                "--controllers" => {
                    o.sides = match value()?.as_str() {
                        "both" => vec![Side::Upstream, Side::Kcm],
                        "upstream" => vec![Side::Upstream],
                        "kcm" => vec![Side::Kcm],
                        other => bail!("--controllers wants kcm, upstream or both, not {other:?}"),
                    }
                }
                "--focus" => o.focus = value()?,
                "--skip" => o.skip = Some(value()?),
                "--nodes" => {
                    let v = value()?;
                    o.nodes = v.parse().ok().filter(|n| *n > 0).ok_or_else(|| {
                        anyhow::anyhow!("--nodes wants a positive count, got {v:?}")
                    })?;
                }
                other => bail!("unknown flag `{other}`\n\n{USAGE}"),
            }
        }
        Ok(Some(o))
    }

    /// The `--ginkgo.skip` regular expression: what cannot run, and `--skip`.
    pub fn skip_regex(&self) -> String {
        CANNOT_RUN
            .iter()
            .map(|(pattern, _)| regex_quote(pattern))
            .chain(self.skip.clone())
            .collect::<Vec<_>>()
            .join("|")
    }
}

/// Escapes the characters Go's regexp syntax gives a meaning.
fn regex_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> anyhow::Result<Option<Options>> {
        Options::parse(&args.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn defaults_run_both_sides_on_both_files() {
        let o = parse(&[]).expect("parses").expect("not help");
        assert_eq!(o.sides, vec![Side::Upstream, Side::Kcm]);
        assert_eq!(o.focus, DEFAULT_FOCUS);
        assert_eq!(o.nodes, 3);
        let skip = o.skip_regex();
        assert!(skip.contains("should serve a basic image on each replica with a public image"));
        assert!(skip.contains(r"cloud load-balancer's"), "{skip}");
    }

    #[test]
    fn flags_narrow_a_run() {
        let o = parse(&[
            "--controllers=kcm",
            "--focus",
            "proportional",
            "--skip=rollover",
            "--nodes",
            "5",
        ])
        .expect("parses")
        .expect("not help");
        assert_eq!(o.sides, vec![Side::Kcm]);
        assert_eq!(o.focus, "proportional");
        assert!(o.skip_regex().ends_with("|rollover"));
        assert_eq!(o.nodes, 5);
        assert!(parse(&["--help"]).expect("parses").is_none());
        assert!(parse(&["--controllers", "neither"]).is_err());
        assert!(parse(&["--nodes", "0"]).is_err());
        assert!(parse(&["--focus"]).is_err());
        assert!(parse(&["--bogus"]).is_err());
    }

    #[test]
    fn names_why_a_test_cannot_run() {
        let why = cannot_run_reason(
            "[sig-apps] ReplicaSet should serve a basic image on each replica with a public image [Conformance]",
        );
        assert!(why.is_some_and(|w| w.contains("pod proxy")), "{why:?}");
        assert_eq!(
            cannot_run_reason("[sig-apps] Deployment deployment should support rollover"),
            None
        );
    }

    #[test]
    fn quotes_regex_metacharacters() {
        assert_eq!(regex_quote("a.b (c) [d]"), r"a\.b \(c\) \[d\]");
    }
}
