//! `cargo xtask bench controllers [--deployments N] [--rounds R] [--cluster upstream|testenv]`:
//! kcm's Deployment and ReplicaSet controllers against upstream kube-controller-manager
//! v1.37.2's, on the real control plane (etcd, kube-apiserver, `kcm-testenv sim` as 200 nodes;
//! the default) or on kcm-testenv (200 simulated nodes in-process).
//!
//! Each side gets a fresh cluster; on the real control plane its kube-controller-manager runs
//! every controller but those two ([`control_plane::CONTROLLERS_WITHOUT_OURS`]). The controller
//! pair then runs as a process of its own: (A) a second kube-controller-manager with only
//! `--controllers=deployment-controller,replicaset-controller` (leader election off), or (B) the
//! release build of kcm. N Deployments × 10 replicas are created and waited for until complete,
//! then all rolled (a template change) and waited for again. Per side and phase: the time, the
//! controller process's CPU (utime + stime) and peak RSS (VmHWM), and the controllers' writes
//! and 409s: from the audit log on the real control plane, with the latency from a Deployment
//! change to its ReplicaSet's first write; from kcm-testenv's request counters on testenv, which
//! has no audit log (no latency there).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use anyhow::{Context, bail};
use serde_json::{Value, json};

// The differential suite's audit reader.
use crate::diff::audit;
#[path = "controllers_audit.rs"]
pub(super) mod controllers_audit;

use super::table::{self, Better, Figure};
use crate::cluster::{Cluster, ClusterKind, Proc, free_port, target_dir};
use crate::upstream::{build as upstream_build, control_plane};
use controllers_audit as ca;

const NS: &str = "bench";
const REPLICAS: usize = 10;
/// The user the benchmark changes Deployments as (the admin certificate of `upstream::pki`).
const ADMIN: &str = "kcm-rs:admin";

const fn fig(label: &'static str, field: &'static str, better: Better) -> Figure {
    Figure {
        label,
        field,
        peer: &[("impl", "upstream")],
        ours: &[("impl", "kcm")],
        better,
    }
}

const FIGURES: &[Figure] = &[
    fig(
        "time until all complete: create (s)",
        "create_s",
        Better::Lower,
    ),
    fig(
        "time until all complete: rollout (s)",
        "rollout_s",
        Better::Lower,
    ),
    fig("controller CPU: create (s)", "cpu_create_s", Better::Lower),
    fig(
        "controller CPU: rollout (s)",
        "cpu_rollout_s",
        Better::Lower,
    ),
    fig("controller peak RSS (MiB)", "peak_rss_mib", Better::Lower),
    fig(
        "API writes without events: create",
        "writes_create",
        Better::Lower,
    ),
    fig(
        "API writes without events: rollout",
        "writes_rollout",
        Better::Lower,
    ),
    fig(
        "status writes at create: Deployment",
        "deploy_status_create",
        Better::Lower,
    ),
    fig(
        "status writes at create: ReplicaSet",
        "rs_status_create",
        Better::Lower,
    ),
    fig("409 conflicts: create", "conflicts_create", Better::Lower),
    fig("409 conflicts: rollout", "conflicts_rollout", Better::Lower),
    fig(
        "change → RS write p50 (ms): create",
        "lat_create_p50_ms",
        Better::Lower,
    ),
    fig(
        "change → RS write p99 (ms): create",
        "lat_create_p99_ms",
        Better::Lower,
    ),
    fig(
        "change → RS write p50 (ms): rollout",
        "lat_rollout_p50_ms",
        Better::Lower,
    ),
    fig(
        "change → RS write p99 (ms): rollout",
        "lat_rollout_p99_ms",
        Better::Lower,
    ),
];

/// Runs the workload for `rounds` rounds, alternating which side goes first.
pub fn run(args: &[String], rounds: usize) -> anyhow::Result<()> {
    let n = deployments_arg(args)?;
    if let Some(ks) = super::sharded::replicas_arg(args)? {
        return super::sharded::run(args, &ks, n);
    }
    let on = cluster_arg(args)?;
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
            let mut line = run_side(side, n, on, &bins, round)?;
            line["round"] = json!(round);
            println!("{line}");
            lines.push(line);
        }
    }
    let rows = table::rows(&lines, FIGURES);
    let loads: Vec<f64> = lines
        .iter()
        .filter_map(|l| l["loadavg_1m"].as_f64())
        .collect();
    let mut md = format!(
        "`cargo xtask bench controllers --deployments {n} --rounds {rounds} --cluster {}`: {n} \
         Deployments × {REPLICAS} replicas, medians of {rounds} rounds, sides alternating{}.\n\n",
        on.name(),
        table::median(&loads).map_or(String::new(), |l| format!(
            " (median 1-minute load average {l:.1})"
        ))
    );
    md.push_str(
        &table::markdown(&rows)
            .replacen("client-go (median)", "kube-controller-manager (median)", 1)
            .replacen("kcm / client-go", "kcm / upstream", 1),
    );
    let dir = target_dir().join("bench");
    std::fs::create_dir_all(&dir)?;
    let jsonl: String = lines.iter().map(|l| format!("{l}\n")).collect();
    let stem = match on {
        ClusterKind::Testenv => "controllers-testenv",
        _ => "controllers",
    };
    std::fs::write(dir.join(format!("{stem}.jsonl")), jsonl)?;
    std::fs::write(dir.join(format!("{stem}.md")), &md)?;
    println!("\n{md}");
    Ok(())
}

