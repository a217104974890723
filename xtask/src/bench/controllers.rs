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
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use serde_json::{Value, json};

// The differential suite's audit reader.
use crate::diff::audit;
#[path = "controllers_args.rs"]
pub(super) mod args;
#[path = "controllers_audit.rs"]
pub(super) mod controllers_audit;
#[path = "controllers_plot.rs"]
pub(super) mod plot;

use super::figures::CONTROLLERS as FIGURES;
use super::table;
use crate::cluster::{Cluster, ClusterKind, Proc, free_port, target_dir};
use crate::upstream::build as upstream_build;
use crate::upstream::control_plane::{self, Component};
use args::Options;
use controllers_audit as ca;

pub(super) const REPLICAS: usize = 10;
/// The user the benchmark changes Deployments as (the admin certificate of `upstream::pki`).
const ADMIN: &str = "kcm-rs:admin";
/// Where `--plot` draws the CPU plot.
const PLOT: &str = "docs/bench-controllers-cpu.svg";

/// Runs the workload for `rounds` rounds, alternating which side goes first.
pub fn run(args: &[String], rounds: usize) -> anyhow::Result<()> {
    if let Some(ks) = super::sharded::replicas_arg(args)? {
        if args.iter().any(|a| a == "--plot") {
            bail!("--plot draws the single-replica runs, not with --replicas");
        }
        return super::sharded::run(args, &ks, args::deployments(args)?);
    }
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

/// A side as tables and the plot name it: `kube-controller-manager` for upstream.
fn side_name(side: &str) -> &str {
    match side {
        "upstream" => "kube-controller-manager",
        other => other,
    }
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
            ca::phase_writes_from_metrics(&m0, &m1, &clients),
            ca::phase_writes_from_metrics(&m1, &m2, &clients),
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
                ) && e["requestReceivedTimestamp"]
                    .as_str()
                    .and_then(ca::micros)
                    .is_some_and(|t| t >= from && t < to)
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

/// N Deployments of `REPLICAS` replicas each, round-robin over `namespaces`.
pub(super) fn deployments_yaml(n: usize, namespaces: &[String]) -> String {
    (0..n)
        .map(|i| {
            let ns = &namespaces[i % namespaces.len()];
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d-{i:04}\n  \
                 namespace: {ns}\nspec:\n  replicas: {REPLICAS}\n  selector:\n    matchLabels:\n      \
                 app: d-{i:04}\n  template:\n    metadata:\n      labels:\n        app: d-{i:04}\n    \
                 spec:\n      containers:\n      - name: c\n        image: registry.k8s.io/pause:3.10\n---\n"
            )
        })
        .collect()
}

/// Waits until all `n` Deployments in `namespaces` are at `generation` and complete (every
/// replica updated and available, none old), at most [`default_limit`]. With `split`, also
/// returns when the Deployments of those namespaces, and when the others, were all complete.
pub(super) fn wait_complete(
    cluster: &Cluster,
    namespaces: &[String],
    n: usize,
    generation: i64,
    split: Option<&std::collections::BTreeSet<String>>,
) -> anyhow::Result<(Option<Instant>, Option<Instant>)> {
    let limit = default_limit(n);
    let p = wait_progress(cluster, namespaces, n, generation, split, limit)?;
    p.all_complete(n, limit)?;
    Ok((p.inside_done, p.outside_done))
}

/// 30 minutes per 300 Deployments (a rollout of 300 takes about 9 at the controllers'
/// default QPS).
fn default_limit(n: usize) -> Duration {
    Duration::from_secs(1800 * n.div_ceil(300) as u64)
}

/// How far a phase got by the time [`wait_progress`] returned.
pub(super) struct Progress {
    /// Deployments complete at the last poll (`n` when the phase ended).
    pub complete: usize,
    /// With a split: when the Deployments in, and out of, the split set were all complete.
    pub inside_done: Option<Instant>,
    pub outside_done: Option<Instant>,
}

impl Progress {
    /// An error unless all `n` Deployments were complete when the wait of `limit` returned.
    fn all_complete(&self, n: usize, limit: Duration) -> anyhow::Result<()> {
        if self.complete < n {
            bail!(
                "only {} of {n} Deployments complete after {limit:?}",
                self.complete
            );
        }
        Ok(())
    }
}

