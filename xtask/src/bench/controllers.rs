//! `cargo xtask bench controllers [--deployments N] [--namespaces M] [--qps Q] [--rounds R]
//! [--cluster upstream|testenv] [--rollout-limit MINUTES] [--plot]`: kcm's Deployment and
//! ReplicaSet controllers against upstream kube-controller-manager v1.37.2's, on the real
//! control plane (etcd, kube-apiserver, `kcm-testenv sim` as 200 nodes; the default) or on
//! kcm-testenv (200 simulated nodes in-process).
//!
//! Each side gets a fresh cluster; on the real control plane its kube-controller-manager runs
//! every controller but those two ([`control_plane::CONTROLLERS_WITHOUT_OURS`]). The controller
//! pair then runs as a process of its own: (A) a second kube-controller-manager with only
//! `--controllers=deployment-controller,replicaset-controller` (leader election off), or (B) the
//! release build of kcm; both with the same client rate limit, `--kube-api-qps=Q` and
//! `--kube-api-burst=B` (Q = 20, B = 30 by default: both binaries' defaults; B = Q from Q = 30 on).
//! N Deployments × 10 replicas, round-robin over M namespaces, are created and waited for until
//! complete, then all rolled (a template change, one `kubectl set env` per namespace) and waited
//! for again. Per side and phase: the time and the pods per second (N × 10 / time), the
//! controller process's CPU (utime + stime) and peak RSS (VmHWM), kube-apiserver's and etcd's CPU
//! (the API server's side of the cost; real control plane only), and the controllers' writes
//! and 409s: from the audit log on the real control plane, with the latency from a Deployment
//! change to its ReplicaSet's first write; from kcm-testenv's request counters on testenv, which
//! has no audit log (no latency there). With `--rollout-limit`, a side whose rollout is still
//! going after that many minutes is measured to that moment (how many Deployments were complete
//! is in its line, the table says so, the plot draws the point hollow as a lower bound): for
//! sizes where one side takes hours.
//!
//! Every JSON line is appended to `target/bench/controllers.jsonl` (`controllers-testenv.jsonl`
//! on testenv), the run's table written to `controllers.md`; after a run on the real control
//! plane the CPU plot of every line kept so far goes to `target/bench/controllers-cpu.svg`, and
//! `--plot` (running nothing) draws it into `docs/bench-controllers-cpu.svg`
//! ([`plot`]).

use std::io::Write as _;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::controllers_args::{self as args, Options};
use super::controllers_audit as ca;
use super::controllers_plot::{self as plot, side_name};
use super::deployments::{REPLICAS, default_limit, deployments_yaml, wait_complete, wait_progress};
use super::figures::CONTROLLERS as FIGURES;
use super::pid_stats::{cpu_seconds, peak_rss_mib};
use super::table;
use super::testenv_counters::phase_writes_from_metrics;
use crate::cluster::{Cluster, ClusterKind, Proc, free_port, target_dir};
// The differential suite's audit reader.
use crate::diff::audit;
use crate::timestamps::now_micros;
use crate::upstream::build as upstream_build;
use crate::upstream::control_plane::{self, Component};
/// The user the benchmark changes Deployments as (the admin certificate of `upstream::pki`).
const ADMIN: &str = "kcm-rs:admin";
/// Where `--plot` draws the CPU plot.
const PLOT: &str = "docs/bench-controllers-cpu.svg";

/// Runs the workload for `rounds` rounds, alternating which side goes first.
pub(super) fn run(args: &[String], rounds: usize) -> anyhow::Result<()> {
    let opts = args::parse(args)?;
    let bench_dir = target_dir().join("bench");
    if opts.plot_only {
        let out = crate::workspace_root().join(PLOT);
        let series = plot::write(&bench_dir.join("controllers.jsonl"), &out)?;
        println!(
            "bench controllers: {series} series drawn into {}",
            out.display()
        );
        return Ok(());
    }
    crate::cluster::build(&["kcm-testenv-cli"])?;
    crate::run_cmd("cargo", &["build", "--release", "--locked", "-p", "kcm"])?;
    let bins = upstream_build::build()?;
    let mut lines = Vec::new();
    for round in 1..=rounds {
        let order = if round % 2 == 1 {
            ["upstream", "kcm"]
        } else {
            ["kcm", "upstream"]
        };
        for side in order {
            let mut line = run_side(side, &opts, &bins, round)?;
            line["round"] = json!(round);
            println!("{line}");
            lines.push(line);
        }
    }
    let md = markdown(&opts, rounds, &lines);
    std::fs::create_dir_all(&bench_dir)?;
    let stem = match opts.cluster {
        ClusterKind::Testenv => "controllers-testenv",
        _ => "controllers",
    };
    // Appended: the plot draws every run kept, at every N, QPS and namespace count.
    let jsonl = bench_dir.join(format!("{stem}.jsonl"));
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&jsonl)
        .with_context(|| format!("opening {}", jsonl.display()))?;
    for l in &lines {
        writeln!(file, "{l}")?;
    }
    std::fs::write(bench_dir.join(format!("{stem}.md")), &md)?;
    println!("\n{md}");
    if opts.cluster != ClusterKind::Testenv {
        let svg = bench_dir.join("controllers-cpu.svg");
        match plot::write(&jsonl, &svg) {
            Ok(n) => println!(
                "CPU plot of every run kept ({n} series): {}; `cargo xtask bench controllers \
                 --plot` draws it into {PLOT}",
                svg.display()
            ),
            Err(e) => eprintln!("bench controllers: no plot: {e:#}"),
        }
    }
    Ok(())
}

