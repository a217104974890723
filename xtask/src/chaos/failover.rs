//! `cargo xtask chaos --failover N [--cluster upstream]`: three kcm replicas electing a leader
//! (with `ControllerManagerReleaseLeaderElectionLockOnExit`) while a Deployment keeps changing;
//! each round does one thing to the leader, in turn: SIGKILL, SIGTERM, (on the upstream control
//! plane) a kube-apiserver outage longer than the renew deadline, and three pauses (SIGSTOP, the
//! Deployment scaled meanwhile, then SIGCONT): longer than the lease (a standby takes over; the
//! resumed leader's write fence refuses its queued writes and it steps down at once), within the
//! fence window (nothing changes hands) and between the window and the lease (the fence closes;
//! the leader renews or steps down, whichever the timing gives).
//!
//! Takeover time is measured from the API side: from the signal to the Lease naming another
//! holder. Afterwards every replica's API writes (its `-v 2` write log) are checked to lie in
//! its own term ([`super::terms_log`]); on the upstream control plane each replica runs as its
//! own ServiceAccount and the terms are also checked from the server's side, with the server's
//! clock only: the audit log's Lease writes and every write of the replicas
//! ([`super::terms_audit`]).

use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use super::replica_identity::{replica_identities, users};
use super::terms_audit::audit_terms;
use super::terms_log::{identity_in_log, overlapping_writes, read_terms};
use crate::cluster::{Cluster, Proc, wait_for};
use crate::e2e::images::Images;
use crate::e2e::{Ctx, complete, create_namespace, deployment, rolling};
use crate::timestamps::{now_seconds, unix_seconds};
use crate::upstream::build::Binaries;
use crate::upstream::control_plane::{self, Component, restart};

/// What a round does to the leader.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Round {
    Kill,
    Term,
    /// kube-apiserver SIGKILLed for [`OUTAGE`] (upstream control plane only).
    Outage,
    /// SIGSTOP, the Deployment scaled, SIGCONT after this long.
    Pause(Duration),
}

/// Longer than the lease (3 s) by more than a retry period: a standby takes over.
const PAUSE_PAST_LEASE: Duration = Duration::from_millis(5_000);
/// Well within the fence window (lease less 15 %: 2.55 s).
const PAUSE_WITHIN_WINDOW: Duration = Duration::from_millis(1_000);
/// Past the fence window, within the lease.
const PAUSE_PAST_WINDOW: Duration = Duration::from_millis(2_800);

impl Round {
    /// Round `round`'s kind: the kinds in turn, the outage only on the upstream control plane.
    fn of(round: u64, upstream: bool) -> Round {
        let kinds: &[Round] = if upstream {
            &[
                Round::Kill,
                Round::Term,
                Round::Outage,
                Round::Pause(PAUSE_PAST_LEASE),
                Round::Pause(PAUSE_WITHIN_WINDOW),
                Round::Pause(PAUSE_PAST_WINDOW),
            ]
        } else {
            &[
                Round::Kill,
                Round::Term,
                Round::Pause(PAUSE_PAST_LEASE),
                Round::Pause(PAUSE_WITHIN_WINDOW),
                Round::Pause(PAUSE_PAST_WINDOW),
            ]
        };
        kinds[(round % kinds.len() as u64) as usize]
    }
}

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

/// What the JSONPath `template` prints of the Lease, trimmed; `None` when kubectl fails.
fn lease_fields(c: &Cluster, template: &str) -> Option<String> {
    let output = format!("jsonpath={template}");
    let out = c
        .kubectl(&["-n", NS, "get", "lease", LEASE, "-o", &output])
        .ok()?;
    Some(out.trim().to_string())
}

fn holder(c: &Cluster) -> Option<String> {
    lease_fields(c, "{.spec.holderIdentity}").filter(|s| !s.is_empty())
}

