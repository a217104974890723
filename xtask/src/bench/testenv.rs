//! `cargo xtask bench testenv [--rounds N]`: kcm-testenv beside kube-apiserver v1.37.2 + etcd
//! on this machine, driven by the same client (`testenv/cli/examples/bench_apiserver.rs`,
//! kube-client through the kubeconfig each server side writes).
//!
//! Each round, on each side (the order alternating between rounds):
//! * start-to-ready: the client is started first and waits; then the server is spawned —
//!   the release `kcm-testenv --no-sim` (the API server alone), or etcd and kube-apiserver as
//!   `cargo xtask cluster up --upstream` starts them ([`control_plane::start_api_server`],
//!   without the audit log) — and the figure runs from that spawn (etcd's, upstream) to the
//!   client's first `/readyz` answered `ok` and its first list of ConfigMaps;
//! * the workload of the example on the server just started, its CPU (utime + stime) read
//!   from `/proc/<pid>/stat` of kcm-testenv, or of kube-apiserver + etcd, per phase, and their
//!   peak RSS (VmHWM);
//! * and `TestEnv::start` in the client's own process (`embedded`).
//!
//! Every line is kept in `target/bench/testenv.jsonl` and the table of medians in
//! `target/bench/testenv.md`; `--table` prints it again from the JSONL file.

