//! `cargo xtask bench <name>`: benchmark workloads.
//!
//! Each workload is an example binary of the crate it measures, built in release mode and run
//! as its own process, so its peak RSS is its own. Every workload prints one JSON line per
//! measurement on stdout. Results go into `docs/benchmarks.md` with the command that made them.

use crate::run_cmd;

/// (name, package, example, extra cargo args)
const WORKLOADS: &[(&str, &str, &str, &[&str])] = &[
    ("workqueue", "kcm-workqueue", "bench", &[]),
    ("store", "kcm-store", "bench", &["--features", "k8s"]),
    ("testenv", "kcm-testenv", "bench", &[]),
    ("informer", "kcm-informer", "bench", &[]),
    ("controller", "kcm-controller", "bench", &[]),
    ("replicaset", "kcm-replicaset", "bench", &[]),
    ("deployment", "kcm-deployment", "bench", &[]),
];

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    if args.is_empty() || args.iter().any(|a| a == "--list") {
        println!("benchmarks:");
        for (name, package, example, _) in WORKLOADS {
            println!("  {name:<12} ({package}, example `{example}`)");
        }
        return Ok(());
    }
    for name in args {
        let Some((_, package, example, extra)) = WORKLOADS.iter().find(|w| w.0 == name) else {
            anyhow::bail!("unknown benchmark `{name}` (see `cargo xtask bench --list`)");
        };
        let mut cargo_args = vec![
            "run",
            "--release",
            "--locked",
            "-p",
            package,
            "--example",
            example,
        ];
        cargo_args.extend_from_slice(extra);
        run_cmd("cargo", &cargo_args)?;
    }
    Ok(())
}