/// The table of a run: its command and conditions, then one row per figure.
fn markdown(opts: &Options, rounds: usize, lines: &[Value]) -> String {
    let rows = table::rows(lines, FIGURES);
    let loads: Vec<f64> = lines
        .iter()
        .filter_map(|l| l["loadavg_1m"].as_f64())
        .collect();
    let (n, m, q) = (opts.deployments, opts.namespaces, opts.qps);
    let mut md = format!(
        "`cargo xtask bench controllers --deployments {n} --namespaces {m} --qps {q} --rounds \
         {rounds} --cluster {}`: {n} Deployments × {REPLICAS} replicas in {m} namespace{}, client \
         QPS {q} / burst {} on both sides, medians of {rounds} rounds, sides alternating{}.\n\n",
        opts.cluster.name(),
        if m == 1 { "" } else { "s" },
        opts.burst(),
        table::median(&loads).map_or(String::new(), |l| format!(
            " (median 1-minute load average {l:.1})"
        ))
    );
    md.push_str(
        &table::markdown(&rows)
            .replacen("client-go (median)", "kube-controller-manager (median)", 1)
            .replacen("kcm / client-go", "kcm / upstream", 1),
    );
    md.push_str(&stopped_note(n, lines));
    md
}

/// The sentence under a table with rollouts stopped at `--rollout-limit`: which side, when,
/// how far it got, and what that makes of its rollout rows.
fn stopped_note(n: usize, lines: &[Value]) -> String {
    let stopped: Vec<String> = lines
        .iter()
        .filter_map(|l| {
            let at = l["rollout_stopped_s"].as_f64()?;
            Some(format!(
                "{} (round {}) after {at:.0} s with {} of {n} Deployments complete",
                side_name(l["impl"].as_str().unwrap_or("?")),
                l["round"].as_u64().unwrap_or(1),
                l["rollout_complete"].as_u64().unwrap_or(0),
            ))
        })
        .collect();
    if stopped.is_empty() {
        return String::new();
    }
    format!(
        "\nRollouts stopped at `--rollout-limit`: {}. Their rollout rows (CPU, writes, server \
         CPU, RSS) are to that moment, lower bounds of the whole rollout's; their time and pods \
         per second are unknown (–).\n",
        stopped.join("; ")
    )
}