/// Polls until all `n` Deployments are at `generation` and complete, or `limit` has passed;
/// returns how many were complete at the end either way.
fn wait_progress(
    cluster: &Cluster,
    namespaces: &[String],
    n: usize,
    generation: i64,
    split: Option<&std::collections::BTreeSet<String>>,
    limit: Duration,
) -> anyhow::Result<Progress> {
    let deadline = Instant::now() + limit;
    let (mut inside_done, mut outside_done) = (None, None);
    loop {
        // An API server busy with thousands of pods may time a list out: poll again (the
        // deadline still bounds the wait).
        let list = match cluster.get_json(&["deployments", "-A"]) {
            Ok(list) => list,
            Err(e) if Instant::now() < deadline => {
                eprintln!("bench: listing Deployments failed, polling again: {e:#}");
                std::thread::sleep(Duration::from_secs(2));
                continue;
            }
            Err(e) => return Err(e),
        };
        let items: Vec<&Value> = list["items"]
            .as_array()
            .map(|v| v.iter().collect::<Vec<_>>())
            .unwrap_or_default()
            .into_iter()
            .filter(|d| {
                d["metadata"]["namespace"]
                    .as_str()
                    .is_some_and(|ns| namespaces.iter().any(|x| x == ns))
            })
            .collect();
        // (in the split set, complete) per Deployment.
        let states: Vec<(bool, bool)> = items
            .iter()
            .map(|d| {
                let ns = d["metadata"]["namespace"].as_str().unwrap_or_default();
                (
                    split.is_some_and(|s| s.contains(ns)),
                    is_complete(d, generation),
                )
            })
            .collect();
        if split.is_some() {
            let all_done = |inside: bool| {
                states
                    .iter()
                    .filter(|(i, _)| *i == inside)
                    .all(|(_, done)| *done)
            };
            if inside_done.is_none() && all_done(true) {
                inside_done = Some(Instant::now());
            }
            if outside_done.is_none() && all_done(false) {
                outside_done = Some(Instant::now());
            }
        }
        let complete = states.iter().filter(|(_, done)| *done).count();
        if complete == n || Instant::now() >= deadline {
            return Ok(Progress {
                complete,
                inside_done,
                outside_done,
            });
        }
        std::thread::sleep(Duration::from_millis(250));
    }
}

/// Whether a Deployment is at `generation` and its status shows exactly its replicas, all
/// updated and available.
pub(super) fn is_complete(d: &Value, generation: i64) -> bool {
    let s = &d["status"];
    let want = d["spec"]["replicas"].as_i64();
    d["metadata"]["generation"].as_i64() == Some(generation)
        && s["observedGeneration"].as_i64() == Some(generation)
        && s["replicas"].as_i64() == want
        && s["updatedReplicas"].as_i64() == want
        && s["availableReplicas"].as_i64() == want
}

fn now_micros() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as i64)
}

/// utime + stime of `pid`, in seconds (clock ticks of 1/100 s, Linux's USER_HZ).
pub(super) fn cpu_seconds(pid: u32) -> anyhow::Result<f64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"))?;
    // Fields after the command name in parentheses; utime and stime are fields 14 and 15.
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or_default();
    let f: Vec<&str> = rest.split_whitespace().collect();
    let tick = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok());
    match (tick(11), tick(12)) {
        (Some(u), Some(s)) => Ok((u + s) / 100.0),
        _ => bail!("unexpected /proc/{pid}/stat: {stat}"),
    }
}

/// VmHWM of `pid` in MiB.
pub(super) fn peak_rss_mib(pid: u32) -> anyhow::Result<f64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status"))?;
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
        .map(|kb| kb / 1024.0)
        .context("no VmHWM")
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
    fn complete_means_observed_updated_and_available() {
        let d = |gen_seen: i64, updated: i64| {
            json!({"metadata": {"generation": 2}, "spec": {"replicas": 10},
                   "status": {"observedGeneration": gen_seen, "replicas": 10,
                              "updatedReplicas": updated, "availableReplicas": 10}})
        };
        assert!(is_complete(&d(2, 10), 2));
        assert!(!is_complete(&d(1, 10), 2));
        assert!(!is_complete(&d(2, 9), 2));
        assert!(!is_complete(&d(2, 10), 1));
    }

    #[test]
    fn deployments_go_round_robin_over_the_namespaces() {
        let one = deployments_yaml(3, &args::namespace_names(1));
        assert_eq!(one.matches("kind: Deployment").count(), 3);
        assert_eq!(one.matches("namespace: bench\n").count(), 3);
        let three = deployments_yaml(30, &args::namespace_names(3));
        for ns in ["n0-bench", "n1-bench", "n2-bench"] {
            assert_eq!(three.matches(&format!("namespace: {ns}\n")).count(), 10);
        }
        assert!(three.contains("name: d-0029\n  namespace: n2-bench"));
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
