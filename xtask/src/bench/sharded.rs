//! `cargo xtask bench controllers --replicas 1,2,4 [--deployments N] [--namespaces M]
//! [--gate on|off] [--qps Q]`: kcm sharded by namespace (`--sharding=namespace`) with K replicas on the
//! real control plane (kube-apiserver v1.37.2 with `ShardedListAndWatch` on by default, 200
//! simulated nodes), one fresh cluster per K. N Deployments × 10 replicas spread over M
//! namespaces are created and waited for, then all rolled. Per K: the time of each phase, each
//! replica's CPU and peak RSS, their sums and maxima, the controllers' writes (audit log), and
//! the failover: one replica SIGKILLed, then every Deployment scaled by one; the time until the
//! killed replica's namespaces are complete again, against the others', and per namespace the
//! pause from its scale request to the controllers' next write there
//! ([`super::sharded_pause`], from the audit log). The killed replica's
//! namespaces come from the ring of the members' Leases ([`kcm_sharding::Ring`]), as every
//! replica computes it. K = 1 is kcm as it runs without sharding, the peer of the failover: an
//! elected leader (`--sharding=none`) with a standby; the leader is SIGKILLed and every
//! namespace waits for the standby's takeover. Its CPU and RSS are the leader's.

use std::collections::BTreeSet;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use serde_json::{Value, json};

use super::controllers_args as options;
use super::controllers_audit::phase_writes;
use super::deployments::{REPLICAS, deployments_yaml, wait_complete};
use super::pid_stats::{cpu_seconds, peak_rss_mib};
use super::sharded_pause;
use crate::cluster::{Cluster, Proc, target_dir, wait_for};
use crate::diff::audit;
use crate::timestamps::now_micros;
use crate::upstream::{build as upstream_build, control_plane};

const RING: &str = "kcm-bench";
const RING_NS: &str = "kcm-bench-ring";

/// `--replicas K,K,...` (None: not a sharded run).
pub(super) fn replicas_arg(args: &[String]) -> anyhow::Result<Option<Vec<usize>>> {
    let Some(v) = options::value(args, "--replicas")? else {
        return Ok(None);
    };
    let ks: Vec<usize> = v
        .split(',')
        .map(|k| k.trim().parse::<usize>().ok().filter(|k| *k > 0))
        .collect::<Option<_>>()
        .context("--replicas takes positive numbers separated by commas, e.g. 1,2,4")?;
    Ok(Some(ks))
}

/// Runs the sharded benchmark for each K.
pub(super) fn run(args: &[String], ks: &[usize], n: usize) -> anyhow::Result<()> {
    let m = options::positive(args, "--namespaces", 100)?;
    let gate = match options::value(args, "--gate")? {
        None | Some("on") => true,
        Some("off") => false,
        Some(other) => bail!("--gate takes on or off, not {other}"),
    };
    let qps = options::positive(args, "--qps", options::DEFAULT_QPS as usize)?;
    let qps = u32::try_from(qps).with_context(|| format!("--qps {qps} is too large"))?;
    crate::cluster::build(&["kcm-testenv-cli"])?;
    crate::run_cmd("cargo", &["build", "--release", "--locked", "-p", "kcm"])?;
    let bins = upstream_build::build()?;
    let mut lines = Vec::new();
    for &k in ks {
        let line = run_k(k, n, m, gate, qps, &bins)?;
        println!("{line}");
        lines.push(line);
    }
    let md = markdown(&lines, n, m, gate);
    let dir = target_dir().join("bench");
    std::fs::create_dir_all(&dir)?;
    let jsonl: String = lines.iter().map(|l| format!("{l}\n")).collect();
    std::fs::write(dir.join("controllers-sharded.jsonl"), jsonl)?;
    std::fs::write(dir.join("controllers-sharded.md"), &md)?;
    println!("\n{md}");
    Ok(())
}