/// One side of one round on a fresh cluster; the run folder is removed afterwards.
fn run_side(
    side: &str,
    opts: &Options,
    bins: &upstream_build::Binaries,
    round: usize,
) -> anyhow::Result<Value> {
    let (n, on) = (opts.deployments, opts.cluster);
    let namespaces = opts.namespace_names();
    let dir = target_dir()
        .join("bench-controllers")
        .join(format!("round-{round}-{side}-{}", on.name()));
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "bench controllers: round {round}, {side}: starting the cluster ({})",
        on.name()
    );
    let nodes = nodes_for(n);
    let cluster = if on == ClusterKind::Testenv {
        let nodes = nodes.to_string();
        Cluster::start(&dir, &["--nodes", &nodes, "--pod-ready-after", "300ms"])
    } else {
        let cp = control_plane::Options {
            nodes,
            ..Default::default()
        };
        control_plane::start(&dir, bins, &cp)
    }
    .with_context(|| format!("starting the cluster (logs in {})", dir.display()))?;
    let rate = [
        format!("--kube-api-qps={}", opts.qps),
        format!("--kube-api-burst={}", opts.burst()),
    ];
    let mut controller = match side {
        "kcm" => spawn_kcm(&cluster, &rate)?,
        _ => spawn_upstream_pair(&cluster, bins, &rate)?,
    };
    let pid = controller.id();
    // Let the controllers sync their caches before the clock starts.
    std::thread::sleep(Duration::from_secs(5));
    if !controller.is_running() {
        bail!("{side}'s controllers exited; logs in {}", dir.display());
    }
    for ns in &namespaces {
        cluster.kubectl(&["create", "namespace", ns])?;
    }

    let counters = || -> anyhow::Result<String> {
        if on == ClusterKind::Testenv {
            cluster.kubectl(&["get", "--raw", "/metrics"])
        } else {
            Ok(String::new())
        }
    };
    // kube-apiserver's and etcd's CPU (none on kcm-testenv, which has neither process).
    let (api_pid, etcd_pid) = (
        Component::ApiServer.pid(&cluster),
        Component::Etcd.pid(&cluster),
    );
    let server_cpu = || -> anyhow::Result<[Option<f64>; 2]> {
        Ok([
            api_pid.map(cpu_seconds).transpose()?,
            etcd_pid.map(cpu_seconds).transpose()?,
        ])
    };
    let m0 = counters()?;
    let (cpu0, server0) = (cpu_seconds(pid)?, server_cpu()?);
    let t0 = now_micros();
    let start = Instant::now();
    cluster.kubectl_stdin(&["create", "-f", "-"], &deployments_yaml(n, &namespaces))?;
    wait_complete(&cluster, &namespaces, n, 1, None)?;
    let create_s = start.elapsed().as_secs_f64();
    let t1 = now_micros();
    let (cpu1, server1) = (cpu_seconds(pid)?, server_cpu()?);
    let m1 = counters()?;

    let start = Instant::now();
    for ns in &namespaces {
        cluster.kubectl(&["set", "env", "deployments", "--all", "-n", ns, "ROLL=1"])?;
    }
    // With `--rollout-limit`, a rollout still going at the limit is measured to that moment.
    let limit = opts.rollout_limit.unwrap_or_else(|| default_limit(n));
    let rolled = wait_progress(&cluster, &namespaces, n, 2, None, limit)?;
    if opts.rollout_limit.is_none() {
        rolled.all_complete(n, limit)?;
    }
    let rollout_elapsed_s = start.elapsed().as_secs_f64();
    // The phase's time when it ended; none when it was stopped at the limit.
    let rollout_s = (rolled.complete == n).then_some(rollout_elapsed_s);
    if rollout_s.is_none() {
        println!(
            "bench controllers: {side}'s rollout stopped at the limit after {rollout_elapsed_s:.0} \
             s, {} of {n} Deployments complete: its rollout figures are to that moment",
            rolled.complete
        );
    }
    let t2 = now_micros();
    let (cpu2, server2) = (cpu_seconds(pid)?, server_cpu()?);
    let m2 = counters()?;
    let rss = peak_rss_mib(pid)?;
    controller.terminate(Duration::from_secs(5));
    drop(cluster);

    // Only the controllers' and the benchmark's own requests, slimmed while read: the log of
    // N = 3,000 is over 2 GB, which parsed whole did not fit in 24 GB.
    let mut users = audit::CONTROLLER_USERS.to_vec();
    users.push(ADMIN);
    let events = audit::read_lines(&dir, |line| ca::slim_event(line, &users));
    let (create, rollout) = if on == ClusterKind::Testenv {
        // Either side's clients, by User-Agent; kubectl and the simulated nodes are others.
        let clients = ["kcm", "kube-controller-manager"];
        (
            phase_writes_from_metrics(&m0, &m1, &clients),
            phase_writes_from_metrics(&m1, &m2, &clients),
        )
    } else {
        (
            ca::phase_writes(&events, &namespaces, t0, t1),
            ca::phase_writes(&events, &namespaces, t1, t2),
        )
    };
    // The Deployment and ReplicaSet writes of one phase, the latency's only inputs (copies:
    // pods, most of the log, are left out).
    let in_window = |from: i64, to: i64| -> Vec<Value> {
        events
            .iter()
            .filter(|e| {
                matches!(
                    e["objectRef"]["resource"].as_str(),
                    Some("deployments" | "replicasets")
                ) && audit::received_micros(e).is_some_and(|t| t >= from && t < to)
            })
            .cloned()
            .collect()
    };
    let lat_create = ca::change_to_rs_write_ms(&in_window(t0, t1), &namespaces, ADMIN);
    let lat_rollout = ca::change_to_rs_write_ms(&in_window(t1, t2), &namespaces, ADMIN);
    let count = |w: &ca::PhaseWrites, k: &str| w.counts.get(k).copied().unwrap_or(0);
    let spent = |from: Option<f64>, to: Option<f64>| from.zip(to).map(|(a, b)| b - a);
    let line = json!({
        "workload": "controllers",
        "impl": side,
        "cluster": on.name(),
        "deployments": n,
        "namespaces": opts.namespaces,
        "qps": opts.qps,
        "burst": opts.burst(),
        "create_s": create_s,
        "rollout_s": rollout_s,
        "pods_per_s_create": pods_per_second(n, create_s),
        "pods_per_s_rollout": rollout_s.and_then(|s| pods_per_second(n, s)),
        "rollout_complete": rolled.complete,
        "rollout_stopped_s": rollout_s.is_none().then_some(rollout_elapsed_s),
        "cpu_create_s": cpu1 - cpu0,
        "cpu_rollout_s": cpu2 - cpu1,
        "peak_rss_mib": rss,
        "apiserver_cpu_create_s": spent(server0[0], server1[0]),
        "apiserver_cpu_rollout_s": spent(server1[0], server2[0]),
        "etcd_cpu_create_s": spent(server0[1], server1[1]),
        "etcd_cpu_rollout_s": spent(server1[1], server2[1]),
        "writes_create": create.total,
        "writes_rollout": rollout.total,
        "deploy_status_create": count(&create, "update deployments/status 200"),
        "rs_status_create": count(&create, "update replicasets/status 200"),
        "conflicts_create": create.conflicts,
        "conflicts_rollout": rollout.conflicts,
        "lat_create_p50_ms": ca::quantile(&lat_create, 0.5),
        "lat_create_p99_ms": ca::quantile(&lat_create, 0.99),
        "lat_rollout_p50_ms": ca::quantile(&lat_rollout, 0.5),
        "lat_rollout_p99_ms": ca::quantile(&lat_rollout, 0.99),
        "counts_create": create.counts,
        "counts_rollout": rollout.counts,
        "loadavg_1m": kcm_util::proc_stats::loadavg_1m(),
        "nodes": nodes,
    });
    // Audit logs of thousands of pods are large: keep only the summary line.
    std::fs::remove_dir_all(&dir).ok();
    Ok(line)
}