use std::io::{BufRead, BufReader, Lines};
use std::path::Path;
use std::process::{ChildStdout, Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use kcm_util::proc_stats::{loadavg_1m, pid_cpu_ms, pid_status_kib};
use serde_json::Value;

use super::table::{self, Better, Figure};
use super::{peer, rounds_in};
use crate::cluster::{Cluster, Proc, target_dir};
use crate::upstream::{build as upstream_build, control_plane};

const OURS: &str = "kcm-testenv";
const EMBEDDED: &str = "kcm-testenv-embedded";
const PEER: &str = "kube-apiserver";

const START_RS: &[(&str, &str)] = &[("workload", "start"), ("impl", OURS)];
const START_EMBEDDED: &[(&str, &str)] = &[("workload", "start"), ("impl", EMBEDDED)];
const START_GO: &[(&str, &str)] = &[("workload", "start"), ("impl", PEER)];
const WORK_RS: &[(&str, &str)] = &[("workload", "apply_list_watch"), ("impl", OURS)];
const WORK_GO: &[(&str, &str)] = &[("workload", "apply_list_watch"), ("impl", PEER)];
/// No line: a row kube-apiserver has no counterpart for.
const NO_PEER: &[(&str, &str)] = &[("impl", "none")];

const fn fig(
    label: &'static str,
    field: &'static str,
    peer: &'static [(&'static str, &'static str)],
    ours: &'static [(&'static str, &'static str)],
    better: Better,
) -> Figure {
    Figure {
        label,
        field,
        peer,
        ours,
        better,
    }
}

use Better::{Lower, Neither};

/// The rows of the table: kube-apiserver + etcd is the peer column.
const FIGURES: &[Figure] = &[
    fig(
        "start → /readyz ok (ms)",
        "ready_ms",
        START_GO,
        START_RS,
        Lower,
    ),
    fig(
        "start → first ConfigMap list (ms)",
        "first_list_ms",
        START_GO,
        START_RS,
        Lower,
    ),
    fig(
        "start → first list, embedded `TestEnv::start` (ms)",
        "first_list_ms",
        START_GO,
        START_EMBEDDED,
        Lower,
    ),
    fig(
        "`TestEnv::start` call alone (ms)",
        "start_call_ms",
        NO_PEER,
        START_EMBEDDED,
        Lower,
    ),
    fig(
        "server CPU until ready (ms)",
        "server_cpu_ready_ms",
        START_GO,
        START_RS,
        Lower,
    ),
    fig(
        "server RSS when ready (MiB)",
        "server_rss_ready_mib",
        START_GO,
        START_RS,
        Lower,
    ),
    fig(
        "resources served (aggregated discovery)",
        "resources",
        START_GO,
        START_RS,
        Neither,
    ),
    fig(
        "apply 1,000 ConfigMaps, 64 in flight (ms)",
        "apply_ms",
        WORK_GO,
        WORK_RS,
        Lower,
    ),
    fig("list 1,000 whole (ms)", "list_ms", WORK_GO, WORK_RS, Lower),
    fig(
        "list 1,000 in pages of 100 (ms)",
        "paged_list_ms",
        WORK_GO,
        WORK_RS,
        Lower,
    ),
    fig(
        "apply 1,000 again (ms)",
        "reapply_ms",
        WORK_GO,
        WORK_RS,
        Lower,
    ),
    fig(
        "watch receives the 1,000 updates (ms)",
        "watch_all_ms",
        WORK_GO,
        WORK_RS,
        Lower,
    ),
    fig(
        "server CPU: apply (ms)",
        "apply_server_cpu_ms",
        WORK_GO,
        WORK_RS,
        Lower,
    ),
    fig(
        "server CPU: list whole (ms)",
        "list_server_cpu_ms",
        WORK_GO,
        WORK_RS,
        Lower,
    ),
    fig(
        "server CPU: list paged (ms)",
        "paged_list_server_cpu_ms",
        WORK_GO,
        WORK_RS,
        Lower,
    ),
    fig(
        "server CPU: apply again + watch (ms)",
        "reapply_watch_server_cpu_ms",
        WORK_GO,
        WORK_RS,
        Lower,
    ),
    fig(
        "server CPU: whole workload (ms)",
        "server_cpu_ms",
        WORK_GO,
        WORK_RS,
        Lower,
    ),
    fig(
        "server peak RSS (MiB)",
        "server_peak_rss_mib",
        WORK_GO,
        WORK_RS,
        Lower,
    ),
    fig(
        "client CPU: whole workload (ms)",
        "client_cpu_ms",
        WORK_GO,
        WORK_RS,
        Neither,
    ),
];

/// Runs the comparison (or, with `--table`, prints the last one again).
pub(super) fn run(args: &[String], rounds: usize) -> anyhow::Result<()> {
    let dir = target_dir().join("bench");
    if args.iter().any(|a| a == "--table") {
        let path = dir.join("testenv.jsonl");
        let text = std::fs::read_to_string(&path)
            .with_context(|| format!("reading {} (run the benchmark first)", path.display()))?;
        let lines = peer::parse_json_lines(&text);
        println!("\n{}", markdown(rounds_in(&lines), &lines));
        return Ok(());
    }
    let client = peer::build_example(
        "testenv",
        "kcm-testenv-cli",
        "bench_apiserver",
        &["--bin", "kcm-testenv"],
    )?;
    let server = dir.join("testenv-kcm-testenv");
    let built = target_dir().join("release").join("kcm-testenv");
    std::fs::copy(&built, &server)
        .with_context(|| format!("copying {} to {}", built.display(), server.display()))?;
    let bins = upstream_build::build()?;
    let mut lines = Vec::new();
    for round in 1..=rounds {
        let mut these = Vec::new();
        let sides: [&str; 2] = if round % 2 == 1 {
            [OURS, PEER]
        } else {
            [PEER, OURS]
        };
        for side in sides {
            let run_dir = dir.join(format!("{side}-run"));
            let _ = std::fs::remove_dir_all(&run_dir);
            std::fs::create_dir_all(&run_dir)?;
            these.extend(if side == OURS {
                testenv_round(&client, &server, &run_dir, round)?
            } else {
                upstream_round(&client, &bins, &run_dir, round)?
            });
        }
        these.push(tagged(
            one_line(Command::new(&client).arg("embedded"), round)?,
            EMBEDDED,
        ));
        for line in &mut these {
            line["round"] = round.into();
            eprintln!("xtask: round {round}: {line}");
        }
        lines.extend(these);
    }
    let md = markdown(rounds, &lines);
    std::fs::create_dir_all(&dir)?;
    let jsonl: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("testenv.jsonl"), jsonl)?;
    std::fs::write(dir.join("testenv.md"), &md)?;
    for line in &lines {
        println!("{line}");
    }
    println!("\n{md}");
    Ok(())
}

/// kcm-testenv as a process: start-to-ready, then the workload on it.
fn testenv_round(
    client: &Path,
    server: &Path,
    dir: &Path,
    round: usize,
) -> anyhow::Result<Vec<Value>> {
    let mut waiting = ReadyClient::start(client, &dir.join("kubeconfig"))?;
    let spawned = SystemTime::now();
    let cluster = Cluster::start_binary(dir, server, &["--no-sim"])?;
    let pid = cluster
        .with_process("kcm-testenv", |p| p.id())
        .context("no kcm-testenv process")?;
    let start = waiting.finish(spawned, &[pid])?;
    let work = one_line(&mut workload(client, &cluster.kubeconfig, &[pid]), round)?;
    Ok(vec![tagged(start, OURS), tagged(work, OURS)])
}

