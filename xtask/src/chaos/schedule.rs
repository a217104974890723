//! Running one schedule: a fresh cluster with the plan's faults, kcm replicas killed and
//! restarted, or paused and continued, on the plan's clock while the scenario runs, then the
//! convergence checks and, with two replicas electing a leader, the term checks: no write sent
//! outside its writer's term (the replicas' logs) and, on the upstream control plane, none
//! received outside it (kube-apiserver's audit log, each replica its own ServiceAccount); with
//! sharded replicas, no write received while another replica owned the namespace (the audit log
//! of kcm-testenv or kube-apiserver, each replica named by its User-Agent).

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};

use super::checks::wait_converged;
use super::ownership_audit::audit_ownership;
use super::ownership_log::{Pause, read_ownership, writes_outside_ownership};
use super::plan::{ControlPlaneEvent, KcmAction, Plan};
use super::replica_identity::{replica_identities, users};
use super::replicas::{LEASE, Replicas};
use super::scenarios;
use super::terms_audit::audit_terms;
use super::terms_log::{overlapping_writes, read_terms};
use crate::cluster::{Cluster, wait_for};
use crate::e2e::images::Images;
use crate::e2e::{Ctx, create_namespace};
use crate::observe::{Observer, Sample, write_timeline};
use crate::timestamps::now_seconds;
use crate::upstream::build::Binaries;
use crate::upstream::control_plane::{self, restart};

/// The namespace every schedule runs in (each schedule has a cluster of its own).
pub(crate) const NS: &str = "chaos";

/// Multiplier of the e2e step bound (90 s) for the scenarios run under faults.
const STEP_SCALE: f64 = 2.0;

/// How a schedule ended.
#[derive(Debug)]
pub(crate) struct Outcome {
    /// `Err` with the violation or the failed step.
    pub(crate) result: anyhow::Result<()>,
    /// Wall time of the whole schedule.
    pub(crate) took: Duration,
    /// What the fault thread did, seconds since the scenario started.
    pub(crate) events: Vec<(f64, String)>,
}

/// A step of the fault thread at an instant: a kcm replica down or up, or a control-plane
/// component restarted.
#[derive(Debug, Clone, Copy)]
enum Step {
    Down(usize, KcmAction),
    Up(usize),
    Restart(ControlPlaneEvent),
}

/// The plan's events as a timeline of steps (ms since the scenario started).
fn steps(plan: &Plan) -> Vec<(u64, Step)> {
    let mut steps: Vec<(u64, Step)> = plan
        .kcm_events
        .iter()
        .flat_map(|e| {
            [
                (e.at_ms, Step::Down(e.replica, e.action)),
                (e.at_ms + e.restart_after_ms, Step::Up(e.replica)),
            ]
        })
        .chain(
            plan.control_plane
                .iter()
                .map(|e| (e.at_ms, Step::Restart(*e))),
        )
        .chain(
            plan.late_join_ms
                .map(|at| (at, Step::Up(plan.replicas - 1))),
        )
        .collect();
    steps.sort_by_key(|(t, _)| *t);
    steps
}

/// How long the plan's steps may still take once the scenario ended: its last event is at most
/// 8 s after the start plus a 3 s restart delay, and a control-plane restart may take up to two
/// minutes to be ready.
const STEPS_BOUND: Duration = Duration::from_secs(180);

/// How long a replica that lost its Lease stays down before it is started again (a kubelet
/// restarts a static pod after a back-off; the first one is 10 s, shortened here).
const RESTART_AFTER_EXIT: Duration = Duration::from_secs(1);