fn run_k(
    k: usize,
    n: usize,
    m: usize,
    gate: bool,
    qps: u32,
    bins: &upstream_build::Binaries,
) -> anyhow::Result<Value> {
    let dir = target_dir()
        .join("bench-controllers")
        .join(format!("sharded-k{k}"));
    let _ = std::fs::remove_dir_all(&dir);
    println!("bench controllers --replicas: K = {k}: starting the cluster");
    let opts = control_plane::Options {
        nodes: 200,
        feature_gates: if gate {
            "ShardedListAndWatch=true".into()
        } else {
            String::new()
        },
        ..Default::default()
    };
    let cluster = control_plane::start(&dir, bins, &opts)
        .with_context(|| format!("starting the cluster (logs in {})", dir.display()))?;
    let timeout = Duration::from_secs(120);
    crate::e2e::create_namespace(&cluster, RING_NS, "bench", timeout)?;
    let namespaces: Vec<String> = (0..m).map(options::bench_namespace).collect();
    for ns in &namespaces {
        cluster.kubectl(&["create", "namespace", ns])?;
    }
    let mut replicas: Vec<Proc> = Vec::new();
    if k == 1 {
        // The leader first, then its standby.
        replicas.push(spawn_member(&cluster, 0, qps, false)?);
        wait_for("the leader to be elected", timeout, || {
            Ok(leader_elected(&cluster).then_some(()))
        })?;
        replicas.push(spawn_member(&cluster, 1, qps, false)?);
    } else {
        for i in 0..k {
            replicas.push(spawn_member(&cluster, i, qps, true)?);
        }
        wait_for("the ring to form", timeout, || {
            Ok(members_acknowledged(&cluster, k)?.then_some(()))
        })?;
    }
    let pids: Vec<u32> = replicas.iter().take(k).map(Proc::id).collect();
    let cpu = || -> anyhow::Result<Vec<f64>> { pids.iter().map(|p| cpu_seconds(*p)).collect() };

    let cpu0 = cpu()?;
    let t0 = now_micros();
    let start = Instant::now();
    cluster.kubectl_stdin(&["create", "-f", "-"], &deployments_yaml(n, &namespaces))?;
    wait_complete(&cluster, &namespaces, n, 1, None)?;
    let create_s = start.elapsed().as_secs_f64();
    let (cpu1, t1) = (cpu()?, now_micros());
    let start = Instant::now();
    for ns in &namespaces {
        cluster.kubectl(&["set", "env", "deployments", "--all", "-n", ns, "ROLL=1"])?;
    }
    wait_complete(&cluster, &namespaces, n, 2, None)?;
    let rollout_s = start.elapsed().as_secs_f64();
    let (cpu2, t2) = (cpu()?, now_micros());
    let rss: Vec<f64> = pids
        .iter()
        .map(|p| peak_rss_mib(*p))
        .collect::<anyhow::Result<_>>()?;

    // Failover: kill replica 0, scale everything by one; its namespaces wait for the handover
    // (K = 1: all of them, for the standby's takeover), the others' should not.
    let victim_ns: BTreeSet<String> = if k == 1 {
        namespaces.iter().cloned().collect()
    } else {
        let identities = member_identities(&cluster)?;
        let ring = kcm_sharding::Ring::new(identities.iter().map(String::as_str));
        let victim_id = first_member_identity(&cluster)?;
        namespaces
            .iter()
            .filter(|ns| ring.owner_of_namespace(ns) == Some(victim_id.as_str()))
            .cloned()
            .collect()
    };
    let (victim_s, others_s, killed_us);
    {
        killed_us = Some(now_micros());
        replicas[0].kill();
        let killed = Instant::now();
        for ns in &namespaces {
            cluster.kubectl(&["scale", "deployments", "--all", "-n", ns, "--replicas=11"])?;
        }
        let (inside, outside) = wait_complete(&cluster, &namespaces, n, 3, Some(&victim_ns))?;
        victim_s = inside.map(|t| t.saturating_duration_since(killed).as_secs_f64());
        // K = 1: no namespace is outside the killed replica's.
        others_s = outside
            .filter(|_| victim_ns.len() < namespaces.len())
            .map(|t| t.saturating_duration_since(killed).as_secs_f64());
    }
    for r in &mut replicas {
        r.terminate(Duration::from_secs(5));
    }
    drop(cluster);

    let events = audit::read(&dir);
    // `verb resource code` → count, events included, and the writes but events' total.
    let (create, rollout) = (
        phase_writes(&events, &namespaces, t0, t1),
        phase_writes(&events, &namespaces, t1, t2),
    );
    // The first survivor to take namespaces on after the kill, from the replicas' logs.
    let year = events
        .first()
        .and_then(|e| e["requestReceivedTimestamp"].as_str())
        .and_then(|t| t.get(0..4))
        .unwrap_or("1970")
        .to_string();
    let takeover = killed_us.and_then(|at| {
        (1..replicas.len())
            .filter_map(|i| std::fs::read_to_string(dir.join(format!("kcm-{i}.log"))).ok())
            .filter_map(|log| sharded_pause::first_activation(&log, at, &year))
            .min()
    });
    let pause = killed_us.map(|at| sharded_pause::pauses(&events, at, &victim_ns, takeover));
    let victim_identity = if k > 1 {
        first_member_identity_in(&dir).unwrap_or_default()
    } else {
        String::new()
    };
    let gaps = killed_us
        .filter(|_| k > 1)
        .map(|at| {
            sharded_pause::largest_write_gaps(&events, (at, at + 60_000_000), &victim_identity)
        })
        .unwrap_or_default();
    let pause_of = |v: fn(&sharded_pause::Pauses) -> &Vec<f64>| {
        pause
            .as_ref()
            .and_then(|p| sharded_pause::median_max(v(p)))
            .map(|(median, max)| json!({"median": median, "max": max}))
    };
    let sum = |v: &[f64]| v.iter().sum::<f64>();
    let max = |v: &[f64]| v.iter().copied().fold(0.0, f64::max);
    let per = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x - y).collect::<Vec<f64>>();
    let (cpu_create, cpu_rollout) = (per(&cpu1, &cpu0), per(&cpu2, &cpu1));
    let line = json!({
        "workload": "controllers-sharded",
        "replicas": k,
        "deployments": n,
        "namespaces": m,
        "gate": gate,
        "qps": qps,
        "create_s": create_s,
        "rollout_s": rollout_s,
        "cpu_create_s": cpu_create,
        "cpu_rollout_s": cpu_rollout,
        "cpu_total_sum_s": sum(&cpu_create) + sum(&cpu_rollout),
        "cpu_total_max_s": cpu_create.iter().zip(&cpu_rollout).map(|(a, b)| a + b).fold(0.0, f64::max),
        "peak_rss_mib": rss,
        "peak_rss_sum_mib": sum(&rss),
        "peak_rss_max_mib": max(&rss),
        "writes_create": create.total,
        "writes_rollout": rollout.total,
        "counts_create": create.counts,
        "counts_rollout": rollout.counts,
        "killed_namespaces": victim_ns.len(),
        "failover_killed_s": victim_s,
        "failover_others_s": others_s,
        "pause_killed_s": pause_of(|p| &p.killed),
        "pause_others_s": pause_of(|p| &p.others),
        "pause_others_after_takeover_s": pause_of(|p| &p.others_after_takeover),
        "takeover_after_kill_s": takeover.zip(killed_us).map(|(t, k)| (t - k) as f64 / 1e6),
        "survivors_largest_write_gap_s": gaps.values().copied().fold(None, |m: Option<f64>, g| Some(m.map_or(g, |m| m.max(g)))),
        "pause_never_resumed": pause.as_ref().map(|p| p.never_resumed),
        "loadavg_1m": kcm_util::proc_stats::loadavg_1m(),
    });
    // The audit log is large; the replicas' logs stay for a look at their ownership changes.
    std::fs::remove_file(dir.join("audit.log")).ok();
    Ok(line)
}