/// `--deployments N` (default 300).
fn deployments_arg(args: &[String]) -> anyhow::Result<usize> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--deployments" {
            return it
                .next()
                .and_then(|v| v.parse().ok())
                .filter(|n| *n > 0)
                .context("--deployments needs a positive number");
        }
    }
    Ok(300)
}

/// `--cluster upstream|testenv` (default upstream: the real control plane).
fn cluster_arg(args: &[String]) -> anyhow::Result<ClusterKind> {
    let mut it = args.iter();
    while let Some(a) = it.next() {
        if a == "--cluster" {
            return match it.next().map(String::as_str) {
                Some("upstream") => Ok(ClusterKind::Upstream),
                Some("testenv") => Ok(ClusterKind::Testenv),
                other => bail!("--cluster takes upstream or testenv, not {other:?}"),
            };
        }
    }
    Ok(ClusterKind::Upstream)
}

/// One side of one round on a fresh cluster; the run folder is removed afterwards.
fn run_side(
    side: &str,
    n: usize,
    on: ClusterKind,
    bins: &upstream_build::Binaries,
    round: usize,
) -> anyhow::Result<Value> {
    let dir = target_dir()
        .join("bench-controllers")
        .join(format!("round-{round}-{side}-{}", on.name()));
    let _ = std::fs::remove_dir_all(&dir);
    println!(
        "bench controllers: round {round}, {side}: starting the cluster ({})",
        on.name()
    );
    let cluster = if on == ClusterKind::Testenv {
        Cluster::start(&dir, &["--nodes", "200", "--pod-ready-after", "300ms"])
    } else {
        let opts = control_plane::Options {
            nodes: 200,
            ..Default::default()
        };
        control_plane::start(&dir, bins, &opts)
    }
    .with_context(|| format!("starting the cluster (logs in {})", dir.display()))?;
    let mut controller = match side {
        "kcm" => spawn_kcm(&cluster)?,
        _ => spawn_upstream_pair(&cluster, bins)?,
    };
    let pid = controller.id();
    // Let the controllers sync their caches before the clock starts.
    std::thread::sleep(Duration::from_secs(5));
    if !controller.is_running() {
        bail!("{side}'s controllers exited; logs in {}", dir.display());
    }
    cluster.kubectl(&["create", "namespace", NS])?;

    let counters = || -> anyhow::Result<String> {
        if on == ClusterKind::Testenv {
            cluster.kubectl(&["get", "--raw", "/metrics"])
        } else {
            Ok(String::new())
        }
    };
    let m0 = counters()?;
    let cpu0 = cpu_seconds(pid)?;
    let t0 = now_micros();
    let start = Instant::now();
    cluster.kubectl_stdin(&["create", "-f", "-"], &deployments_yaml(n))?;
    wait_complete(&cluster, n, 1)?;
    let create_s = start.elapsed().as_secs_f64();
    let t1 = now_micros();
    let cpu1 = cpu_seconds(pid)?;
    let m1 = counters()?;

    let start = Instant::now();
    cluster.kubectl(&["set", "env", "deployments", "--all", "-n", NS, "ROLL=1"])?;
    wait_complete(&cluster, n, 2)?;
    let rollout_s = start.elapsed().as_secs_f64();
    let t2 = now_micros();
    let cpu2 = cpu_seconds(pid)?;
    let m2 = counters()?;
    let rss = peak_rss_mib(pid)?;
    controller.terminate(Duration::from_secs(5));
    drop(cluster);

    let events = audit::read(&dir);
    let (create, rollout) = if on == ClusterKind::Testenv {
        // Either side's clients, by User-Agent; kubectl and the simulated nodes are others.
        let clients = ["kcm", "kube-controller-manager"];
        (
            ca::phase_writes_from_metrics(&m0, &m1, &clients),
            ca::phase_writes_from_metrics(&m1, &m2, &clients),
        )
    } else {
        (
            ca::phase_writes(&events, NS, t0, t1),
            ca::phase_writes(&events, NS, t1, t2),
        )
    };
    let in_window = |from: i64, to: i64| -> Vec<Value> {
        events
            .iter()
            .filter(|e| {
                e["requestReceivedTimestamp"]
                    .as_str()
                    .and_then(ca::micros)
                    .is_some_and(|t| t >= from && t < to)
            })
            .cloned()
            .collect()
    };
    let lat_create = ca::change_to_rs_write_ms(&in_window(t0, t1), NS, ADMIN);
    let lat_rollout = ca::change_to_rs_write_ms(&in_window(t1, t2), NS, ADMIN);
    let count = |w: &ca::PhaseWrites, k: &str| w.counts.get(k).copied().unwrap_or(0);
    let line = json!({
        "workload": "controllers",
        "impl": side,
        "cluster": on.name(),
        "deployments": n,
        "create_s": create_s,
        "rollout_s": rollout_s,
        "cpu_create_s": cpu1 - cpu0,
        "cpu_rollout_s": cpu2 - cpu1,
        "peak_rss_mib": rss,
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
    });
    // Audit logs of thousands of pods are large: keep only the summary line.
    std::fs::remove_dir_all(&dir).ok();
    Ok(line)
}