/// etcd + kube-apiserver: start-to-ready, then the workload on them.
fn upstream_round(
    client: &Path,
    bins: &upstream_build::Binaries,
    dir: &Path,
    round: usize,
) -> anyhow::Result<Vec<Value>> {
    let mut waiting = ReadyClient::start(client, &dir.join("kubeconfig"))?;
    let run = control_plane::start_api_server(dir, bins, "", false)?;
    let pids: Vec<u32> = run.procs.iter().map(Proc::id).collect();
    let start = waiting.finish(run.etcd_spawned, &pids)?;
    let work = one_line(&mut workload(client, &run.admin, &pids), round)?;
    Ok(vec![tagged(start, PEER), tagged(work, PEER)])
}

/// The example in `ready` mode, started before the server and waiting for its kubeconfig.
struct ReadyClient {
    /// Killed if still running when dropped.
    _proc: Proc,
    lines: Lines<BufReader<ChildStdout>>,
}

impl ReadyClient {
    /// Starts it and returns once it says it waits (so its own start is not timed).
    fn start(client: &Path, kubeconfig: &Path) -> anyhow::Result<ReadyClient> {
        let mut cmd = Command::new(client);
        cmd.arg("ready")
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit());
        let mut proc = Proc::spawn(&mut cmd, "bench_apiserver ready")?;
        let mut lines = BufReader::new(proc.take_stdout().context("no stdout pipe")?).lines();
        match lines.next().transpose()? {
            Some(l) if l.starts_with("waiting") => Ok(ReadyClient { _proc: proc, lines }),
            other => bail!("bench_apiserver ready did not start waiting (printed {other:?})"),
        }
    }

    /// Reads its ready line (sampling the servers' CPU and RSS right away) and its discovery
    /// line; returns the start figures with the times from `spawned`.
    fn finish(&mut self, spawned: SystemTime, pids: &[u32]) -> anyhow::Result<Value> {
        let mut ready = self.next_json()?;
        let cpu: Option<u64> = pids.iter().map(|p| pid_cpu_ms(*p)).sum();
        let rss: Option<u64> = pids.iter().map(|p| pid_status_kib(*p, "VmRSS")).sum();
        let served = self.next_json()?;
        let spawned_ns = spawned
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        start_figures(&mut ready, spawned_ns)?;
        ready["server_cpu_ready_ms"] = cpu.context("reading the servers' /proc/<pid>/stat")?.into();
        ready["server_rss_ready_mib"] =
            mib(rss.context("reading the servers' /proc/<pid>/status")?).into();
        for key in ["groups", "resources"] {
            ready[key] = served[key].clone();
        }
        Ok(ready)
    }

    fn next_json(&mut self) -> anyhow::Result<Value> {
        for line in self.lines.by_ref() {
            if let Ok(v @ Value::Object(_)) = serde_json::from_str::<Value>(line?.trim()) {
                return Ok(v);
            }
        }
        bail!("bench_apiserver ready ended without its figures (its error is above)")
    }
}

/// Adds `ready_ms` and `first_list_ms` (from `spawned_ns`, Unix nanoseconds) to a ready line
/// that carries the instants `ready_unix_ns` and `first_list_unix_ns` (as strings: they do
/// not fit a JSON double).
fn start_figures(line: &mut Value, spawned_ns: u128) -> anyhow::Result<()> {
    for (instant, figure) in [
        ("ready_unix_ns", "ready_ms"),
        ("first_list_unix_ns", "first_list_ms"),
    ] {
        let at: u128 = line[instant]
            .as_str()
            .and_then(|s| s.parse().ok())
            .with_context(|| format!("no {instant} in {line}"))?;
        if at < spawned_ns {
            bail!("{instant} is before the server was spawned: {line}");
        }
        line[figure] = (((at - spawned_ns) as f64 / 1e4).round() / 100.0).into();
    }
    Ok(())
}

fn mib(kib: u64) -> f64 {
    (kib as f64 / 1024.0 * 10.0).round() / 10.0
}

/// The example's workload against `kubeconfig`, measuring the processes `pids`.
fn workload(client: &Path, kubeconfig: &Path, pids: &[u32]) -> Command {
    let mut cmd = Command::new(client);
    cmd.arg("workload").arg("--kubeconfig").arg(kubeconfig);
    for pid in pids {
        cmd.arg("--pid").arg(pid.to_string());
    }
    cmd
}

