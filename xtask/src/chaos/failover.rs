//! `cargo xtask chaos --failover N [--cluster upstream]`: three kcm replicas electing a leader
//! (with `ControllerManagerReleaseLeaderElectionLockOnExit`); the leader is killed N times
//! (SIGKILL and SIGTERM in turn) while a Deployment keeps changing.
//! Takeover time is measured from the API side: from the signal to the Lease naming another
//! holder. Afterwards every replica's API writes (its `-v 2` write log) are checked to lie in
//! its own term: after it acquired the Lease and before another replica acquired it.
//!
//! On the upstream control plane every third round is instead a kube-apiserver outage longer
//! than the renew deadline, each replica runs as its own ServiceAccount, and the terms are also
//! checked from the server's side, with the server's clock only: the audit log's Lease writes
//! and every write of the replicas ([`super::terms_audit`]).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail, ensure};
use serde_json::json;

use super::terms_audit::audit_terms;
use crate::cluster::{Cluster, Proc, wait_for};
use crate::e2e::images::Images;
use crate::e2e::{Ctx, complete, create_namespace, deployment, rolling};
use crate::upstream::build::Binaries;
use crate::upstream::control_plane::{self, Component, restart};

const NS: &str = "failover";
const LEASE: &str = "kcm-failover";
/// The election timing every replica runs with.
const LEASE_DURATION_S: f64 = 3.0;
const RETRY_PERIOD_S: f64 = 0.5;

fn args() -> Vec<String> {
    vec![
        "--leader-elect=true".into(),
        format!("--leader-elect-resource-name={LEASE}"),
        format!("--leader-elect-resource-namespace={NS}"),
        format!("--leader-elect-lease-duration={LEASE_DURATION_S}s"),
        "--leader-elect-renew-deadline=2s".into(),
        format!("--leader-elect-retry-period={}ms", RETRY_PERIOD_S * 1000.0),
        // A SIGTERMed leader gives its Lease up (off by default in v1.37, as upstream): the
        // SIGTERM takeovers then measure the release, the SIGKILL ones the expiry.
        "--feature-gates=ControllerManagerReleaseLeaderElectionLockOnExit=true".into(),
    ]
}

fn holder(c: &Cluster) -> Option<String> {
    c.kubectl(&[
        "-n",
        NS,
        "get",
        "lease",
        LEASE,
        "-o",
        "jsonpath={.spec.holderIdentity}",
    ])
    .ok()
    .map(|s| s.trim().to_string())
    .filter(|s| !s.is_empty())
}

/// The Lease's holder and when that holder acquired it (`spec.acquireTime`, written by the new
/// leader with this host's clock), in seconds since the Unix epoch.
fn holder_since(c: &Cluster) -> Option<(String, f64)> {
    let out = c
        .kubectl(&[
            "-n",
            NS,
            "get",
            "lease",
            LEASE,
            "-o",
            "jsonpath={.spec.holderIdentity} {.spec.acquireTime}",
        ])
        .ok()?;
    let (holder, acquired) = out.trim().split_once(' ')?;
    Some((holder.to_string(), unix_seconds(acquired)?))
}

/// Seconds since the Unix epoch of an RFC 3339 UTC timestamp as the API server prints a
/// MicroTime (`2026-11-27T09:10:11.123456Z`).
fn unix_seconds(t: &str) -> Option<f64> {
    let t = t.strip_suffix('Z')?;
    let (date, time) = t.split_once('T')?;
    let mut d = date.splitn(3, '-').map(|p| p.parse::<i64>().ok());
    let (y, m, day) = (d.next()??, d.next()??, d.next()??);
    let mut h = time.splitn(3, ':');
    let hour: f64 = h.next()?.parse().ok()?;
    let min: f64 = h.next()?.parse().ok()?;
    let sec: f64 = h.next()?.parse().ok()?;
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days as f64 * 86_400.0 + hour * 3600.0 + min * 60.0 + sec)
}

fn now_unix() -> f64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs_f64())
        .unwrap_or_default()
}

/// The candidate identity a kcm log announces (`attempting to acquire leader lease`).
fn identity_in_log(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    text.lines()
        .find(|l| l.contains("attempting to acquire leader lease"))
        .and_then(|l| l.split("identity=\"").nth(1))
        .and_then(|r| r.split('"').next())
        .map(str::to_string)
}

/// Seconds since midnight of a klog line (`I1125 04:22:23.200902 ...`).
fn klog_time(line: &str) -> Option<f64> {
    let t = line.split_whitespace().nth(1)?;
    let mut parts = t.split(':');
    let h: f64 = parts.next()?.parse().ok()?;
    let m: f64 = parts.next()?.parse().ok()?;
    let s: f64 = parts.next()?.parse().ok()?;
    Some(h * 3600.0 + m * 60.0 + s)
}

