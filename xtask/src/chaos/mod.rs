//! `cargo xtask chaos`: seeded fault schedules. Each schedule is a rollout scenario on a fresh
//! kcm-testenv (rolling update, recreate, scale mid-rollout, pause/resume, rollback,
//! proportional scaling over two old ReplicaSets, adoption and orphaning, deletion, node
//! failure, history limit) run under a plan drawn from its seed: kcm-testenv fault rules
//! (watch drops, compactions, server restarts, 409s, 5xx, 429s, latency) and kcm replicas
//! SIGKILLed or SIGTERMed and restarted at random instants (with two replicas electing a
//! leader, a kill of the leader is a takeover). With `--cluster upstream` each schedule runs on
//! a fresh upstream control plane instead, where kube-apiserver and etcd are SIGKILLed and
//! started again on the plan's clock (the harness's own kubectl calls wait out a restart; kcm
//! and the node simulation see it). A replica that loses its Lease meanwhile exits, as
//! kube-controller-manager does, and is started again as a kubelet would; any other exit, and
//! any panic in a kcm log, fails the schedule.
//!
//! Every schedule checks the rollout invariants at every sample while its scenario runs (the
//! e2e checker), then convergence within a bound: every Deployment complete and `kubectl rollout
//! status` succeeding, each ReplicaSet with exactly its spec's active pods, no leaked or orphaned
//! pod or ReplicaSet, the history limit, and no two ReplicaSets of one Deployment with the same
//! template. A failing schedule prints its seed and the one command that replays it; its logs,
//! plan and timeline stay in `target/chaos/<seed>/` (a passing schedule's are removed).

mod checks;
mod failover;
mod ownership_audit;
mod ownership_log;
mod plan;
mod replica_identity;
mod replicas;
mod rng;
mod scenarios;
mod schedule;
mod terms_audit;
mod terms_log;

use std::fmt::Write as _;
use std::time::Instant;

use anyhow::{Context, bail};

use plan::Plan;
use rng::schedule_seed;

