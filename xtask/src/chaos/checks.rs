//! What must hold once a schedule's faults stop: every Deployment complete, exact pod counts,
//! the history limit, one ReplicaSet per template, nothing leaked; then `kubectl rollout status`.

use std::collections::{BTreeMap, HashSet};
use std::time::{Duration, Instant};

use anyhow::bail;
use serde_json::Value;

use crate::cluster::Cluster;

/// How long a schedule may take to converge once its scenario ended.
pub(crate) const CONVERGENCE_BOUND: Duration = Duration::from_secs(120);

fn items(list: &Value) -> Vec<Value> {
    list["items"].as_array().cloned().unwrap_or_default()
}

fn uid(o: &Value) -> &str {
    o["metadata"]["uid"].as_str().unwrap_or_default()
}

fn name(o: &Value) -> &str {
    o["metadata"]["name"].as_str().unwrap_or_default()
}

/// The UID of `o`'s controller owner, if any.
fn controller_uid(o: &Value) -> Option<&str> {
    o["metadata"]["ownerReferences"]
        .as_array()?
        .iter()
        .find(|r| r["controller"] == true)
        .and_then(|r| r["uid"].as_str())
}

fn active(p: &Value) -> bool {
    p["metadata"]["deletionTimestamp"].is_null()
        && !matches!(p["status"]["phase"].as_str(), Some("Succeeded" | "Failed"))
}

/// Whether `labels` match a Deployment's `matchLabels` (the scenarios use no expressions).
fn selects(d: &Value, labels: &Value) -> bool {
    d["spec"]["selector"]["matchLabels"]
        .as_object()
        .is_some_and(|m| !m.is_empty() && m.iter().all(|(k, v)| labels[k] == *v))
}

/// A ReplicaSet's pod template without the `pod-template-hash` label, for comparison.
fn template_key(rs: &Value) -> String {
    let mut t = rs["spec"]["template"].clone();
    if let Some(l) = t["metadata"]["labels"].as_object_mut() {
        l.remove("pod-template-hash");
    }
    t.to_string()
}

/// The first violation of the converged state in `deployments`, `replicasets` and `pods` of
/// one namespace, or `Ok` when everything holds.
pub(crate) fn converged_state(
    deployments: &[Value],
    replicasets: &[Value],
    pods: &[Value],
) -> Result<(), String> {
    let rs_uids: HashSet<&str> = replicasets.iter().map(uid).collect();
    let d_uids: HashSet<&str> = deployments.iter().map(uid).collect();
    let mut pods_of: BTreeMap<&str, i64> = BTreeMap::new();
    for p in pods.iter().filter(|p| active(p)) {
        match controller_uid(p) {
            Some(owner) if rs_uids.contains(owner) => *pods_of.entry(owner).or_default() += 1,
            Some(owner) => return Err(format!("pod {} leaked: owner {owner} is gone", name(p))),
            None => {
                if deployments
                    .iter()
                    .any(|d| selects(d, &p["metadata"]["labels"]))
                {
                    return Err(format!("pod {} is an orphan a Deployment selects", name(p)));
                }
            }
        }
    }
    for rs in replicasets {
        let spec = rs["spec"]["replicas"].as_i64().unwrap_or(1);
        let have = pods_of.get(uid(rs)).copied().unwrap_or(0);
        if have != spec {
            return Err(format!(
                "ReplicaSet {} has {have} active pods, spec {spec}",
                name(rs)
            ));
        }
        let status = rs["status"]["replicas"].as_i64().unwrap_or(0);
        if status != spec {
            return Err(format!(
                "ReplicaSet {} status.replicas {status} ≠ spec {spec}",
                name(rs)
            ));
        }
        match controller_uid(rs) {
            Some(owner) if !d_uids.contains(owner) => {
                return Err(format!(
                    "ReplicaSet {} leaked: owner {owner} is gone",
                    name(rs)
                ));
            }
            None if deployments
                .iter()
                .any(|d| selects(d, &rs["metadata"]["labels"])) =>
            {
                return Err(format!(
                    "ReplicaSet {} is an orphan a Deployment selects",
                    name(rs)
                ));
            }
            _ => {}
        }
    }
    for d in deployments {
        deployment_converged(d, replicasets)?;
    }
    Ok(())
}

fn deployment_converged(d: &Value, replicasets: &[Value]) -> Result<(), String> {
    let dn = name(d);
    let spec = d["spec"]["replicas"].as_i64().unwrap_or(1);
    let st = &d["status"];
    let generation = d["metadata"]["generation"].as_i64().unwrap_or(0);
    let complete = st["observedGeneration"].as_i64().unwrap_or(0) >= generation
        && [
            "updatedReplicas",
            "replicas",
            "availableReplicas",
            "readyReplicas",
        ]
        .iter()
        .all(|f| st[*f].as_i64().unwrap_or(0) == spec);
    if !complete {
        return Err(format!(
            "Deployment {dn} not complete (spec {spec}): status {st}"
        ));
    }
    let owned: Vec<&Value> = replicasets
        .iter()
        .filter(|rs| controller_uid(rs) == Some(uid(d)))
        .collect();
    let total: i64 = owned
        .iter()
        .map(|rs| rs["spec"]["replicas"].as_i64().unwrap_or(1))
        .sum();
    if total != spec {
        return Err(format!(
            "Deployment {dn}: Σ ReplicaSet replicas {total} ≠ {spec}"
        ));
    }
    let with_pods = owned
        .iter()
        .filter(|rs| rs["spec"]["replicas"].as_i64().unwrap_or(1) > 0)
        .count();
    if spec > 0 && with_pods != 1 {
        return Err(format!(
            "Deployment {dn}: {with_pods} ReplicaSets have replicas, not 1"
        ));
    }
    let limit = d["spec"]["revisionHistoryLimit"].as_i64().unwrap_or(10);
    let old = owned
        .iter()
        .filter(|rs| rs["spec"]["replicas"].as_i64() == Some(0))
        .count() as i64;
    if old > limit {
        return Err(format!(
            "Deployment {dn}: {old} old ReplicaSets > revisionHistoryLimit {limit}"
        ));
    }
    let mut seen: BTreeMap<String, &str> = BTreeMap::new();
    for rs in &owned {
        if let Some(other) = seen.insert(template_key(rs), name(rs)) {
            return Err(format!(
                "Deployment {dn}: ReplicaSets {other} and {} have the same template",
                name(rs)
            ));
        }
    }
    Ok(())
}