/// One process's log: when it acquired the Lease (if it did) and its successful writes.
#[derive(Debug, Default)]
struct LogTerm {
    name: String,
    acquired: Option<f64>,
    writes: Vec<(f64, String)>,
}

fn read_term(name: &str, text: &str) -> LogTerm {
    let mut t = LogTerm {
        name: name.to_string(),
        ..Default::default()
    };
    for line in text.lines() {
        if line.contains("successfully acquired lease") && t.acquired.is_none() {
            t.acquired = klog_time(line);
        } else if line.contains("\"API write\"")
            && line.contains("result=\"ok\"")
            && let Some(at) = klog_time(line)
        {
            t.writes.push((at, line.to_string()));
        }
    }
    t
}

/// Writes outside their writer's term: before it acquired the Lease, or after another process
/// acquired it later. Each process of `terms` is one run of one replica.
fn overlapping_writes(terms: &[LogTerm]) -> Vec<String> {
    let mut acquisitions: Vec<(f64, &str)> = terms
        .iter()
        .filter_map(|t| t.acquired.map(|a| (a, t.name.as_str())))
        .collect();
    acquisitions.sort_by(|a, b| a.0.total_cmp(&b.0));
    let mut bad = Vec::new();
    for t in terms {
        for (at, line) in &t.writes {
            let Some(start) = t.acquired else {
                bad.push(format!(
                    "{} wrote without holding the Lease: {line}",
                    t.name
                ));
                continue;
            };
            let next = acquisitions
                .iter()
                .find(|(a, n)| *a > start && *n != t.name);
            if *at < start || next.is_some_and(|(a, _)| at > a) {
                bad.push(format!("{} wrote outside its term: {line}", t.name));
            }
        }
    }
    bad
}

/// Median, 90th percentile and maximum of `xs` (sorted in place).
fn distribution(xs: &mut [f64]) -> String {
    if xs.is_empty() {
        return "none".into();
    }
    xs.sort_by(f64::total_cmp);
    let q = |p: f64| xs[((xs.len() - 1) as f64 * p).round() as usize];
    format!(
        "n={} min {:.2}s median {:.2}s p90 {:.2}s max {:.2}s",
        xs.len(),
        xs[0],
        q(0.5),
        q(0.9),
        xs[xs.len() - 1]
    )
}

/// The ServiceAccount replica `i` runs as on the upstream control plane (one each, so that the
/// audit log names the writer of every request).
fn service_account(i: usize) -> String {
    format!("kcm-failover-{i}")
}

/// On the upstream control plane: a ServiceAccount per replica with kcm's ClusterRole and the
/// Lease Role of the namespace, and a kubeconfig for each (`dir/kcm-failover-<i>.kubeconfig`).
fn replica_identities(c: &Cluster, dir: &Path) -> anyhow::Result<Vec<PathBuf>> {
    let subjects: Vec<serde_json::Value> = (0..REPLICAS)
        .map(|i| json!({"kind": "ServiceAccount", "name": service_account(i), "namespace": "kube-system"}))
        .collect();
    let mut items: Vec<serde_json::Value> = (0..REPLICAS)
        .map(|i| {
            json!({"apiVersion": "v1", "kind": "ServiceAccount",
                        "metadata": {"name": service_account(i), "namespace": "kube-system"}})
        })
        .collect();
    items.push(
        json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
        "metadata": {"name": "kcm-failover"},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "kcm"},
        "subjects": subjects}),
    );
    items.push(json!({"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
        "metadata": {"name": "kcm-failover-leases", "namespace": NS},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "kcm-e2e-leases"},
        "subjects": subjects}));
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &json!({"apiVersion": "v1", "kind": "List", "items": items}).to_string(),
    )?;
    (0..REPLICAS)
        .map(|i| {
            let path = dir.join(format!("{}.kubeconfig", service_account(i)));
            control_plane::service_account_kubeconfig(c, &service_account(i), &path)?;
            Ok(path)
        })
        .collect()
}

/// Replicas electing a leader.
const REPLICAS: usize = 3;