/// The Lease's holder and when that holder acquired it (`spec.acquireTime`, written by the new
/// leader with this host's clock), in seconds since the Unix epoch.
fn holder_since(c: &Cluster) -> Option<(String, f64)> {
    let out = lease_fields(c, "{.spec.holderIdentity} {.spec.acquireTime}")?;
    let (holder, acquired) = out.split_once(' ')?;
    Some((holder.to_string(), unix_seconds(acquired)?))
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
        replica_identities(&cluster, &dir, "failover", REPLICAS, NS)?
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
    let (mut pause_takeovers, mut step_downs) = (Vec::new(), Vec::new());
    for round in 0..n {
        let leader = wait_for("a leader", ctx.timeout(), || Ok(holder(&cluster)))?;
        let idx = wait_for("the leader's process", ctx.timeout(), || {
            Ok(replicas.iter().position(|(_, name)| {
                identity_in_log(&dir.join(format!("{name}.log"))).as_deref() == Some(&leader)
            }))
        })?;
        let mut scaled = false;
        let size = 3 + (round % 2) as i64;
        let scale = |c: &Cluster| {
            c.kubectl(&[
                "-n",
                NS,
                "scale",
                "deployment/web",
                &format!("--replicas={size}"),
            ])
        };
        match Round::of(round, upstream) {
            Round::Outage => {
                // The API server away for longer than the renew deadline: the leader cannot
                // renew, gives up its term and exits (as kube-controller-manager does); a
                // replica then takes the Lease once it has expired.
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
            }
            Round::Pause(pause) => {
                // The leader stopped with work arriving: the Deployment is scaled while it is
                // stopped, so its watches hold the change when it continues.
                let signalled = now_seconds();
                let stopped = Instant::now();
                replicas[idx].0.signal("-STOP");
                scale(&cluster)?;
                scaled = true;
                std::thread::sleep(pause.saturating_sub(stopped.elapsed()));
                replicas[idx].0.signal("-CONT");
                let resumed = Instant::now();
                let moved = holder_since(&cluster)
                    .filter(|(h, _)| !h.is_empty() && *h != leader)
                    .map(|(_, acquired)| acquired - signalled);
                let outcome = match moved {
                    Some(took) => {
                        pause_takeovers.push(took);
                        // It must give its term up: its first renewal sees the new holder.
                        let exited =
                            wait_for("the paused leader to step down", ctx.timeout(), || {
                                Ok((!replicas[idx].0.is_running()).then_some(resumed.elapsed()))
                            })?;
                        step_downs.push(exited.as_secs_f64());
                        format!(
                            "new holder after {took:.2}s; kcm-{idx} exited {:.2}s after SIGCONT",
                            exited.as_secs_f64()
                        )
                    }
                    None => "the leader kept its Lease".to_string(),
                };
                println!(
                    "failover {}/{n}: SIGSTOP of kcm-{idx} for {:.1}s: {outcome}",
                    round + 1,
                    pause.as_secs_f64()
                );
            }
            kind @ (Round::Kill | Round::Term) => {
                let sigkill = kind == Round::Kill;
                // Takeover time: from the signal to the new holder's acquireTime, both on this
                // host's clock, so the kubectl polling below does not count.
                let signalled = now_seconds();
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
        }
        // Every replica that is not running (the one stopped, any that lost its Lease) starts
        // again, as a kubelet would restart it.
        for (i, replica) in replicas.iter_mut().enumerate() {
            if !replica.0.is_running() {
                *replica = start(i, &mut starts)?;
            }
        }
        if !scaled {
            scale(&cluster)?;
        }
        wait_for("the Deployment to converge", ctx.timeout(), || {
            Ok(complete(&cluster, NS, "web")?.then_some(()))
        })?;
    }
    drop(replicas);
    let terms = read_terms(&dir)?;
    let writes: usize = terms.iter().map(|t| t.writes.len()).sum();
    let fenced: usize = terms.iter().map(|t| t.fenced).sum();
    let bad = overlapping_writes(&terms);
    let mut report = format!(
        "failover: {n} rounds on {}, lease {LEASE_DURATION_S}s, retry {RETRY_PERIOD_S}s\n  \
         SIGKILL takeover: {}\n  SIGTERM takeover: {}\n  pauses that lost the Lease, takeover: {}\n  \
         paused leader's exit after SIGCONT: {}\n  {writes} API writes by {} processes \
         (their logs), {} outside their writer's term; {fenced} writes refused by a write fence\n",
        if upstream {
            "the upstream control plane"
        } else {
            "kcm-testenv"
        },
        distribution(&mut kill_times),
        distribution(&mut term_times),
        distribution(&mut pause_takeovers),
        distribution(&mut step_downs),
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
        let t = audit_terms(&events, NS, LEASE, &users("failover", REPLICAS));
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

    #[test]
    fn distributions_are_summarised() {
        assert_eq!(
            distribution(&mut [3.0, 1.0, 2.0]),
            "n=3 min 1.00s median 2.00s p90 3.00s max 3.00s"
        );
    }

    #[test]
    fn rounds_cycle_through_every_kind() {
        // Every kind once per cycle, the outage only on the upstream control plane.
        for (upstream, cycle) in [(true, 6), (false, 5)] {
            let rounds: Vec<Round> = (0..cycle).map(|r| Round::of(r, upstream)).collect();
            let distinct: std::collections::HashSet<String> =
                rounds.iter().map(|r| format!("{r:?}")).collect();
            assert_eq!(distinct.len(), cycle as usize, "{rounds:?}");
            assert_eq!(rounds.contains(&Round::Outage), upstream);
            assert_eq!(Round::of(cycle, upstream), rounds[0], "the cycle repeats");
            for kind in [Round::Kill, Round::Term] {
                assert!(rounds.contains(&kind));
            }
            for pause in [PAUSE_PAST_LEASE, PAUSE_WITHIN_WINDOW, PAUSE_PAST_WINDOW] {
                assert!(rounds.contains(&Round::Pause(pause)));
            }
        }
        // The pauses straddle the fence window (lease less 15 %) and the lease.
        let window = LEASE_DURATION_S * 0.85;
        assert!(PAUSE_WITHIN_WINDOW.as_secs_f64() < window);
        assert!((window..LEASE_DURATION_S).contains(&PAUSE_PAST_WINDOW.as_secs_f64()));
        assert!(PAUSE_PAST_LEASE.as_secs_f64() > LEASE_DURATION_S + 1.0);
    }
}
