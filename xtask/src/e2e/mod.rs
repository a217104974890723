//! `cargo xtask e2e`: end-to-end scenarios — the real `kcm` binary against a cluster, user
//! steps through the real kubectl, and a rollout invariant checker sampling every scenario's
//! Deployment while it runs.
//!
//! Invariants checked at every observed instant (RollingUpdate, healthy pods):
//! Σ ReplicaSet replicas ≤ replicas + maxSurge, and available ≥ replicas − maxUnavailable once
//! the first rollout completed; Recreate: old and new ReplicaSets never both have pods.
//!
//! # Where the scenarios run
//!
//! - `cargo xtask e2e` builds `kcm` and `kcm-testenv`, starts a `kcm-testenv` cluster (3
//!   simulated nodes, pods Ready 300 ms after binding) and `kcm --leader-elect=false` against it.
//!   Images are fake (`app:v1` …); a never-Ready pod is asked for with the testenv annotation
//!   `sim.kcm-rs.io/never-ready`. This is what CI runs.
//! - `cargo xtask e2e --kubeconfig PATH [--context NAME]` runs the same scenarios against any
//!   cluster. No testenv is started; kube-controller-manager there must run with
//!   `--controllers=*,-deployment-controller,-replicaset-controller`. A preflight checks the API
//!   answers and warns loudly when upstream's controllers look active (its
//!   `kube-system/kube-controller-manager` Lease renewed within a minute, and its pods' flags,
//!   where visible, leave them on) or when a kcm deployed with `deploy/deployment.yaml` already
//!   runs; `--strict` turns warnings into an abort. kcm is started locally against the cluster,
//!   so the scenarios that SIGKILL kcm and that run two kcm candidates for leader election work
//!   as on testenv (the election uses a Lease in the scenario's own namespace, never the one of
//!   kube-controller-manager or of a deployed kcm).
//!   Images are `registry.k8s.io/pause` 3.10, 3.9, 3.8 and 3.7 (`--image-repo` for a mirror);
//!   never-Ready pods get a readinessProbe on a port nothing listens on (the testenv annotation
//!   is set too, so the same manifests work on both). Containers carry a security context Pod
//!   Security "restricted" admits. Waits are 3× longer (`--timeout-scale`).
//!   Scenario namespaces are `kcm-e2e-<run>-<scenario>`, labelled `kcm-rs.io/e2e-run=<run>`,
//!   deleted when each scenario ends (and any left over at exit), also on failure, unless
//!   `--keep`.
//! - `--no-kcm` (with `--kubeconfig`): kcm already runs in the cluster; none is started and the
//!   two scenarios that kill and start kcm processes are reported as skipped.
//!
//! `cargo xtask e2e --help` lists every flag; `--only a,b` runs a subset, `--list` names them.

use std::time::{Duration, Instant};

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};

use crate::cluster::{Cluster, ClusterKind, wait_for};
use crate::observe::{Observer, Sample};

mod beside_upstream;
pub(crate) mod images;
mod kcm_processes;
mod options;
mod ported_deployment;
mod ported_deployment_adoption;
mod ported_deployment_util;
mod ported_replicaset;
mod ported_support;
mod preflight;
mod runner;
mod sample_controller;
pub(crate) mod scenarios;
mod secure_metrics;
mod sharded;

use images::{Images, restricted_security_context};

pub(crate) use runner::run;

/// The Lease timings of the scenarios' elected and sharded kcm replicas (and the chaos runs'):
/// a dead leader or member is seen within seconds.
pub(crate) const FAST_LEASE_FLAGS: [&str; 3] = [
    "--leader-elect-lease-duration=3s",
    "--leader-elect-renew-deadline=2s",
    "--leader-elect-retry-period=500ms",
];

/// The scenarios that need no kcm process of their own, by name (`cargo xtask diff` runs them
/// under upstream's controllers and under kcm).
pub(crate) fn plain_scenarios() -> Vec<&'static str> {
    scenarios::ALL
        .iter()
        .filter(|(_, kind)| matches!(kind, scenarios::Kind::Plain(_)))
        .map(|(name, _)| *name)
        // Runs a controller of its own beside whichever Deployment controller: nothing to compare.
        .filter(|name| *name != "sample-controller")
        .collect()
}