const USAGE: &str = "usage: cargo xtask chaos [--schedules N] [--seed S] [--replay SEED]

  --schedules N   schedules to run (default 20)
  --seed S        base seed of the run (default 1); schedule i runs with a seed derived from S and i
  --replay SEED   run only the schedule of SEED (what a failure prints)
  --cluster testenv|upstream
                  where schedules run (default testenv: its fault injection, watch drops,
                  compaction, 409/5xx/429, latency, restarts; upstream: a fresh etcd +
                  kube-apiserver + kube-controller-manager v1.37.2 per schedule, with
                  kube-apiserver and etcd SIGKILLed and restarted on the plan's clock)
  --sharded       3 kcm replicas with --sharding=namespace instead of one (or two electing a
                  leader): replicas SIGKILLed, SIGTERMed (they leave the ring), SIGSTOPped,
                  and a fourth added mid-rollout; checked besides: no write sent to the
                  namespace by a replica while another owned it (the replicas' logs)
  --failover N    instead: 3 kcm replicas electing a leader, the leader killed N times
                  (SIGKILL and SIGTERM in turn); takeover times and term overlap checked
  --jobs N        schedules run side by side (default 1); each has its own cluster, ports
                  and folder, so only the machine's load is shared: on a loaded machine keep
                  N at most the number of cores
  --keep          keep the folders of passing schedules too (target/chaos/<seed>/)
";

#[derive(Debug)]
struct Options {
    schedules: u64,
    seed: u64,
    replay: Option<u64>,
    failover: Option<u64>,
    keep: bool,
    upstream: bool,
    sharded: bool,
    jobs: usize,
}

impl Options {
    fn parse(args: &[String]) -> anyhow::Result<Option<Options>> {
        let mut o = Options {
            schedules: 20,
            seed: 1,
            replay: None,
            failover: None,
            keep: false,
            upstream: false,
            sharded: false,
            jobs: 1,
        };
        let mut it = args.iter();
        while let Some(a) = it.next() {
            let mut value = |flag: &str| -> anyhow::Result<u64> {
                let v = it.next().with_context(|| format!("{flag} needs a value"))?;
                v.parse()
                    .with_context(|| format!("{flag} {v}: not a number"))
            };
            match a.as_str() {
                "--schedules" => o.schedules = value("--schedules")?,
                "--seed" => o.seed = value("--seed")?,
                "--replay" => o.replay = Some(value("--replay")?),
                "--failover" => o.failover = Some(value("--failover")?),
                "--jobs" => {
                    o.jobs = usize::try_from(value("--jobs")?)
                        .ok()
                        .filter(|j| *j > 0)
                        .context("--jobs: at least 1")?;
                }
                "--keep" => o.keep = true,
                "--sharded" => o.sharded = true,
                "--cluster" => match it.next().map(String::as_str) {
                    Some("testenv") => o.upstream = false,
                    Some("upstream") => o.upstream = true,
                    Some(other) => bail!("--cluster {other}: testenv or upstream"),
                    None => bail!("--cluster needs a value"),
                },
                "-h" | "--help" => {
                    print!("{USAGE}");
                    return Ok(None);
                }
                other => bail!("unknown flag {other}\n\n{USAGE}"),
            }
        }
        Ok(Some(o))
    }
}

/// The command that replays schedule `seed` exactly.
fn replay_command(seed: u64, upstream: bool, sharded: bool) -> String {
    let sharded = if sharded { " --sharded" } else { "" };
    if upstream {
        format!("cargo xtask chaos --cluster upstream{sharded} --replay {seed}")
    } else {
        format!("cargo xtask chaos{sharded} --replay {seed}")
    }
}

/// `cargo xtask chaos`: see [`USAGE`].
pub(crate) fn run(args: &[String]) -> anyhow::Result<()> {
    let Some(opts) = Options::parse(args)? else {
        return Ok(());
    };
    crate::cluster::build(&["kcm", "kcm-testenv-cli"])?;
    let bins = if opts.upstream {
        Some(crate::upstream::build::build()?)
    } else {
        None
    };
    if let Some(n) = opts.failover {
        return failover::run(n, bins.as_ref()).map(|_| ());
    }
    let seeds: Vec<u64> = match opts.replay {
        Some(seed) => vec![seed],
        None => (0..opts.schedules)
            .map(|i| schedule_seed(opts.seed, i))
            .collect(),
    };
    let start = Instant::now();
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Results> = Default::default();
    std::thread::scope(|s| {
        for _ in 0..opts.jobs.min(seeds.len()).max(1) {
            s.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    let Some(seed) = seeds.get(i) else { break };
                    let (plan, report, outcome) =
                        run_one(*seed, bins.as_ref(), opts.upstream, opts.sharded, opts.keep);
                    // One schedule's lines together, whichever job finished it.
                    print!(
                        "chaos [{}/{}] {}\n{report}",
                        i + 1,
                        seeds.len(),
                        plan.describe()
                    );
                    if let Ok(mut r) = results.lock() {
                        let entry = r.per_scenario.entry(plan.scenario.name()).or_default();
                        entry.0 += 1;
                        if let Err(why) = outcome {
                            entry.1 += 1;
                            r.failed.push((plan, why));
                        }
                    }
                }
            });
        }
    });
    let Results {
        mut failed,
        per_scenario,
    } = results.into_inner().unwrap_or_default();
    failed.sort_by_key(|(plan, _)| seeds.iter().position(|s| *s == plan.seed));
    let summary = summary(
        seeds.len(),
        &failed,
        &per_scenario,
        start.elapsed(),
        opts.upstream,
    );
    print!("{summary}");
    let _ = std::fs::create_dir_all(crate::cluster::target_dir().join("chaos"));
    let _ = std::fs::write(
        crate::cluster::target_dir()
            .join("chaos")
            .join("summary.txt"),
        &summary,
    );
    if !failed.is_empty() {
        bail!(
            "{} of {} chaos schedule(s) failed",
            failed.len(),
            seeds.len()
        );
    }
    Ok(())
}

#[derive(Default)]
struct Results {
    failed: Vec<(Plan, String)>,
    per_scenario: std::collections::BTreeMap<&'static str, (u32, u32)>,
}