/// Pods a simulated node takes (the kubelet's default `maxPods`).
const PODS_PER_NODE: usize = 110;

/// Simulated nodes for N Deployments: 200 (every run up to N = 1,000 had them), or enough for
/// all the pods plus a quarter for the rollout's surge (N = 3,000 needs 341).
fn nodes_for(deployments: usize) -> usize {
    let pods = deployments * REPLICAS * 5 / 4;
    pods.div_ceil(PODS_PER_NODE).max(200)
}

/// Pods created (or replaced) per second: N Deployments × [`REPLICAS`] over the phase.
fn pods_per_second(deployments: usize, seconds: f64) -> Option<f64> {
    (seconds > 0.0).then(|| (deployments * REPLICAS) as f64 / seconds)
}

/// The release build of kcm, as kcm's ServiceAccount, with the client rate limit `rate`.
fn spawn_kcm(cluster: &Cluster, rate: &[String]) -> anyhow::Result<Proc> {
    let log = std::fs::File::create(cluster.dir().join("kcm.log"))?;
    Proc::spawn(
        Command::new(target_dir().join("release").join("kcm"))
            .arg("--kubeconfig")
            .arg(&cluster.kcm_kubeconfig)
            .args(["--secure-port", "0", "--leader-elect=false"])
            .args(rate)
            .stdout(Stdio::null())
            .stderr(log),
        "kcm",
    )
}

