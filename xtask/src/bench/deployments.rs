//! The benchmark's workload: N Deployments of [`REPLICAS`] replicas, round-robin over the
//! benchmark's namespaces, and the wait until they are complete (shared by the single-replica
//! and the sharded runs).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use anyhow::bail;
use serde_json::Value;

use crate::cluster::Cluster;

/// Replicas of each Deployment.
pub(crate) const REPLICAS: usize = 10;

/// N Deployments of `REPLICAS` replicas each, round-robin over `namespaces`.
pub(crate) fn deployments_yaml(n: usize, namespaces: &[String]) -> String {
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
pub(crate) fn wait_complete(
    cluster: &Cluster,
    namespaces: &[String],
    n: usize,
    generation: i64,
    split: Option<&BTreeSet<String>>,
) -> anyhow::Result<(Option<Instant>, Option<Instant>)> {
    let limit = default_limit(n);
    let p = wait_progress(cluster, namespaces, n, generation, split, limit)?;
    p.all_complete(n, limit)?;
    Ok((p.inside_done, p.outside_done))
}

/// 30 minutes per 300 Deployments (a rollout of 300 takes about 9 at the controllers'
/// default QPS).
pub(crate) fn default_limit(n: usize) -> Duration {
    Duration::from_secs(1800 * n.div_ceil(300) as u64)
}

/// How far a phase got by the time [`wait_progress`] returned.
pub(crate) struct Progress {
    /// Deployments complete at the last poll (`n` when the phase ended).
    pub complete: usize,
    /// With a split: when the Deployments in, and out of, the split set were all complete.
    pub inside_done: Option<Instant>,
    pub outside_done: Option<Instant>,
}

impl Progress {
    /// An error unless all `n` Deployments were complete when the wait of `limit` returned.
    pub(crate) fn all_complete(&self, n: usize, limit: Duration) -> anyhow::Result<()> {
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
pub(crate) fn wait_progress(
    cluster: &Cluster,
    namespaces: &[String],
    n: usize,
    generation: i64,
    split: Option<&BTreeSet<String>>,
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
pub(crate) fn is_complete(d: &Value, generation: i64) -> bool {
    let s = &d["status"];
    let want = d["spec"]["replicas"].as_i64();
    d["metadata"]["generation"].as_i64() == Some(generation)
        && s["observedGeneration"].as_i64() == Some(generation)
        && s["replicas"].as_i64() == want
        && s["updatedReplicas"].as_i64() == want
        && s["availableReplicas"].as_i64() == want
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::bench::controllers_args::{bench_namespace, namespace_names};

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
        let one = deployments_yaml(3, &namespace_names(1));
        assert_eq!(one.matches("kind: Deployment").count(), 3);
        assert_eq!(one.matches("namespace: bench\n").count(), 3);
        let three = deployments_yaml(30, &namespace_names(3));
        for ns in ["n0-bench", "n1-bench", "n2-bench"] {
            assert_eq!(three.matches(&format!("namespace: {ns}\n")).count(), 10);
        }
        assert!(three.contains("name: d-0029\n  namespace: n2-bench"));
        let two = deployments_yaml(4, &[bench_namespace(0), bench_namespace(1)]);
        assert_eq!(two.matches("namespace: n1-bench").count(), 2);
    }

    #[test]
    fn the_wait_scales_with_the_deployments() {
        assert_eq!(default_limit(1), Duration::from_secs(1800));
        assert_eq!(default_limit(300), Duration::from_secs(1800));
        assert_eq!(default_limit(301), Duration::from_secs(3600));
    }
}