/// Runs the plain scenario `name` in a new namespace `ns` of `cluster` (simulated nodes, so
/// kcm-testenv's images), with its assertions and the invariant checker; waits scaled by `scale`.
pub(crate) fn run_plain(
    cluster: &Cluster,
    name: &str,
    ns: &str,
    run: &str,
    scale: f64,
) -> anyhow::Result<()> {
    let Some(scenarios::Kind::Plain(f)) = scenarios::ALL
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, k)| k)
    else {
        bail!("no plain scenario named {name}");
    };
    let images = Images::testenv();
    let ctx = Ctx {
        cluster,
        images: &images,
        scale,
    };
    create_namespace(cluster, ns, run, ctx.timeout())?;
    f(&ctx, ns).map(|_| ())
}

/// The longest a scenario step waits on kcm-testenv; multiplied by the timeout scale.
const BASE_TIMEOUT: Duration = Duration::from_secs(90);

/// What every scenario gets: the cluster, the images of this kind of cluster, and its waits.
pub(crate) struct Ctx<'a> {
    pub(crate) cluster: &'a Cluster,
    pub(crate) images: &'a Images,
    pub(crate) scale: f64,
}

impl std::ops::Deref for Ctx<'_> {
    type Target = Cluster;

    fn deref(&self) -> &Cluster {
        self.cluster
    }
}

impl Ctx<'_> {
    /// `base` multiplied by the timeout scale.
    fn scaled(&self, base: Duration) -> Duration {
        base.mul_f64(self.scale)
    }

    /// The time a step may take before the scenario fails.
    pub(crate) fn timeout(&self) -> Duration {
        self.scaled(BASE_TIMEOUT)
    }

    /// `--timeout=Ns` for kubectl, scaled.
    pub(crate) fn kubectl_timeout(&self, base_secs: u64) -> String {
        format!(
            "--timeout={}s",
            self.scaled(Duration::from_secs(base_secs))
                .as_secs_f64()
                .ceil()
        )
    }
}

/// A scenario's Deployment and what its rollouts must respect.
pub(crate) struct Rollout {
    pub(crate) ns: String,
    pub(crate) name: String,
    pub(crate) max_surge: i64,
    pub(crate) max_unavailable: i64,
    pub(crate) recreate: bool,
}

pub(crate) fn deployment(
    ns: &str,
    name: &str,
    replicas: i64,
    image: &str,
    strategy: Value,
) -> String {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "namespace": ns},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "strategy": strategy,
            "template": {"metadata": {"labels": {"app": name}},
                         "spec": {"containers": [{"name": "app", "image": image,
                                                  "securityContext": restricted_security_context()}]}}
        }
    })
    .to_string()
}

/// An IntOrString: "25%" stays a string, "2" becomes the integer 2 (a string without `%` is
/// invalid, as upstream validation says).
fn int_or_percent(v: &str) -> Value {
    v.parse::<i64>()
        .map(Value::from)
        .unwrap_or_else(|_| Value::from(v))
}

pub(crate) fn rolling(surge: &str, unavailable: &str) -> Value {
    json!({"type": "RollingUpdate", "rollingUpdate": {
        "maxSurge": int_or_percent(surge), "maxUnavailable": int_or_percent(unavailable)}})
}

/// The label every namespace of a run carries (value: the run id).
const RUN_LABEL: &str = "kcm-rs.io/e2e-run";

/// The `--feature-gates` of this run's upstream control plane, if any.
pub(crate) static FEATURE_GATES: std::sync::OnceLock<String> = std::sync::OnceLock::new();

/// Creates a scenario's namespace. On a real control plane, also waits for its `default`
/// ServiceAccount (pods are refused until the ServiceAccount controller made it, as upstream's
/// e2e framework waits), and on the upstream control plane lets kcm's ServiceAccount use Leases
/// there (the leader-election scenario elects in the scenario's namespace).
pub(crate) fn create_namespace(
    c: &Cluster,
    ns: &str,
    run: &str,
    timeout: Duration,
) -> anyhow::Result<()> {
    c.kubectl_stdin(
        &["apply", "-f", "-"],
        &json!({"apiVersion": "v1", "kind": "Namespace",
                "metadata": {"name": ns, "labels": {RUN_LABEL: run}}})
        .to_string(),
    )?;
    if c.kind == ClusterKind::Testenv {
        return Ok(());
    }
    if c.kind == ClusterKind::Upstream {
        let leases = json!({"apiVersion": "v1", "kind": "List", "items": [
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role",
             "metadata": {"name": "kcm-e2e-leases", "namespace": ns},
             "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"],
                        "verbs": ["get", "list", "create", "update", "delete"]}]},
            {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
             "metadata": {"name": "kcm-e2e-leases", "namespace": ns},
             "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role",
                         "name": "kcm-e2e-leases"},
             "subjects": [{"kind": "ServiceAccount", "name": "kcm", "namespace": "kube-system"}]}
        ]});
        c.kubectl_stdin(&["apply", "-f", "-"], &leases.to_string())?;
    }
    wait_for("the namespace's default ServiceAccount", timeout, || {
        Ok(
            c.kubectl(&["get", "serviceaccount", "default", "-n", ns, "-o", "name"])
                .ok()
                .map(|_| ()),
        )
    })
}