/// The fault thread: runs the plan's steps on its clock (setting `steps_done` once they all
/// ran), and until `stop` restarts replicas that exited on their own (after losing their
/// Lease); records each in `log`. Returns the failures it saw (a replica that exited for any
/// other reason, a restart that failed).
fn run_steps(
    replicas: &Replicas,
    cluster: &Cluster,
    plan: &Plan,
    t0: Instant,
    stop: &AtomicBool,
    steps_done: &AtomicBool,
    log: &Mutex<Vec<(f64, String)>>,
) -> Vec<String> {
    let note = |s: String| {
        if let Ok(mut l) = log.lock() {
            l.push((t0.elapsed().as_secs_f64(), s));
        }
    };
    let mut failures = Vec::new();
    let mut pending_restarts: Vec<(Instant, usize)> = Vec::new();
    let mut steps = steps(plan).into_iter().peekable();
    let mut retarget: std::collections::HashMap<usize, usize> = Default::default();
    while !stop.load(Ordering::SeqCst) {
        for (i, log_name) in replicas.exited() {
            let text = std::fs::read_to_string(cluster.dir().join(&log_name)).unwrap_or_default();
            if text.contains("leaderelection lost") {
                note(format!("kcm-{i} lost its Lease and exited"));
                pending_restarts.push((Instant::now() + RESTART_AFTER_EXIT, i));
            } else {
                let tail: Vec<&str> = text.lines().rev().take(5).collect();
                let why = format!(
                    "kcm-{i} exited on its own ({log_name}): {}",
                    tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
                );
                note(why.clone());
                failures.push(why);
                pending_restarts.push((Instant::now() + RESTART_AFTER_EXIT, i));
            }
        }
        pending_restarts.retain(|(at, i)| {
            if Instant::now() < *at {
                return true;
            }
            match replicas.up(*i) {
                Ok(true) => note(format!("start kcm-{i}")),
                Ok(false) => {}
                Err(e) => note(format!("could not start kcm-{i}: {e:#}")),
            }
            false
        });
        if steps.peek().is_none() && pending_restarts.is_empty() {
            steps_done.store(true, Ordering::SeqCst);
        }
        let due = steps
            .peek()
            .is_some_and(|(at, _)| t0.elapsed() >= Duration::from_millis(*at));
        if !due {
            std::thread::sleep(Duration::from_millis(20));
            continue;
        }
        let Some((_, step)) = steps.next() else {
            continue;
        };
        match step {
            Step::Down(i, action) => {
                // Sharded: the plan's replica i is the i-th after the namespace's current owner,
                // so that most faults hit the owner and force a handover.
                let target = if plan.sharded {
                    replicas.nth_after_owner(i, NS)
                } else {
                    i
                };
                retarget.insert(i, target);
                if replicas.down(target, action) {
                    note(format!("{action:?} kcm-{target}"));
                }
            }
            Step::Up(i) if replicas.resume(*retarget.get(&i).unwrap_or(&i)) => {
                note(format!("SIGCONT kcm-{}", retarget.get(&i).unwrap_or(&i)));
            }
            Step::Up(i) => match replicas.up(*retarget.get(&i).unwrap_or(&i)) {
                Ok(true) => note(format!("start kcm-{}", retarget.get(&i).unwrap_or(&i))),
                Ok(false) => {}
                Err(e) => note(format!("could not start kcm-{i}: {e:#}")),
            },
            Step::Restart(e) => {
                let name = e.component.process_name();
                note(format!("Kill {name}"));
                match restart(cluster, e.component, Duration::from_millis(e.down_ms)) {
                    Ok(took) => note(format!(
                        "{name} back, API server ready {:.1}s after the kill",
                        took.as_secs_f64()
                    )),
                    Err(err) => {
                        let why = format!("restarting {name}: {err:#}");
                        note(why.clone());
                        failures.push(why);
                    }
                }
            }
        }
    }
    failures
}

/// Lines of the schedule's kcm logs that show a panic (a panic in a task does not end the
/// process, so only the log tells).
fn panics(dir: &Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut found = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(name.starts_with("kcm-") && name.ends_with(".log")) {
            continue;
        }
        let text = std::fs::read_to_string(entry.path()).unwrap_or_default();
        found.extend(
            text.lines()
                .filter(|l| l.contains("panicked at"))
                .map(|l| format!("{name}: {l}")),
        );
    }
    found
}

/// Samples Deployment `web` every half second until `stop`, for the timeline (its clock starts
/// with the fault thread's, so the events line up); reads that fail (no Deployment yet, or
/// deleted) are skipped.
fn sample_until(cluster: &Cluster, stop: &AtomicBool) -> Vec<Sample> {
    let mut obs = Observer::new(true);
    while !stop.load(Ordering::SeqCst) {
        let _ = obs.observe(cluster, NS, "web");
        std::thread::sleep(Duration::from_millis(500));
    }
    obs.samples
}

/// Where schedule `seed` keeps its logs and timeline.
pub(crate) fn schedule_dir(seed: u64) -> PathBuf {
    crate::cluster::target_dir()
        .join("chaos")
        .join(seed.to_string())
}

/// Runs `plan` on a fresh kcm-testenv; logs, plan and timeline go to `dir`.
pub(crate) fn run_on_testenv(plan: &Plan, dir: &Path) -> Outcome {
    run_on(plan, dir, || {
        let seed = plan.seed.to_string();
        let audit = dir.join("audit.log");
        let audit = audit.to_string_lossy();
        let mut args = vec![
            "--nodes",
            "3",
            "--pod-ready-after",
            "300ms",
            "--seed",
            &seed,
            "--audit-log-path",
            &audit,
        ];
        if !plan.faults.is_empty() {
            args.extend(["--faults", plan.faults.as_str()]);
        }
        Cluster::start(dir, &args).context("starting kcm-testenv")
    })
}