/// Polls namespace `ns` until [`converged_state`] holds, within [`CONVERGENCE_BOUND`], then
/// checks `kubectl rollout status` of every Deployment. Returns how long convergence took.
pub(crate) fn wait_converged(c: &Cluster, ns: &str) -> anyhow::Result<Duration> {
    let start = Instant::now();
    let mut last: String;
    let deployments = loop {
        let read = (|| -> anyhow::Result<(Vec<Value>, Result<(), String>)> {
            let d = items(&c.get_json(&["deployments", "-n", ns])?);
            let rs = items(&c.get_json(&["replicasets", "-n", ns])?);
            let pods = items(&c.get_json(&["pods", "-n", ns])?);
            let verdict = converged_state(&d, &rs, &pods);
            Ok((d, verdict))
        })();
        match read {
            Ok((d, Ok(()))) => break d,
            Ok((_, Err(v))) => last = v,
            Err(e) => last = format!("reading the namespace: {e:#}"),
        }
        if start.elapsed() > CONVERGENCE_BOUND {
            bail!("not converged within {CONVERGENCE_BOUND:?}: {last}");
        }
        std::thread::sleep(Duration::from_millis(500));
    };
    let took = start.elapsed();
    for d in &deployments {
        c.kubectl(&[
            "-n",
            ns,
            "rollout",
            "status",
            &format!("deployment/{}", name(d)),
            "--timeout=30s",
        ])
        .map_err(|e| anyhow::anyhow!("kubectl rollout status {}: {e:#}", name(d)))?;
    }
    Ok(took)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn dep(replicas: i64, limit: Option<i64>) -> Value {
        let mut d = json!({"metadata": {"name": "web", "uid": "d1", "generation": 2},
            "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": "web"}}},
            "status": {"observedGeneration": 2, "replicas": replicas, "updatedReplicas": replicas,
                       "availableReplicas": replicas, "readyReplicas": replicas}});
        if let Some(l) = limit {
            d["spec"]["revisionHistoryLimit"] = json!(l);
        }
        d
    }

    fn rs(uid: &str, replicas: i64, image: &str) -> Value {
        json!({"metadata": {"name": format!("web-{uid}"), "uid": uid, "labels": {"app": "web"},
                "ownerReferences": [{"uid": "d1", "controller": true}]},
               "spec": {"replicas": replicas, "template": {"metadata": {"labels":
                   {"app": "web", "pod-template-hash": uid}}, "spec": {"image": image}}},
               "status": {"replicas": replicas}})
    }

    fn pods(owner: &str, n: usize) -> Vec<Value> {
        (0..n)
            .map(|i| {
                json!({"metadata": {"name": format!("{owner}-{i}"), "labels": {"app": "web"},
                "ownerReferences": [{"uid": owner, "controller": true}]},
                "status": {"phase": "Running"}})
            })
            .collect()
    }

    #[test]
    fn a_converged_namespace_passes() {
        let d = [dep(3, None)];
        let r = [rs("a", 0, "v1"), rs("b", 3, "v2")];
        assert_eq!(converged_state(&d, &r, &pods("b", 3)), Ok(()));
        assert_eq!(converged_state(&[], &[], &[]), Ok(()));
    }

    #[test]
    fn each_violation_is_reported() {
        let d = [dep(3, None)];
        let r = [rs("a", 0, "v1"), rs("b", 3, "v2")];
        let err = |d: &[Value], r: &[Value], p: &[Value]| converged_state(d, r, p).unwrap_err();
        assert!(
            err(&d, &r, &pods("b", 4)).contains("4 active pods"),
            "duplicate pod"
        );
        let mut leaked = pods("b", 3);
        leaked.extend(pods("gone", 1));
        assert!(err(&d, &r, &leaked).contains("leaked"));
        let mut orphan = pods("b", 3);
        orphan.push(json!({"metadata": {"name": "o", "labels": {"app": "web"}}, "status": {}}));
        assert!(err(&d, &r, &orphan).contains("orphan"));
        let same = [rs("a", 0, "v2"), rs("b", 3, "v2")];
        assert!(err(&d, &same, &pods("b", 3)).contains("same template"));
        let over = [rs("a", 0, "v1"), rs("c", 0, "v0"), rs("b", 3, "v2")];
        assert!(err(&[dep(3, Some(1))], &over, &pods("b", 3)).contains("revisionHistoryLimit"));
        let mut incomplete = dep(3, None);
        incomplete["status"]["availableReplicas"] = json!(2);
        assert!(err(&[incomplete], &r, &pods("b", 3)).contains("not complete"));
        let split = [rs("a", 1, "v1"), rs("b", 2, "v2")];
        let mut p = pods("a", 1);
        p.extend(pods("b", 2));
        assert!(err(&d, &split, &p).contains("2 ReplicaSets have replicas"));
        assert!(
            err(&[], &r, &pods("b", 3)).contains("leaked"),
            "RS of a deleted Deployment"
        );
    }
}