/// Runs `n` failovers on kcm-testenv, or with `bins` on a fresh upstream control plane (where
/// every third round is a kube-apiserver outage longer than the renew deadline instead of a
/// kill, and the terms are also checked from the audit log); prints and returns the report.
pub(crate) fn run(n: u64, bins: Option<&Binaries>) -> anyhow::Result<String> {
    let dir = crate::cluster::target_dir().join("chaos").join("failover");
    let _ = std::fs::remove_dir_all(&dir);
    let cluster = match bins {
        Some(bins) => control_plane::start(&dir, bins, &control_plane::Options::default())
            .context("starting the upstream control plane")?,
        None => Cluster::start(&dir, &["--nodes", "3", "--pod-ready-after", "300ms"])
            .context("starting kcm-testenv")?,
    };
    let upstream = bins.is_some();
    let images = Images::testenv();
    let ctx = Ctx {
        cluster: &cluster,
        images: &images,
        scale: 1.0,
    };
    create_namespace(&cluster, NS, "failover", ctx.timeout())?;
    let identities = if upstream {
        replica_identities(&cluster, &dir)?
    } else {
        vec![cluster.kcm_kubeconfig.clone(); REPLICAS]
    };
    let args = args();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut starts = [0u32; REPLICAS];
    let start = |i: usize, starts: &mut [u32; REPLICAS]| -> anyhow::Result<(Proc, String)> {
        starts[i] += 1;
        let name = format!("kcm-{i}-{}", starts[i]);
        Ok((cluster.start_kcm_as(&name, &identities[i], &args)?, name))
    };
    let mut replicas: Vec<(Proc, String)> = Vec::new();
    for i in 0..REPLICAS {
        replicas.push(start(i, &mut starts)?);
    }
    cluster.kubectl_stdin(
        &["apply", "-f", "-"],
        &deployment(NS, "web", 3, images.v(1), rolling("1", "0")),
    )?;
    let (mut kill_times, mut term_times, mut outages) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..n {
        let leader = wait_for("a leader", ctx.timeout(), || Ok(holder(&cluster)))?;
        let idx = wait_for("the leader's process", ctx.timeout(), || {
            Ok(replicas.iter().position(|(_, name)| {
                identity_in_log(&dir.join(format!("{name}.log"))).as_deref() == Some(&leader)
            }))
        })?;
        if upstream && round % 3 == 2 {
            // The API server away for longer than the renew deadline: the leader cannot renew,
            // gives up its term and exits (as kube-controller-manager does); a replica then
            // takes the Lease once it has expired.
            let took = restart(&cluster, Component::ApiServer, OUTAGE)?;
            let lost = wait_for("the leader to exit", ctx.timeout(), || {
                Ok((!replicas[idx].0.is_running()).then_some(()))
            })
            .is_ok();
            outages.push(took.as_secs_f64());
            println!(
                "failover {}/{n}: kube-apiserver away {:.1}s; kcm-{idx} {}",
                round + 1,
                took.as_secs_f64(),
                if lost {
                    "lost its Lease and exited"
                } else {
                    "kept running"
                }
            );
        } else {
            let sigkill = round % 2 == 0;
            // Takeover time: from the signal to the new holder's acquireTime, both on this
            // host's clock, so the kubectl polling below does not count.
            let signalled = now_unix();
            if sigkill {
                replicas[idx].0.kill();
            } else {
                let _ = replicas[idx].0.terminate(Duration::from_secs(10));
            }
            let took = wait_for("another holder", ctx.timeout(), || {
                Ok(holder_since(&cluster)
                    .filter(|(h, _)| !h.is_empty() && *h != leader)
                    .map(|(_, acquired)| acquired - signalled))
            })?;
            if sigkill {
                &mut kill_times
            } else {
                &mut term_times
            }
            .push(took);
            println!(
                "failover {}/{n}: {} of kcm-{idx}, new holder after {took:.2}s",
                round + 1,
                if sigkill { "SIGKILL" } else { "SIGTERM" }
            );
        }
        // Every replica that is not running (the one stopped, any that lost its Lease) starts
        // again, as a kubelet would restart it.
        for (i, replica) in replicas.iter_mut().enumerate() {
            if !replica.0.is_running() {
                *replica = start(i, &mut starts)?;
            }
        }
        let size = 3 + (round % 2) as i64;
        cluster.kubectl(&[
            "-n",
            NS,
            "scale",
            "deployment/web",
            &format!("--replicas={size}"),
        ])?;
        wait_for("the Deployment to converge", ctx.timeout(), || {
            Ok(complete(&cluster, NS, "web")?.then_some(()))
        })?;
    }
    drop(replicas);
    let mut terms = Vec::new();
    for entry in std::fs::read_dir(&dir)? {
        let path = entry?.path();
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or_default();
        if name.starts_with("kcm-") && name.ends_with(".log") {
            let text = std::fs::read_to_string(&path)?;
            terms.push(read_term(name, &text));
        }
    }
    let writes: usize = terms.iter().map(|t| t.writes.len()).sum();
    let bad = overlapping_writes(&terms);
    let mut report = format!(
        "failover: {n} rounds on {}, lease {LEASE_DURATION_S}s, retry {RETRY_PERIOD_S}s\n  \
         SIGKILL takeover: {}\n  SIGTERM takeover: {}\n  {writes} API writes by {} processes \
         (their logs), {} outside their writer's term\n",
        if upstream {
            "the upstream control plane"
        } else {
            "kcm-testenv"
        },
        distribution(&mut kill_times),
        distribution(&mut term_times),
        terms.len(),
        bad.len()
    );
    let mut audit_bad = Vec::new();
    if upstream {
        ensure!(
            dir.join("audit.log").is_file(),
            "kube-apiserver left no audit log in {}",
            dir.display()
        );
        let events = crate::diff::audit::read(&dir);
        let users: Vec<String> = (0..REPLICAS)
            .map(|i| format!("system:serviceaccount:kube-system:{}", service_account(i)))
            .collect();
        let t = audit_terms(&events, NS, LEASE, &users);
        report.push_str(&format!(
            "  kube-apiserver outages of {OUTAGE:?} + restart: {}\n  audit log: {} terms, {} \
             writes by the replicas, {} received outside their writer's term\n",
            distribution(&mut outages),
            t.acquisitions.len(),
            t.writes,
            t.outside.len()
        ));
        audit_bad = t.outside;
    }
    print!("{report}");
    ensure!(
        bad.is_empty() && audit_bad.is_empty(),
        "writes in overlapping terms:\n{}",
        bad.iter()
            .chain(&audit_bad)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
    if kill_times
        .iter()
        .any(|t| *t > LEASE_DURATION_S + RETRY_PERIOD_S + 1.0)
    {
        bail!("a SIGKILL takeover took longer than lease duration + retry period + 1s");
    }
    // A released Lease is taken within a retry period (×1.2 jitter) plus the controllers' stop
    // and this harness's polling; a Lease that was not released would take its whole duration.
    if term_times.iter().any(|t| *t >= LEASE_DURATION_S) {
        bail!("a SIGTERM takeover took a lease duration or longer: the Lease was not released");
    }
    Ok(report)
}

/// How long kube-apiserver stays down in an outage round (then it takes some seconds to be
/// ready): longer than the renew deadline (2 s) by itself.
const OUTAGE: Duration = Duration::from_secs(3);

#[cfg(test)]
mod tests {
    use super::*;

    fn term(name: &str, acquired: Option<f64>, writes: &[f64]) -> LogTerm {
        LogTerm {
            name: name.into(),
            acquired,
            writes: writes.iter().map(|w| (*w, format!("w{w}"))).collect(),
        }
    }

    #[test]
    fn writes_are_checked_against_terms() {
        let ok = [
            term("a", Some(1.0), &[1.5, 2.0]),
            term("b", Some(3.0), &[3.5]),
        ];
        assert!(overlapping_writes(&ok).is_empty());
        let late = [term("a", Some(1.0), &[3.2]), term("b", Some(3.0), &[3.5])];
        assert_eq!(
            overlapping_writes(&late).len(),
            1,
            "a wrote after b acquired"
        );
        let never = [term("c", None, &[2.0])];
        assert_eq!(overlapping_writes(&never).len(), 1);
    }

    #[test]
    fn micro_times_are_read_as_unix_seconds() {
        assert_eq!(unix_seconds("1970-01-01T00:00:00.000000Z"), Some(0.0));
        assert_eq!(
            unix_seconds("2000-03-01T00:00:01.500000Z"),
            Some(951_868_801.5)
        );
        assert_eq!(
            unix_seconds("2026-11-27T09:10:11.250000Z"),
            Some(1_795_770_611.25)
        );
        assert_eq!(unix_seconds("2026-11-27 09:10:11Z"), None);
        assert_eq!(unix_seconds(""), None);
    }

    #[test]
    fn klog_lines_are_read() {
        let log = "I1125 04:22:18.988405    6005 leader_election.rs:242] \"attempting to acquire leader lease\" identity=\"vm_1\"\n\
                   I1125 04:22:22.873823    6005 leader_election.rs:249] \"successfully acquired lease\"\n\
                   I1125 04:22:23.200902    6005 api_write.rs:50] \"API write\" verb=\"update\" result=\"ok\"\n\
                   I1125 04:22:23.300902    6005 api_write.rs:50] \"API write\" verb=\"update\" result=\"error\"\n";
        let t = read_term("x", log);
        assert_eq!(t.acquired, Some(4.0 * 3600.0 + 22.0 * 60.0 + 22.873823));
        assert_eq!(t.writes.len(), 1);
        assert_eq!(
            distribution(&mut [3.0, 1.0, 2.0]),
            "n=3 min 1.00s median 2.00s p90 3.00s max 3.00s"
        );
    }
}