/// Runs the schedule of `seed`; returns its plan, the lines that report it, and its failure.
fn run_one(
    seed: u64,
    bins: Option<&crate::upstream::build::Binaries>,
    upstream: bool,
    sharded: bool,
    keep: bool,
) -> (Plan, String, Result<(), String>) {
    let plan = if sharded {
        Plan::generate_sharded(seed, upstream)
    } else {
        Plan::generate(seed, upstream)
    };
    let dir = schedule::schedule_dir(seed);
    let outcome = match bins {
        Some(bins) => schedule::run_on_upstream(&plan, bins, &dir),
        None => schedule::run_on_testenv(&plan, &dir),
    };
    let events: Vec<String> = outcome
        .events
        .iter()
        .map(|(t, e)| format!("{t:.1}s {e}"))
        .collect();
    let _ = std::fs::write(dir.join("events.txt"), events.join("\n") + "\n");
    match outcome.result {
        Ok(()) => {
            if !keep {
                let _ = std::fs::remove_dir_all(&dir);
            }
            let report = format!(
                "chaos   passed in {:.1}s: {}\n",
                outcome.took.as_secs_f64(),
                events.join("; ")
            );
            (plan, report, Ok(()))
        }
        Err(e) => {
            let why = format!("{e:#}");
            let report = format!(
                "chaos   FAILED in {:.1}s: {why}\n        events: {}\n        logs, plan and timeline: {}\n        replay: {}\n",
                outcome.took.as_secs_f64(),
                events.join("; "),
                dir.display(),
                replay_command(seed, upstream, sharded)
            );
            let _ = std::fs::write(dir.join("failure.txt"), format!("{why}\n"));
            (plan, report, Err(why))
        }
    }
}

fn summary(
    total: usize,
    failed: &[(Plan, String)],
    per_scenario: &std::collections::BTreeMap<&str, (u32, u32)>,
    took: std::time::Duration,
    upstream: bool,
) -> String {
    let mut s = format!(
        "\nchaos: {total} schedule(s), {} passed, {} failed, {:.0}s\n",
        total - failed.len(),
        failed.len(),
        took.as_secs_f64()
    );
    for (name, (runs, fails)) in per_scenario {
        let _ = writeln!(s, "  {name:<22} {runs:>4} run, {fails} failed");
    }
    for (plan, why) in failed {
        let _ = writeln!(
            s,
            "FAILED {}\n  {why}\n  replay: {}",
            plan.describe(),
            replay_command(plan.seed, upstream, plan.sharded)
        );
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn options_parse_and_reject() {
        let o = Options::parse(&args(&["--schedules", "5", "--seed", "9"]))
            .expect("parses")
            .expect("not help");
        assert_eq!((o.schedules, o.seed, o.replay), (5, 9, None));
        let o = Options::parse(&args(&["--replay", "123"]))
            .expect("parses")
            .expect("not help");
        assert_eq!(o.replay, Some(123));
        assert!(Options::parse(&args(&["--schedules", "x"])).is_err());
        assert!(Options::parse(&args(&["--bogus"])).is_err());
        assert!(Options::parse(&args(&["--help"])).expect("help").is_none());
        let o = Options::parse(&args(&["--cluster", "upstream"]))
            .expect("parses")
            .expect("not help");
        assert!(o.upstream);
        assert!(Options::parse(&args(&["--cluster", "kind"])).is_err());
        assert!(replay_command(7, true, false).contains("--cluster upstream --replay 7"));
        let o = Options::parse(&args(&["--jobs", "3"]))
            .expect("parses")
            .expect("not help");
        assert_eq!(o.jobs, 3);
        assert!(Options::parse(&args(&["--jobs", "0"])).is_err());
    }

    #[test]
    fn a_replayed_seed_gives_the_plan_that_failed() {
        let seed = schedule_seed(1, 17);
        let cmd = replay_command(seed, false, false);
        let replayed: u64 = cmd
            .rsplit(' ')
            .next()
            .and_then(|s| s.parse().ok())
            .expect("seed");
        assert_eq!(Plan::generate(replayed, false), Plan::generate(seed, false));
    }
}