/// kcm (release build) as kcm's ServiceAccount: `sharded`, a member of the ring [`RING`], its
/// membership Lease in [`RING_NS`]; otherwise elected on the Lease [`RING`] there. Replica `i`,
/// with client rate limit `qps` per controller (and the single-replica run's burst for it,
/// [`options::burst`]).
fn spawn_member(cluster: &Cluster, i: usize, qps: u32, sharded: bool) -> anyhow::Result<Proc> {
    let log = std::fs::File::create(cluster.dir().join(format!("kcm-{i}.log")))?;
    let sharding = if sharded {
        "--sharding=namespace"
    } else {
        "--sharding=none"
    };
    Proc::spawn(
        Command::new(target_dir().join("release").join("kcm"))
            .arg("--kubeconfig")
            .arg(&cluster.kcm_kubeconfig)
            .args([
                "--secure-port",
                "0",
                sharding,
                &format!("--leader-elect-resource-name={RING}"),
                &format!("--leader-elect-resource-namespace={RING_NS}"),
                "--leader-elect-lease-duration=15s",
                "--leader-elect-renew-deadline=10s",
                "--leader-elect-retry-period=2s",
                &format!("--kube-api-qps={qps}"),
                &format!("--kube-api-burst={}", options::burst(qps)),
            ])
            .stdout(Stdio::null())
            .stderr(log),
        &format!("kcm-{i}"),
    )
}

/// Whether the leader-election Lease [`RING`] has a holder.
fn leader_elected(cluster: &Cluster) -> bool {
    cluster
        .get_json(&["lease", RING, "-n", RING_NS])
        .is_ok_and(|l| {
            l["spec"]["holderIdentity"]
                .as_str()
                .is_some_and(|h| !h.is_empty())
        })
}

fn leases(cluster: &Cluster) -> anyhow::Result<Vec<Value>> {
    let list = cluster.get_json(&[
        "leases",
        "-n",
        RING_NS,
        "-l",
        &format!("sharding.kcm.io/ring={RING}"),
    ])?;
    Ok(list["items"].as_array().cloned().unwrap_or_default())
}

fn members_acknowledged(cluster: &Cluster, k: usize) -> anyhow::Result<bool> {
    let items = leases(cluster)?;
    let applied: BTreeSet<&str> = items
        .iter()
        .filter_map(|l| l["metadata"]["annotations"]["sharding.kcm.io/applied-ring"].as_str())
        .collect();
    Ok(items.len() == k && applied.len() == 1 && !applied.contains(""))
}