/// Runs `plan` on a fresh upstream control plane (etcd, kube-apiserver, kube-controller-manager
/// without its Deployment and ReplicaSet controllers, the node simulation) built from
/// `upstream/`; logs, the audit log, plan and timeline go to `dir`.
pub(crate) fn run_on_upstream(plan: &Plan, bins: &Binaries, dir: &Path) -> Outcome {
    run_on(plan, dir, || {
        control_plane::start(dir, bins, &control_plane::Options::default())
            .context("starting the upstream control plane")
    })
}

/// Runs `plan` on the cluster `start` starts in the emptied folder `dir`, after writing the
/// plan there.
fn run_on(plan: &Plan, dir: &Path, start: impl FnOnce() -> anyhow::Result<Cluster>) -> Outcome {
    let began = Instant::now();
    let _ = std::fs::remove_dir_all(dir);
    let log = Mutex::new(Vec::new());
    let result = (|| -> anyhow::Result<()> {
        std::fs::create_dir_all(dir)?;
        std::fs::write(dir.join("plan.txt"), format!("{}\n", plan.describe()))?;
        let cluster = start()?;
        run_plan(plan, &cluster, &log)
    })();
    Outcome {
        result,
        took: began.elapsed(),
        events: log.into_inner().unwrap_or_default(),
    }
}

/// The scenario under the plan's process faults on `cluster`, then the convergence checks.
pub(crate) fn run_plan(
    plan: &Plan,
    cluster: &Cluster,
    log: &Mutex<Vec<(f64, String)>>,
) -> anyhow::Result<()> {
    let images = Images::testenv();
    let ctx = Ctx {
        cluster,
        images: &images,
        // Twice the e2e waits: under repeated compactions and watch drops the reflectors back
        // off as client-go's do (800 ms doubling to a 30 s cap, jitter up to ×2), so a single
        // relist can wait up to a minute; a 90 s step bound then fails schedules kcm completes.
        scale: STEP_SCALE,
    };
    create_namespace(cluster, NS, "chaos", ctx.timeout())?;
    let upstream = cluster.kind == crate::cluster::ClusterKind::Upstream;
    let kubeconfigs = if upstream && plan.replicas > 1 {
        replica_identities(cluster, cluster.dir(), "chaos", plan.replicas, NS)?
    } else {
        vec![cluster.kcm_kubeconfig.clone(); plan.replicas]
    };
    let replicas = Replicas::start(cluster, kubeconfigs, plan, NS)?;
    let stop = AtomicBool::new(false);
    let steps_done = AtomicBool::new(false);
    let t0 = Instant::now();
    let t0_wall = seconds_of_day_utc();
    let (outcome, timeline, failures) = std::thread::scope(|s| {
        let faults = s.spawn(|| run_steps(&replicas, cluster, plan, t0, &stop, &steps_done, log));
        let sampler = s.spawn(|| sample_until(cluster, &stop));
        let outcome = (|| -> anyhow::Result<(usize, Duration)> {
            let samples = scenarios::run(&ctx, plan.scenario, NS)
                .with_context(|| format!("scenario {}", plan.scenario.name()))?;
            // Every fault of the plan happens, also those timed after a quick scenario's end;
            // the convergence checks then see their aftermath.
            wait_for("the plan's remaining faults", STEPS_BOUND, || {
                Ok(steps_done.load(Ordering::SeqCst).then_some(()))
            })?;
            replicas.all_up()?;
            let took = wait_converged(cluster, NS).context("after the scenario")?;
            Ok((samples.len(), took))
        })();
        stop.store(true, Ordering::SeqCst);
        let failures = faults.join().unwrap_or_default();
        (outcome, sampler.join().unwrap_or_default(), failures)
    });
    let marks = log.lock().map(|l| l.clone()).unwrap_or_default();
    if !timeline.is_empty() {
        let _ = write_timeline(
            &cluster.dir().join("timeline.svg"),
            &format!("chaos seed {} {}", plan.seed, plan.scenario.name()),
            &timeline,
            &marks,
        );
    }
    if let Some(first) = failures.first() {
        bail!("{first}");
    }
    let (samples, took) = outcome?;
    let panicked = panics(cluster.dir());
    if !panicked.is_empty() {
        bail!("kcm panicked:\n{}", panicked.join("\n"));
    }
    if plan.sharded {
        check_ownership(cluster, t0, t0_wall, log)?;
    } else if plan.replicas > 1 {
        check_terms(cluster, plan.replicas, upstream, t0, log)?;
    }
    if let Ok(mut l) = log.lock() {
        l.push((
            t0.elapsed().as_secs_f64(),
            format!(
                "converged after {:.1}s ({samples} samples)",
                took.as_secs_f64()
            ),
        ));
    }
    Ok(())
}

