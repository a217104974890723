//! `cargo xtask bench <name>... [--rounds N]`: benchmark workloads.
//!
//! Each workload is an example binary of the crate it measures, built in release mode and run
//! as its own process, so its peak RSS is its own. Every workload prints one JSON line per
//! measurement on stdout. Results go into `docs/benchmarks.md` with the command that made them.
//!
//! `workqueue`, `store` and `informer` are also measured against client-go v0.37.2: the same
//! workloads written on client-go in `upstream/cmd/peerbench` (built with Go on the spot).
//! Both sides run alternately for `--rounds` rounds (default 3), and one markdown table of the
//! medians and their ratios is printed per workload, and kept with every JSON line in
//! `target/bench/<name>.md` and `target/bench/<name>.jsonl`; `--table` prints the table of the
//! last run again from that JSONL file without running anything.
//!
//! `testenv` is measured against kube-apiserver v1.37.2 + etcd (see `testenv.rs`); the
//! in-process throughput workloads of kcm-testenv alone are `testenv-throughput`.
//!
//! `workqueue` and `store` run each round twice, quiet and beside a fixed background load
//! this command starts itself (see `load.rs`), and print a table for each.

mod controllers;
mod controllers_args;
mod controllers_audit;
mod controllers_plot;
mod deployments;
mod figures;
mod load;
mod peer;
mod pid_stats;
mod sharded;
mod sharded_pause;
mod table;
mod testenv;
mod testenv_counters;

use std::process::Command;

use anyhow::Context;
use serde_json::Value;

use crate::run_cmd;
use table::Figure;

/// (name, package, example, extra cargo args)
const WORKLOADS: &[(&str, &str, &str, &[&str])] = &[
    ("workqueue", "kcm-workqueue", "workqueue_bench", &[]),
    ("store", "kcm-store", "store_bench", &["--features", "k8s"]),
    ("testenv-throughput", "kcm-testenv", "testenv_bench", &[]),
    ("informer", "kcm-informer", "informer_bench", &[]),
    ("controller", "kcm-controller", "controller_bench", &[]),
    ("replicaset", "kcm-replicaset", "replicaset_bench", &[]),
    ("deployment", "kcm-deployment", "deployment_bench", &[]),
];

/// A workload measured against client-go.
struct AgainstClientGo {
    name: &'static str,
    /// The peerbench command lines of one round (none for the informer, whose peer runs inside
    /// the Rust example, which owns the API server).
    peer_runs: &'static [&'static [&'static str]],
    /// The rows of its table.
    figures: &'static [Figure],
    /// The conditions each round runs in (`load::LOADS`, or quiet only).
    loads: &'static [&'static str],
}

const AGAINST_CLIENT_GO: &[AgainstClientGo] = &[
    AgainstClientGo {
        name: "workqueue",
        peer_runs: &[
            &["workqueue", "churn"],
            &["workqueue", "delay"],
            &["workqueue", "ratelimit"],
        ],
        figures: figures::WORKQUEUE,
        loads: load::LOADS,
    },
    AgainstClientGo {
        name: "store",
        peer_runs: &[&["store"]],
        figures: figures::STORE,
        loads: load::LOADS,
    },
    AgainstClientGo {
        name: "informer",
        peer_runs: &[],
        figures: figures::INFORMER,
        loads: &["quiet"],
    },
];

const DEFAULT_ROUNDS: usize = 3;

pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    if args.is_empty() || args.iter().any(|a| a == "--list") {
        println!("benchmarks (workqueue, store, informer: against client-go, --rounds N):");
        println!(
            "  controllers  (against kube-controller-manager v1.37.2, --deployments N, \
             --namespaces M, --qps Q, --cluster upstream|testenv; --plot: the CPU plot into \
             docs/ from the runs kept; sharded: --replicas 1,2,4 [--namespaces M] [--gate on|off])"
        );
        println!(
            "  testenv      (kcm-testenv against kube-apiserver v1.37.2 + etcd: start-to-ready, \
             1,000 ConfigMaps applied, listed, watched; --rounds N)"
        );
        for (name, package, example, _) in WORKLOADS {
            println!("  {name:<12} ({package}, example `{example}`)");
        }
        return Ok(());
    }
    let (names, rounds) = parse_args(args)?;
    let table_only = args.iter().any(|a| a == "--table");
    for name in names {
        if name == "controllers" {
            run_controllers(args, rounds)?;
            continue;
        }
        if name == "testenv" {
            testenv::run(args, rounds)?;
            continue;
        }
        let Some((_, package, example, extra)) = WORKLOADS.iter().find(|w| w.0 == name) else {
            anyhow::bail!("unknown benchmark `{name}` (see `cargo xtask bench --list`)");
        };
        if let Some(w) = AGAINST_CLIENT_GO.iter().find(|w| w.name == name) {
            if table_only {
                let path = crate::cluster::target_dir()
                    .join("bench")
                    .join(format!("{name}.jsonl"));
                let text = std::fs::read_to_string(&path).with_context(|| {
                    format!("reading {} (run the benchmark first)", path.display())
                })?;
                let lines = peer::parse_json_lines(&text);
                report(name, rounds_in(&lines), &lines, w.figures, w.loads)?;
                continue;
            }
            let ours = peer::build_example(name, package, example, extra)?;
            let peer = peer::build_peer()?;
            let lines = if name == "informer" {
                // One run: the example populates its API server once and alternates the modes,
                // client-go's among them, for BENCH_ROUNDS rounds.
                let mut cmd = Command::new(&ours);
                cmd.env("BENCH_PEER", &peer)
                    .env("BENCH_ROUNDS", rounds.to_string());
                peer::json_lines(&mut cmd, 1)?
            } else {
                let mut lines = Vec::new();
                for round in 1..=rounds {
                    for condition in w.loads {
                        let _load = load::BackgroundLoad::start(condition)?;
                        let mut these = Vec::new();
                        // Alternate which side runs first, so neither always meets the same
                        // moment of the machine.
                        let ours_lines = |lines: &mut Vec<Value>| -> anyhow::Result<()> {
                            lines.extend(peer::json_lines(&mut Command::new(&ours), round)?);
                            Ok(())
                        };
                        if round % 2 == 1 {
                            ours_lines(&mut these)?;
                        }
                        for a in w.peer_runs {
                            these.extend(peer::json_lines(Command::new(&peer).args(*a), round)?);
                        }
                        if round % 2 == 0 {
                            ours_lines(&mut these)?;
                        }
                        for line in &mut these {
                            line["load"] = (*condition).into();
                        }
                        lines.extend(these);
                    }
                }
                lines
            };
            report(name, rounds, &lines, w.figures, w.loads)?;
            continue;
        }
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

/// `cargo xtask bench controllers`: the sharded run with `--replicas`, else the run against
/// kube-controller-manager.
fn run_controllers(args: &[String], rounds: usize) -> anyhow::Result<()> {
    let Some(ks) = sharded::replicas_arg(args)? else {
        return controllers::run(args, rounds);
    };
    if args.iter().any(|a| a == "--plot") {
        anyhow::bail!("--plot draws the single-replica runs, not with --replicas");
    }
    sharded::run(args, &ks, controllers_args::deployments(args)?)
}

/// Workload names and `--rounds N`.
fn parse_args(args: &[String]) -> anyhow::Result<(Vec<&str>, usize)> {
    let mut names = Vec::new();
    let mut rounds = DEFAULT_ROUNDS;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        match a.as_str() {
            "--rounds" => {
                rounds = it
                    .next()
                    .and_then(|n| n.parse().ok())
                    .filter(|n| *n > 0)
                    .ok_or_else(|| anyhow::anyhow!("--rounds needs a positive number"))?;
            }
            "--table" | "--plot" => {}
            "--deployments" | "--cluster" | "--replicas" | "--namespaces" | "--gate" | "--qps"
            | "--rollout-limit" => {
                it.next();
            }
            other if other.starts_with("--") => anyhow::bail!("unknown option `{other}`"),
            name => names.push(name),
        }
    }
    Ok((names, rounds))
}

/// The number of rounds a set of lines came from (the largest `round`, at least 1).
fn rounds_in(lines: &[Value]) -> usize {
    lines
        .iter()
        .filter_map(|l| l.get("round").and_then(Value::as_u64))
        .max()
        .map_or(1, |r| r as usize)
}

/// Prints the comparison tables (one per load condition) and keeps them with the JSON lines
/// under `target/bench/`.
fn report(
    name: &str,
    rounds: usize,
    lines: &[Value],
    figures: &[Figure],
    conditions: &[&str],
) -> anyhow::Result<()> {
    let mut md = format!(
        "`cargo xtask bench {name} --rounds {rounds}`: medians of {rounds} rounds, both sides \
         alternating.\n"
    );
    for condition in conditions {
        let these = load::lines_of(lines, condition);
        let rows = table::rows(&these, figures);
        let loads: Vec<f64> = these
            .iter()
            .filter_map(|l| l.get("loadavg_1m").and_then(Value::as_f64))
            .collect();
        let what = match *condition {
            "loaded" => format!(
                "loaded ({} spinning processes started by the benchmark)",
                load::LOAD_PROCESSES
            ),
            other => other.to_string(),
        };
        md.push_str(&format!(
            "\n{what}{}:\n\n",
            match table::median(&loads) {
                Some(l) => format!(", median 1-minute load average {l:.1}"),
                None => String::new(),
            }
        ));
        md.push_str(&table::markdown(&rows));
    }
    let dir = crate::cluster::target_dir().join("bench");
    std::fs::create_dir_all(&dir)?;
    let jsonl: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join(format!("{name}.jsonl")), jsonl)?;
    std::fs::write(dir.join(format!("{name}.md")), &md)?;
    println!("\n{md}");
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{parse_args, rounds_in};
    use serde_json::json;

    fn strings(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn rounds_default_to_three_and_are_read_anywhere() {
        let a = strings(&["store"]);
        assert_eq!(parse_args(&a).ok(), Some((vec!["store"], 3)));
        let a = strings(&["store", "--rounds", "5", "workqueue"]);
        assert_eq!(parse_args(&a).ok(), Some((vec!["store", "workqueue"], 5)));
        assert!(parse_args(&strings(&["--rounds", "0"])).is_err());
        assert!(parse_args(&strings(&["--rounds"])).is_err());
        assert!(parse_args(&strings(&["--fast"])).is_err());
        let a = strings(&["store", "--table"]);
        assert_eq!(parse_args(&a).ok(), Some((vec!["store"], 3)));
        let a = strings(&["controllers", "--qps", "100", "--namespaces", "3", "--plot"]);
        assert_eq!(parse_args(&a).ok(), Some((vec!["controllers"], 3)));
        let a = strings(&["controllers", "--rollout-limit", "25", "--rounds", "1"]);
        assert_eq!(parse_args(&a).ok(), Some((vec!["controllers"], 1)));
    }

    #[test]
    fn rounds_of_saved_lines_are_the_largest_round() {
        let lines = [json!({"round": 1}), json!({"round": 3}), json!({"x": 1})];
        assert_eq!(rounds_in(&lines), 3);
        assert_eq!(rounds_in(&[json!({"x": 1})]), 1);
    }
}