pub(crate) fn complete(c: &Cluster, ns: &str, name: &str) -> anyhow::Result<bool> {
    let d = c.get_json(&["deployment", name, "-n", ns])?;
    let spec = d["spec"]["replicas"].as_i64().unwrap_or(1);
    let st = &d["status"];
    Ok(st["observedGeneration"].as_i64().unwrap_or(0)
        >= d["metadata"]["generation"].as_i64().unwrap_or(0)
        && st["updatedReplicas"].as_i64().unwrap_or(0) == spec
        && st["replicas"].as_i64().unwrap_or(0) == spec
        && st["availableReplicas"].as_i64().unwrap_or(0) == spec)
}

/// Checks one sample against the rollout's invariants.
pub(crate) fn check(r: &Rollout, s: &Sample, first_rollout_done: bool) -> Result<(), String> {
    let total: i64 = s.rs.iter().map(|x| x.replicas).sum();
    if r.recreate {
        // Spec replicas, not status: a ReplicaSet's status may lag its deleted pods.
        let with_pods = s.rs.iter().filter(|x| x.replicas > 0).count();
        if with_pods > 1 {
            return Err(format!(
                "Recreate: {with_pods} ReplicaSets have pods at once at {:.1}s: {:?}",
                s.t, s.rs
            ));
        }
        return Ok(());
    }
    if total > s.desired + r.max_surge {
        return Err(format!(
            "Σ replicas {total} > replicas {} + maxSurge {} at {:.1}s: {:?}",
            s.desired, r.max_surge, s.t, s.rs
        ));
    }
    let min_available = s.desired - r.max_unavailable;
    if first_rollout_done && s.available < min_available {
        return Err(format!(
            "available {} < replicas {} − maxUnavailable {} at {:.1}s",
            s.available, s.desired, r.max_unavailable, s.t
        ));
    }
    Ok(())
}

/// Samples the rollout until `done` says so, checking invariants at every sample.
pub(crate) fn watch(
    c: &Ctx,
    r: &Rollout,
    obs: &mut Observer,
    settled: bool,
    mut done: impl FnMut(&Cluster) -> anyhow::Result<bool>,
) -> anyhow::Result<()> {
    let timeout = c.timeout();
    let deadline = Instant::now() + timeout;
    loop {
        let s = obs.observe(c, &r.ns, &r.name)?.clone();
        if let Err(v) = check(r, &s, settled) {
            bail!("invariant violated: {v}");
        }
        if done(c.cluster)? {
            // The sample above was read before `done` saw the end; take one after it, so the
            // last sample (what scenarios assert on) shows the finished state.
            let s = obs.observe(c, &r.ns, &r.name)?.clone();
            if let Err(v) = check(r, &s, settled) {
                bail!("invariant violated: {v}");
            }
            return Ok(());
        }
        ensure!(
            Instant::now() < deadline,
            "timed out after {timeout:?} ({}/{})",
            r.ns,
            r.name
        );
        std::thread::sleep(Duration::from_millis(150));
    }
}