/// Runs `cmd` and returns its one JSON line.
fn one_line(cmd: &mut Command, round: usize) -> anyhow::Result<Value> {
    peer::json_lines(cmd, round)?
        .into_iter()
        .next()
        .with_context(|| format!("{cmd:?} printed no figures"))
}

/// `line` with its `impl`, the 1-minute load average now, and the peak RSS in MiB.
fn tagged(mut line: Value, side: &str) -> Value {
    line["impl"] = side.into();
    if let Some(l) = loadavg_1m() {
        line["loadavg_1m"] = l.into();
    }
    if let Some(kib) = line["server_peak_rss_kb"].as_u64() {
        line["server_peak_rss_mib"] = mib(kib).into();
    }
    line
}

/// The table of a run, with its command and the median load.
fn markdown(rounds: usize, lines: &[Value]) -> String {
    let rows = table::rows(lines, FIGURES);
    let loads: Vec<f64> = lines
        .iter()
        .filter_map(|l| l["loadavg_1m"].as_f64())
        .collect();
    let mut md = format!(
        "`cargo xtask bench testenv --rounds {rounds}`: medians of {rounds} rounds, sides \
         alternating{}.\n\n",
        table::median(&loads).map_or(String::new(), |l| format!(
            " (median 1-minute load average {l:.1})"
        ))
    );
    md.push_str(
        &table::markdown(&rows)
            .replacen("client-go (median)", "kube-apiserver + etcd (median)", 1)
            .replacen("kcm-rs (median)", "kcm-testenv (median)", 1)
            .replacen("kcm / client-go", "kcm-testenv / upstream", 1),
    );
    md
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn start_figures_are_milliseconds_from_the_spawn() {
        let mut line = json!({
            "ready_unix_ns": "1700000000012345678",
            "first_list_unix_ns": "1700000000015000000",
        });
        start_figures(&mut line, 1_700_000_000_000_000_000).expect("figures");
        assert_eq!(line["ready_ms"], 12.35);
        assert_eq!(line["first_list_ms"], 15.0);
        let mut early = json!({"ready_unix_ns": "5", "first_list_unix_ns": "6"});
        assert!(start_figures(&mut early, 10).is_err());
        let mut missing = json!({"ready_unix_ns": "5"});
        assert!(start_figures(&mut missing, 1).is_err());
    }

    #[test]
    fn the_table_names_both_servers_and_reads_each_side_s_lines() {
        let lines = [
            json!({"workload": "start", "impl": PEER, "ready_ms": 6000.0, "loadavg_1m": 4.0}),
            json!({"workload": "start", "impl": OURS, "ready_ms": 30.0, "loadavg_1m": 6.0}),
            json!({"workload": "start", "impl": EMBEDDED, "first_list_ms": 12.0, "start_call_ms": 9.0}),
            json!({"workload": "apply_list_watch", "impl": OURS, "server_peak_rss_mib": 80.0}),
        ];
        let md = markdown(3, &lines);
        assert!(
            md.starts_with("`cargo xtask bench testenv --rounds 3`"),
            "{md}"
        );
        assert!(md.contains("median 1-minute load average 5.0"), "{md}");
        assert!(md.contains("| figure | kube-apiserver + etcd (median) | kcm-testenv (median) | kcm-testenv / upstream |"), "{md}");
        assert!(
            md.contains("| start → /readyz ok (ms) ↓ | 6,000 | 30.00 | 0.01 |"),
            "{md}"
        );
        assert!(
            md.contains("| start → first list, embedded `TestEnv::start` (ms) ↓ | – | 12.00 | – |"),
            "{md}"
        );
        assert!(
            md.contains("| server peak RSS (MiB) ↓ | – | 80.00 | – |"),
            "{md}"
        );
        assert!(
            md.contains("| `TestEnv::start` call alone (ms) ↓ | – | 9.00 | – |"),
            "kube-apiserver has no such figure: {md}"
        );
    }

    #[test]
    fn peak_rss_is_given_in_mib_too() {
        let line = tagged(json!({"server_peak_rss_kb": 102_400}), OURS);
        assert_eq!(line["impl"], OURS);
        assert_eq!(line["server_peak_rss_mib"], 100.0);
    }
}