/// No write outside its writer's term: sent, from the replicas' logs, and on the upstream
/// control plane received, from the audit log. The checks' counts go to the events log.
fn check_terms(
    cluster: &Cluster,
    replicas: usize,
    upstream: bool,
    t0: Instant,
    log: &Mutex<Vec<(f64, String)>>,
) -> anyhow::Result<()> {
    let terms = read_terms(cluster.dir())?;
    let mut outside = overlapping_writes(&terms);
    let writes: usize = terms.iter().map(|t| t.writes.len()).sum();
    let fenced: usize = terms.iter().map(|t| t.fenced).sum();
    let mut summary = format!(
        "terms: {writes} writes in the logs, {} outside their term, {fenced} fenced",
        outside.len()
    );
    if upstream {
        let events = crate::diff::audit::read(cluster.dir());
        let t = audit_terms(&events, NS, LEASE, &users("chaos", replicas));
        summary.push_str(&format!(
            "; audit log: {} terms, {} writes, {} outside their term",
            t.acquisitions.len(),
            t.writes,
            t.outside.len()
        ));
        outside.extend(t.outside);
    }
    if let Ok(mut l) = log.lock() {
        l.push((t0.elapsed().as_secs_f64(), summary));
    }
    if !outside.is_empty() {
        bail!(
            "writes outside their writer's term:\n{}",
            outside.join("\n")
        );
    }
    Ok(())
}

/// Seconds since midnight UTC now (klog's clock in the replicas' logs).
fn seconds_of_day_utc() -> f64 {
    now_seconds().rem_euclid(86_400.0)
}

/// The pauses of the fault thread's log (`Pause kcm-<i>` … `SIGCONT kcm-<i>`), on the logs'
/// clock (`t0_wall`: the fault thread's start).
fn pauses(events: &[(f64, String)], t0_wall: f64) -> Vec<Pause> {
    let mut open: std::collections::HashMap<usize, f64> = Default::default();
    let mut out = Vec::new();
    let replica = |s: &str, prefix: &str| s.strip_prefix(prefix)?.parse::<usize>().ok();
    for (t, e) in events {
        if let Some(r) = replica(e, "Pause kcm-") {
            open.insert(r, t0_wall + t);
        } else if let Some(r) = replica(e, "SIGCONT kcm-")
            && let Some(from) = open.remove(&r)
        {
            out.push(Pause {
                replica: r,
                from,
                to: t0_wall + t,
            });
        }
    }
    out
}

/// Sharded: no write to the namespace received by the server (its audit log) while its writer
/// did not own the namespace ([`audit_ownership`]). The replicas' own view (writes logged outside
/// their ownership, and the late writes of a resumed replica, see
/// [`writes_outside_ownership`]) is counted beside it. The counts go to the events log.
fn check_ownership(
    cluster: &Cluster,
    t0: Instant,
    t0_wall: f64,
    log: &Mutex<Vec<(f64, String)>>,
) -> anyhow::Result<()> {
    let mut all = Vec::new();
    for (name, text) in crate::cluster::logs(cluster.dir(), "kcm-")? {
        if !name.starts_with("kcm-testenv") {
            all.push(read_ownership(&name, &text, NS));
        }
    }
    let events = log.lock().map(|l| l.clone()).unwrap_or_default();
    let (outside, late) = writes_outside_ownership(&all, &pauses(&events, t0_wall));
    let writes: usize = all.iter().map(|o| o.writes.len()).sum();
    let fenced: usize = all.iter().map(|o| o.fenced).sum();
    let activations: usize = all.iter().map(|o| o.activations.len()).sum();
    // The server's view: both kcm-testenv and kube-apiserver keep an audit log here.
    let audited = audit_ownership(&crate::diff::audit::read(cluster.dir()), NS, &all);
    if let Ok(mut l) = log.lock() {
        l.push((
            t0.elapsed().as_secs_f64(),
            format!(
                "ownership: {activations} activations of the namespace, {writes} writes in the logs, {} outside their writer's ownership, {} late (checked before a pause, completed after it), {fenced} fenced; audit log: {} writes received, {} outside their writer's ownership, {} refused by the server outside it",
                outside.len(),
                late.len(),
                audited.writes,
                audited.outside.len(),
                audited.refused_outside,
            ),
        ));
    }
    ensure!(
        audited.writes > 0,
        "the audit log in {} has no write of the replicas to namespace {NS}",
        cluster.dir().display()
    );
    // The verdict is the server's: when a write was received decides whose it was (a write
    // the logs show answered after a takeover may have been received before it; the logs'
    // counts above say how often).
    if !audited.outside.is_empty() {
        bail!(
            "writes received while another replica owned the namespace:\n{}\n(from the logs: {})",
            audited.outside.join("\n"),
            if outside.is_empty() {
                "none".to_string()
            } else {
                outside.join("\n")
            }
        );
    }
    Ok(())
}