pub(crate) fn active_pods(c: &Cluster, ns: &str, app: &str) -> anyhow::Result<Vec<Value>> {
    let pods = c.get_json(&["pods", "-n", ns, "-l", &format!("app={app}")])?;
    Ok(pods["items"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .into_iter()
        .filter(|p| {
            p["metadata"]["deletionTimestamp"].is_null()
                && !matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed"))
        })
        .collect())
}

/// Creates Deployment `web` in `ns` (with `patch` applied to its manifest) and waits for its
/// first rollout while checking invariants; `limits` are maxSurge and maxUnavailable resolved
/// to pod counts. Returns the rollout's limits and the observer holding its samples.
pub(crate) fn start_web(
    c: &Ctx,
    ns: &str,
    replicas: i64,
    strategy: Value,
    limits: (i64, i64),
    patch: impl FnOnce(&mut Value),
) -> anyhow::Result<(Rollout, Observer)> {
    let r = Rollout {
        ns: ns.into(),
        name: "web".into(),
        max_surge: limits.0,
        max_unavailable: limits.1,
        recreate: strategy["type"] == "Recreate",
    };
    let mut d: Value =
        serde_json::from_str(&deployment(ns, "web", replicas, c.images.v(1), strategy))?;
    patch(&mut d);
    c.kubectl_stdin(&["apply", "-f", "-"], &d.to_string())?;
    let mut obs = Observer::new(true);
    watch(c, &r, &mut obs, false, |c| complete(c, ns, "web"))?;
    Ok((r, obs))
}

/// Runs `f` with the run's kcm stopped (for scenarios that start kcm processes of their own, as
/// the run's kcm would reconcile regardless of them), then starts it again as `kcm-after-<step>`.
fn with_own_kcm_stopped<T>(
    c: &Ctx,
    kcm: &mut Option<crate::cluster::Proc>,
    step: &str,
    f: impl FnOnce() -> anyhow::Result<T>,
) -> anyhow::Result<T> {
    if let Some(mut own) = kcm.take() {
        let _ = own.terminate(Duration::from_secs(10));
    }
    let outcome = f();
    *kcm = Some(c.start_kcm(&format!("kcm-after-{step}"), &["--leader-elect=false"])?);
    outcome
}

/// `kubectl set image`: Deployment `web`'s container `app` in `ns` to `image`.
pub(crate) fn set_web_image(c: &Cluster, ns: &str, image: &str) -> anyhow::Result<()> {
    let image = format!("app={image}");
    c.kubectl(&["-n", ns, "set", "image", "deployment/web", &image])?;
    Ok(())
}

/// `kubectl scale`: Deployment `web` in `ns` to `replicas`.
pub(crate) fn scale_web(
    c: &Cluster,
    ns: &str,
    replicas: impl std::fmt::Display,
) -> anyhow::Result<()> {
    let replicas = format!("--replicas={replicas}");
    c.kubectl(&["-n", ns, "scale", "deployment/web", &replicas])?;
    Ok(())
}

/// `kubectl set image` to `image`, then follows the rollout to completion.
pub(crate) fn roll_image(
    c: &Ctx,
    r: &Rollout,
    obs: &mut Observer,
    image: &str,
) -> anyhow::Result<()> {
    set_web_image(c, &r.ns, image)?;
    std::thread::sleep(Duration::from_millis(300));
    watch(c, r, obs, true, |c| complete(c, &r.ns, "web"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::observe::RsSample;

    fn sample(desired: i64, available: i64, rs: &[i64]) -> Sample {
        Sample {
            t: 1.0,
            desired,
            available,
            updated: 0,
            rs: rs
                .iter()
                .enumerate()
                .map(|(i, r)| RsSample {
                    name: format!("rs{i}"),
                    revision: (i + 1).to_string(),
                    replicas: *r,
                    ready: *r,
                    available: *r,
                })
                .collect(),
        }
    }

    #[test]
    fn invariant_checker_flags_violations() {
        let r = Rollout {
            ns: "n".into(),
            name: "web".into(),
            max_surge: 2,
            max_unavailable: 2,
            recreate: false,
        };
        assert!(check(&r, &sample(8, 8, &[8, 2]), true).is_ok());
        assert!(check(&r, &sample(8, 6, &[6, 4]), true).is_ok());
        assert!(
            check(&r, &sample(8, 8, &[8, 3]), true).is_err(),
            "surge 3 > 2"
        );
        assert!(
            check(&r, &sample(8, 5, &[5, 5]), true).is_err(),
            "available 5 < 6"
        );
        assert!(
            check(&r, &sample(8, 0, &[8]), false).is_ok(),
            "availability checked only after the first rollout"
        );
        let rc = Rollout {
            recreate: true,
            ..r
        };
        assert!(check(&rc, &sample(4, 4, &[4, 0]), true).is_ok());
        assert!(
            check(&rc, &sample(4, 2, &[2, 1]), true).is_err(),
            "old and new together"
        );
        assert!(
            check(&rc, &sample(4, 0, &[0, 0]), true).is_ok(),
            "between old down and new up"
        );
    }
}
