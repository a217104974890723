//! Checks before running the scenarios against an external cluster: the API answers, upstream's
//! Deployment and ReplicaSet controllers look disabled, and no second kcm would compete with the
//! one this run starts.
//!
//! Whether upstream's controllers are active cannot be read from the API directly. What can be:
//! the `kube-system/kube-controller-manager` Lease (renewed within the last minute means a
//! kube-controller-manager runs), and, where the control plane runs as pods (kubeadm, kind), the
//! `--controllers` flag of those pods, evaluated as kube-controller-manager does (an explicit
//! `name` or `-name` wins, the first one listed; otherwise `*` enables the on-by-default
//! controllers; `deployment` and `replicaset` are aliases of the `-controller` names).

use anyhow::{Context, bail};
use serde_json::Value;

use crate::cluster::Cluster;
use crate::timestamps::{now_seconds, unix_seconds};

/// The Lease upstream's kube-controller-manager holds while it runs.
const UPSTREAM_LEASE: (&str, &str) = ("kube-system", "kube-controller-manager");
/// The Lease of kcm deployed with `deploy/deployment.yaml`.
const DEPLOYED_KCM_LEASE: (&str, &str) = ("kube-system", "kcm");
/// A Lease renewed this recently (seconds) belongs to a running process.
pub(super) const FRESH_SECS: f64 = 60.0;
/// The flag disabling upstream's controllers that kcm replaces.
pub(super) const DISABLE_FLAG: &str =
    "--controllers=*,-deployment-controller,-replicaset-controller";

/// What a Lease says about its holder.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum LeaseState {
    /// No such Lease (or no renewTime): nobody ever held it.
    Absent,
    /// Released (empty holder) or not renewed for longer than [`FRESH_SECS`].
    Stale { holder: String, age_secs: f64 },
    /// Renewed within [`FRESH_SECS`] by `holder` (a negative age is clock skew: still fresh).
    Held { holder: String, age_secs: f64 },
}

/// Classifies a Lease object read at `now` (Unix seconds).
pub(super) fn lease_state(lease: Option<&Value>, now: f64) -> LeaseState {
    let Some(lease) = lease else {
        return LeaseState::Absent;
    };
    let spec = &lease["spec"];
    let Some(renewed) = spec["renewTime"].as_str().and_then(unix_seconds) else {
        return LeaseState::Absent;
    };
    let holder = spec["holderIdentity"].as_str().unwrap_or("").to_string();
    let age_secs = now - renewed;
    if holder.is_empty() || age_secs > FRESH_SECS {
        LeaseState::Stale { holder, age_secs }
    } else {
        LeaseState::Held { holder, age_secs }
    }
}

/// Whether kube-controller-manager, started with `args` (command and arguments of its
/// container), runs the controller `name` (canonical, e.g. `deployment-controller`) whose alias
/// is `alias`. Without a `--controllers` flag the default `*` applies.
pub(super) fn controller_enabled(args: &[String], name: &str, alias: &str) -> bool {
    let mut list: Vec<String> = Vec::new();
    let mut seen_flag = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let value = if let Some(v) = a.strip_prefix("--controllers=") {
            Some(v.to_string())
        } else if a == "--controllers" {
            it.next().cloned()
        } else {
            None
        };
        if let Some(v) = value {
            // A repeated slice flag appends to the values given before it.
            seen_flag = true;
            list.extend(v.split(',').map(|s| s.trim().to_string()));
        }
    }
    if !seen_flag {
        list.push("*".into());
    }
    let mut star = false;
    for item in &list {
        let (negated, bare) = match item.strip_prefix('-') {
            Some(b) => (true, b),
            None => (false, item.as_str()),
        };
        if bare == name || bare == alias {
            return !negated;
        }
        star |= item == "*";
    }
    // Both controllers are on by default upstream.
    star
}

/// What was learned about upstream's controllers.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Upstream {
    /// No kube-controller-manager Lease renewed recently.
    NotRunning,
    /// kube-controller-manager runs and its pods' flags disable both controllers.
    Disabled,
    /// kube-controller-manager runs and its pods' flags leave these controllers on.
    Enabled(Vec<&'static str>),
    /// kube-controller-manager runs, but its flags are not visible (managed control plane,
    /// k3s, no permission).
    Unknown,
}

/// Judges upstream's controllers from the Lease state and the command lines of the
/// kube-controller-manager pods found (empty when none is visible).
pub(super) fn judge_upstream(lease: &LeaseState, pod_args: &[Vec<String>]) -> Upstream {
    if !matches!(lease, LeaseState::Held { .. }) {
        return Upstream::NotRunning;
    }
    if pod_args.is_empty() {
        return Upstream::Unknown;
    }
    let mut on: Vec<&'static str> = Vec::new();
    for (name, alias) in [
        ("deployment-controller", "deployment"),
        ("replicaset-controller", "replicaset"),
    ] {
        if pod_args.iter().any(|a| controller_enabled(a, name, alias)) {
            on.push(name);
        }
    }
    if on.is_empty() {
        Upstream::Disabled
    } else {
        Upstream::Enabled(on)
    }
}