fn member_identities(cluster: &Cluster) -> anyhow::Result<Vec<String>> {
    Ok(leases(cluster)?
        .iter()
        .filter_map(|l| l["spec"]["holderIdentity"].as_str().map(str::to_string))
        .collect())
}

/// The identity replica 0 announced in its log (`joining the ring`).
fn first_member_identity(cluster: &Cluster) -> anyhow::Result<String> {
    first_member_identity_in(cluster.dir())
}

fn first_member_identity_in(dir: &std::path::Path) -> anyhow::Result<String> {
    let log = std::fs::read_to_string(dir.join("kcm-0.log"))?;
    log.lines()
        .find(|l| l.contains("\"joining the ring\""))
        .and_then(|l| l.split("member=\"").nth(1))
        .and_then(|r| r.split('"').next())
        .map(str::to_string)
        .context("kcm-0 logged no identity")
}

/// The table of a run: one row per K, per-replica figures against K = 1's.
fn markdown(lines: &[Value], n: usize, m: usize, gate: bool) -> String {
    let base = lines.iter().find(|l| l["replicas"] == 1);
    let f = |v: &Value| v.as_f64().map_or("–".to_string(), |x| format!("{x:.1}"));
    let pair = |v: &Value| match (v["median"].as_f64(), v["max"].as_f64()) {
        (Some(median), Some(max)) => format!("{median:.1} / {max:.1}"),
        _ => "–".to_string(),
    };
    let ratio = |v: &Value, b: Option<&Value>| match (v.as_f64(), b.and_then(Value::as_f64)) {
        (Some(x), Some(y)) if y > 0.0 => format!(" ({:.2}×)", x / y),
        _ => String::new(),
    };
    let mut md = format!(
        "`cargo xtask bench controllers --replicas {} --deployments {n} --namespaces {m} --gate {}`: \
         {n} Deployments × {REPLICAS} replicas in {m} namespaces, kube-apiserver v1.37.2 with \
         `ShardedListAndWatch` {}; one run per K (load average {}). K = 1 is an elected kcm \
         without sharding, with a standby that takes over when the leader is killed.\n\n\
         | K | create (s) | rollout (s) | CPU per replica, max (s) | CPU sum (s) | peak RSS per replica, max (MiB) | RSS sum (MiB) | writes create / rollout | killed replica's namespaces complete after (s) | others' (s) | pause after the scale, killed replica's namespaces: median / max (s) | others': median / max (s) | others' scaled after the takeover (s) | takeover after the kill (s) | survivors' largest write gap (s) |\n\
         |---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n",
        lines
            .iter()
            .map(|l| l["replicas"].to_string())
            .collect::<Vec<_>>()
            .join(","),
        if gate { "on" } else { "off" },
        if gate { "on" } else { "off" },
        lines
            .iter()
            .filter_map(|l| l["loadavg_1m"].as_f64())
            .map(|l| format!("{l:.1}"))
            .collect::<Vec<_>>()
            .join(", "),
    );
    for l in lines {
        let _ = std::fmt::Write::write_fmt(
            &mut md,
            format_args!(
                "| {} | {} | {} | {}{} | {} | {}{} | {} | {} / {} | {} ({} ns) | {} | {} | {} | {} | {} | {} |\n",
                l["replicas"],
                f(&l["create_s"]),
                f(&l["rollout_s"]),
                f(&l["cpu_total_max_s"]),
                ratio(&l["cpu_total_max_s"], base.map(|b| &b["cpu_total_max_s"])),
                f(&l["cpu_total_sum_s"]),
                f(&l["peak_rss_max_mib"]),
                ratio(&l["peak_rss_max_mib"], base.map(|b| &b["peak_rss_max_mib"])),
                f(&l["peak_rss_sum_mib"]),
                l["writes_create"],
                l["writes_rollout"],
                f(&l["failover_killed_s"]),
                l["killed_namespaces"],
                f(&l["failover_others_s"]),
                pair(&l["pause_killed_s"]),
                pair(&l["pause_others_s"]),
                pair(&l["pause_others_after_takeover_s"]),
                f(&l["takeover_after_kill_s"]),
                f(&l["survivors_largest_write_gap_s"]),
            ),
        );
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replicas_parse_as_a_list() {
        let s = |a: &[&str]| a.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert_eq!(replicas_arg(&s(&[])).ok(), Some(None));
        assert_eq!(
            replicas_arg(&s(&["--replicas", "1,2,4"])).ok(),
            Some(Some(vec![1, 2, 4]))
        );
        assert!(replicas_arg(&s(&["--replicas", "0"])).is_err());
        assert!(replicas_arg(&s(&["--replicas", "a"])).is_err());
    }
}