/// A second kube-controller-manager with only the Deployment and ReplicaSet controllers and the
/// client rate limit `rate`: on the real control plane with the credentials
/// [`control_plane::start`] wrote into the cluster's folder (each controller as its
/// ServiceAccount); on kcm-testenv, which checks no credentials, with its kubeconfig and no
/// serving port.
fn spawn_upstream_pair(
    cluster: &Cluster,
    bins: &upstream_build::Binaries,
    rate: &[String],
) -> anyhow::Result<Proc> {
    let dir = cluster.dir();
    let flag = |f: &str, p: &Path| format!("{f}={}", p.display());
    let log = std::fs::File::create(dir.join("kube-controller-manager-pair.log"))?;
    let out = log.try_clone()?;
    let mut cmd = Command::new(&bins.kube_controller_manager);
    if cluster.kind == ClusterKind::Testenv {
        cmd.arg(flag("--kubeconfig", &cluster.kubeconfig))
            .arg("--secure-port=0");
    } else {
        let kubeconfig = dir.join("kube-controller-manager.kubeconfig");
        cmd.arg(flag("--kubeconfig", &kubeconfig))
            .arg(flag("--authentication-kubeconfig", &kubeconfig))
            .arg(flag("--authorization-kubeconfig", &kubeconfig))
            .arg("--bind-address=127.0.0.1")
            .arg(format!("--secure-port={}", free_port()?))
            .arg("--use-service-account-credentials=true")
            .arg(flag("--root-ca-file", &dir.join("pki").join("ca.crt")));
    }
    Proc::spawn(
        cmd.arg("--controllers=deployment-controller,replicaset-controller")
            .args(["--leader-elect=false", "--profiling=false", "-v=2"])
            .args(rate)
            .stdout(Stdio::from(out))
            .stderr(log),
        "kube-controller-manager-pair",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nodes_hold_every_pod_and_the_surge() {
        assert_eq!(nodes_for(300), 200);
        assert_eq!(nodes_for(1000), 200);
        assert_eq!(nodes_for(3000), 341);
        for n in [1, 300, 1000, 1760, 1761, 3000, 10_000] {
            assert!(
                nodes_for(n) * PODS_PER_NODE >= n * REPLICAS * 5 / 4,
                "N = {n}"
            );
        }
    }

    #[test]
    fn pods_per_second_are_ten_per_deployment_over_the_phase() {
        assert_eq!(pods_per_second(300, 150.0), Some(20.0));
        assert_eq!(pods_per_second(30, 2.5), Some(120.0));
        assert_eq!(pods_per_second(30, 0.0), None);
    }

    #[test]
    fn the_table_names_the_rate_and_namespaces_and_has_the_api_server_rows() {
        let opts = args::parse(
            &["--qps", "100", "--namespaces", "3", "--deployments", "30"].map(String::from),
        )
        .expect("parses");
        let line = |side: &str, api: f64| {
            json!({"workload": "controllers", "impl": side, "create_s": 10.0,
                   "pods_per_s_create": 30.0, "apiserver_cpu_create_s": api,
                   "loadavg_1m": 2.0})
        };
        let md = markdown(&opts, 1, &[line("upstream", 4.0), line("kcm", 3.0)]);
        assert!(md.starts_with(
            "`cargo xtask bench controllers --deployments 30 --namespaces 3 --qps 100 --rounds 1 \
             --cluster upstream`: 30 Deployments × 10 replicas in 3 namespaces, client QPS 100 / \
             burst 100 on both sides"
        ));
        assert!(md.contains(
            "| figure | kube-controller-manager (median) | kcm-rs (median) | kcm / upstream |"
        ));
        assert!(md.contains("| kube-apiserver CPU: create (s) ↓ | 4.00 | 3.00 | 0.75 |"));
        assert!(md.contains("| pods per second: create ↑ | 30.00 | 30.00 | 1.00 |"));
        assert!(md.contains("| etcd CPU: rollout (s) ↓ | – | – | – |"));
        assert!(!md.contains("--rollout-limit"));
    }

    #[test]
    fn a_rollout_stopped_at_the_limit_is_named_under_the_table() {
        let opts = args::parse(&["--deployments", "3000"].map(String::from)).expect("parses");
        let lines = [
            json!({"workload": "controllers", "impl": "upstream", "round": 1,
                   "rollout_s": null, "rollout_stopped_s": 1500.4, "rollout_complete": 291,
                   "cpu_rollout_s": 600.0}),
            json!({"workload": "controllers", "impl": "kcm", "round": 1,
                   "rollout_s": 1100.0, "rollout_stopped_s": null, "rollout_complete": 3000,
                   "cpu_rollout_s": 90.0}),
        ];
        let md = markdown(&opts, 1, &lines);
        assert!(md.contains(
            "Rollouts stopped at `--rollout-limit`: kube-controller-manager (round 1) after \
             1500 s with 291 of 3000 Deployments complete."
        ));
        assert!(md.contains("| time until all complete: rollout (s) ↓ | – | 1,100 | – |"));
        assert!(md.contains("| controller CPU: rollout (s) ↓ | 600.00 | 90.00 | 0.15 |"));
        assert_eq!(stopped_note(3000, &lines[1..]), "");
    }
}