fn read_lease(c: &Cluster, (ns, name): (&str, &str)) -> anyhow::Result<Option<Value>> {
    match c.get_json(&["lease", name, "-n", ns]) {
        Ok(v) => Ok(Some(v)),
        Err(e) if format!("{e:#}").contains("NotFound") => Ok(None),
        Err(e) => Err(e),
    }
}

fn describe(state: &LeaseState) -> String {
    match state {
        LeaseState::Absent => "absent".into(),
        LeaseState::Stale { holder, age_secs } => {
            format!("not held (holder {holder:?}, renewed {age_secs:.0}s ago)")
        }
        LeaseState::Held { holder, age_secs } => {
            format!("held by {holder:?}, renewed {age_secs:.0}s ago")
        }
    }
}

/// Command lines (command + args) of the containers of kube-controller-manager pods.
fn upstream_pod_args(c: &Cluster) -> Vec<Vec<String>> {
    let Ok(pods) = c.get_json(&[
        "pods",
        "-n",
        "kube-system",
        "-l",
        "component=kube-controller-manager",
    ]) else {
        return Vec::new();
    };
    let strings = |v: &Value| -> Vec<String> {
        v.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut out = Vec::new();
    for pod in pods["items"].as_array().into_iter().flatten() {
        for ctr in pod["spec"]["containers"].as_array().into_iter().flatten() {
            let mut line = strings(&ctr["command"]);
            line.extend(strings(&ctr["args"]));
            let is_kcm = ctr["image"]
                .as_str()
                .is_some_and(|i| i.contains("kube-controller-manager"))
                || line.iter().any(|a| a.contains("kube-controller-manager"));
            if is_kcm {
                out.push(line);
            }
        }
    }
    out
}

fn warn(lines: &[String]) {
    let bar = "!".repeat(78);
    eprintln!("\n{bar}");
    for l in lines {
        eprintln!("!! {l}");
    }
    eprintln!("{bar}\n");
}

/// Runs the checks; prints what it finds; with `strict`, fails on any warning. `no_kcm`: kcm is
/// expected to run in the cluster already.
pub(super) fn run(c: &Cluster, no_kcm: bool, strict: bool) -> anyhow::Result<()> {
    let version = c
        .kubectl(&["version", "-o", "json"])
        .with_context(|| format!("the API server at {} is not reachable", c.url))?;
    let version: Value = serde_json::from_str(&version).context("kubectl version output")?;
    let server = version["serverVersion"]["gitVersion"]
        .as_str()
        .context("kubectl version printed no serverVersion: the API server did not answer")?;
    println!("e2e: preflight: API server {} ({server})", c.url);

    let mut warnings: Vec<Vec<String>> = Vec::new();
    let now = now_seconds();
    match read_lease(c, UPSTREAM_LEASE) {
        Ok(lease) => {
            let state = lease_state(lease.as_ref(), now);
            println!(
                "e2e: preflight: lease {}/{}: {}",
                UPSTREAM_LEASE.0,
                UPSTREAM_LEASE.1,
                describe(&state)
            );
            match judge_upstream(&state, &upstream_pod_args(c)) {
                Upstream::NotRunning => {}
                Upstream::Disabled => println!(
                    "e2e: preflight: kube-controller-manager runs with the deployment and replicaset controllers disabled"
                ),
                Upstream::Enabled(on) => warnings.push(vec![
                    format!(
                        "kube-controller-manager runs WITH {} enabled:",
                        on.join(" and ")
                    ),
                    "it fights kcm over every Deployment and ReplicaSet, and the scenarios".into(),
                    "prove nothing about kcm.".into(),
                    format!("Start kube-controller-manager with {DISABLE_FLAG}"),
                    "(the aliases -deployment,-replicaset work too).".into(),
                ]),
                Upstream::Unknown => warnings.push(vec![
                    "kube-controller-manager is running (its lease was renewed within the last"
                        .into(),
                    "minute) and its flags are not visible here. Its deployment and replicaset"
                        .into(),
                    format!("controllers must be disabled: {DISABLE_FLAG}"),
                    "If they are not, they fight kcm and the results mean nothing.".into(),
                ]),
            }
        }
        Err(e) => warnings.push(vec![
            format!(
                "could not read lease {}/{}: {e:#}",
                UPSTREAM_LEASE.0, UPSTREAM_LEASE.1
            ),
            format!("make sure kube-controller-manager runs with {DISABLE_FLAG}"),
        ]),
    }
    let kcm_lease = read_lease(c, DEPLOYED_KCM_LEASE)
        .ok()
        .flatten()
        .map(|l| lease_state(Some(&l), now))
        .unwrap_or(LeaseState::Absent);
    let kcm_running = matches!(kcm_lease, LeaseState::Held { .. });
    if kcm_running && !no_kcm {
        warnings.push(vec![
            format!(
                "a kcm already runs in the cluster (lease {}/{} {}),",
                DEPLOYED_KCM_LEASE.0,
                DEPLOYED_KCM_LEASE.1,
                describe(&kcm_lease)
            ),
            "and this run starts another one: pass --no-kcm to test the deployed kcm.".into(),
        ]);
    }
    if no_kcm && !kcm_running {
        println!(
            "e2e: preflight: note: --no-kcm, and lease {}/{} is {}; make sure a kcm runs (one \
             started with --leader-elect=false holds no lease)",
            DEPLOYED_KCM_LEASE.0,
            DEPLOYED_KCM_LEASE.1,
            describe(&kcm_lease)
        );
    }
    for w in &warnings {
        warn(w);
    }
    if strict && !warnings.is_empty() {
        bail!(
            "preflight: {} warning(s) and --strict; not running the scenarios",
            warnings.len()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn lease(holder: &str, renew: &str) -> Value {
        json!({"spec": {"holderIdentity": holder, "renewTime": renew, "leaseDurationSeconds": 15}})
    }

    #[test]
    fn lease_age_decides_whether_it_is_held() {
        let t0 = unix_seconds("2026-01-01T00:00:00Z").unwrap();
        let l = lease("cp-1_abc", "2026-01-01T00:00:00.000000Z");
        let held = |age: f64| LeaseState::Held {
            holder: "cp-1_abc".into(),
            age_secs: age,
        };
        assert_eq!(lease_state(Some(&l), t0 + 2.0), held(2.0));
        assert_eq!(
            lease_state(Some(&l), t0 + 60.0),
            held(60.0),
            "a minute is fresh"
        );
        assert_eq!(
            lease_state(Some(&l), t0 - 5.0),
            held(-5.0),
            "clock skew: renewed 'in the future' is fresh"
        );
        assert_eq!(
            lease_state(Some(&l), t0 + 61.0),
            LeaseState::Stale {
                holder: "cp-1_abc".into(),
                age_secs: 61.0
            }
        );
        let released = lease("", "2026-01-01T00:00:00Z");
        assert!(matches!(
            lease_state(Some(&released), t0 + 1.0),
            LeaseState::Stale { .. }
        ));
        assert_eq!(lease_state(None, t0), LeaseState::Absent);
        assert_eq!(
            lease_state(Some(&json!({"spec": {"holderIdentity": "x"}})), t0),
            LeaseState::Absent,
            "never renewed"
        );
    }

    #[test]
    fn controller_enabled_follows_kube_controller_manager() {
        let dep = |a: &str| controller_enabled(&args(a), "deployment-controller", "deployment");
        assert!(dep("kube-controller-manager --v=2"), "default is *");
        assert!(dep("kube-controller-manager --controllers=*"));
        assert!(dep(
            "kube-controller-manager --controllers=*,bootstrapsigner"
        ));
        assert!(!dep(
            "kube-controller-manager --controllers=*,-deployment-controller"
        ));
        assert!(!dep("kube-controller-manager --controllers=*,-deployment"));
        assert!(!dep("kube-controller-manager --controllers -deployment,*"));
        assert!(
            !dep("kube-controller-manager --controllers=job,cronjob"),
            "no *"
        );
        assert!(dep("kube-controller-manager --controllers=deployment"));
        assert!(
            dep("kube-controller-manager --controllers=deployment,-deployment"),
            "the first explicit choice wins"
        );
        assert!(
            !dep("kube-controller-manager --controllers=* --controllers=-deployment"),
            "a repeated flag appends"
        );
    }

    #[test]
    fn judge_upstream_table() {
        let held = LeaseState::Held {
            holder: "cp".into(),
            age_secs: 1.0,
        };
        let stale = LeaseState::Stale {
            holder: "cp".into(),
            age_secs: 600.0,
        };
        let disabled = args(&format!("kube-controller-manager {DISABLE_FLAG}"));
        let aliases = args("kube-controller-manager --controllers=*,-deployment,-replicaset");
        let half = args("kube-controller-manager --controllers=*,-deployment");
        let default = args("kube-controller-manager --leader-elect=true");
        assert_eq!(
            judge_upstream(&LeaseState::Absent, &[]),
            Upstream::NotRunning
        );
        assert_eq!(
            judge_upstream(&stale, std::slice::from_ref(&default)),
            Upstream::NotRunning
        );
        assert_eq!(judge_upstream(&held, &[]), Upstream::Unknown);
        assert_eq!(
            judge_upstream(&held, &[disabled.clone(), aliases]),
            Upstream::Disabled
        );
        assert_eq!(
            judge_upstream(&held, &[half]),
            Upstream::Enabled(vec!["replicaset-controller"])
        );
        assert_eq!(
            judge_upstream(&held, &[disabled, default]),
            Upstream::Enabled(vec!["deployment-controller", "replicaset-controller"]),
            "one control-plane node with the controllers on is enough"
        );
    }
}