/// The release build of kcm, as kcm's ServiceAccount.
fn spawn_kcm(cluster: &Cluster) -> anyhow::Result<Proc> {
    let log = std::fs::File::create(cluster.dir().join("kcm.log"))?;
    Proc::spawn(
        Command::new(target_dir().join("release").join("kcm"))
            .arg("--kubeconfig")
            .arg(&cluster.kcm_kubeconfig)
            .args(["--secure-port", "0", "--leader-elect=false"])
            .stdout(Stdio::null())
            .stderr(log),
        "kcm",
    )
}

/// A second kube-controller-manager with only the Deployment and ReplicaSet controllers: on the
/// real control plane with the credentials [`control_plane::start`] wrote into the cluster's
/// folder (each controller as its ServiceAccount); on kcm-testenv, which checks no credentials,
/// with its kubeconfig and no serving port.
fn spawn_upstream_pair(cluster: &Cluster, bins: &upstream_build::Binaries) -> anyhow::Result<Proc> {
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
            .stdout(Stdio::from(out))
            .stderr(log),
        "kube-controller-manager-pair",
    )
}

/// N Deployments of `REPLICAS` replicas each.
fn deployments_yaml(n: usize) -> String {
    (0..n)
        .map(|i| {
            format!(
                "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d-{i:04}\n  \
                 namespace: {NS}\nspec:\n  replicas: {REPLICAS}\n  selector:\n    matchLabels:\n      \
                 app: d-{i:04}\n  template:\n    metadata:\n      labels:\n        app: d-{i:04}\n    \
                 spec:\n      containers:\n      - name: c\n        image: registry.k8s.io/pause:3.10\n---\n"
            )
        })
        .collect()
}

/// Waits until all `n` Deployments are at `generation` and complete (every replica updated and
/// available, none old), at most 30 minutes per 300 Deployments (a rollout of 300 takes about 9
/// at the controllers' default QPS).
fn wait_complete(cluster: &Cluster, n: usize, generation: i64) -> anyhow::Result<()> {
    let limit = Duration::from_secs(1800 * n.div_ceil(300) as u64);
    let deadline = Instant::now() + limit;
    loop {
        let list = cluster.get_json(&["deployments", "-n", NS])?;
        let items = list["items"].as_array().map(Vec::as_slice).unwrap_or(&[]);
        let done = items.iter().filter(|d| is_complete(d, generation)).count();
        if done == n {
            return Ok(());
        }
        if Instant::now() >= deadline {
            bail!(
                "only {done} of {n} Deployments complete after {} minutes",
                limit.as_secs() / 60
            );
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
    fn cluster_defaults_to_the_real_control_plane() {
        let s = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(cluster_arg(&s(&[])).ok(), Some(ClusterKind::Upstream));
        assert_eq!(
            cluster_arg(&s(&["--cluster", "testenv"])).ok(),
            Some(ClusterKind::Testenv)
        );
        assert!(cluster_arg(&s(&["--cluster", "kind"])).is_err());
        assert!(cluster_arg(&s(&["--cluster"])).is_err());
    }

    #[test]
    fn deployments_default_to_300() {
        let s = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(deployments_arg(&s(&[])).ok(), Some(300));
        assert_eq!(
            deployments_arg(&s(&["--deployments", "100"])).ok(),
            Some(100)
        );
        assert!(deployments_arg(&s(&["--deployments", "0"])).is_err());
        assert_eq!(deployments_yaml(3).matches("kind: Deployment").count(), 3);
    }
}
