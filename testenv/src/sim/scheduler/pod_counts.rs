//! [`PodCounts`]: pods per node, kept from pod events and the scheduler's own bindings.

use std::collections::HashMap;

use k8s_openapi::api::core::v1::Pod;

/// Pods per node, kept up to date from pod events and our own bindings, so scheduling one pod
/// does not walk every pod of the cluster. A pod counts on a node while the cache shows it
/// there and not finished, or while we bound it there and the cache has not caught up.
#[derive(Debug, Default)]
pub(super) struct PodCounts {
    /// Pods bound by us and not yet seen bound in the cache: uid → node.
    assumed: HashMap<String, String>,
    /// Pods the cache shows on a node and not finished: uid → node.
    bound: HashMap<String, String>,
    /// `bound` plus `assumed`, per node.
    per_node: HashMap<String, usize>,
}

impl PodCounts {
    fn up(&mut self, node: &str) {
        *self.per_node.entry(node.to_string()).or_default() += 1;
    }

    fn down(&mut self, node: &str) {
        if let Some(n) = self.per_node.get_mut(node) {
            *n = n.saturating_sub(1);
            if *n == 0 {
                self.per_node.remove(node);
            }
        }
    }

    /// Pods counted on `node`.
    pub(super) fn on(&self, node: &str) -> usize {
        self.per_node.get(node).copied().unwrap_or(0)
    }

    pub(super) fn is_assumed(&self, uid: &str) -> bool {
        self.assumed.contains_key(uid)
    }

    /// Records a pod as the cache now shows it.
    pub(super) fn observe(&mut self, pod: &Pod) {
        let Some(uid) = pod.metadata.uid.as_deref() else {
            return;
        };
        let finished = matches!(
            pod.status.as_ref().and_then(|s| s.phase.as_deref()),
            Some("Succeeded" | "Failed")
        );
        let node = pod
            .spec
            .as_ref()
            .and_then(|s| s.node_name.as_deref())
            .filter(|n| !n.is_empty() && !finished);
        if node.is_some() {
            // Seen bound: no longer an assumption of ours.
            self.forget_assumed(uid);
        }
        let old = self.bound.get(uid).cloned();
        if old.as_deref() == node {
            return;
        }
        if let Some(old) = old {
            self.down(&old);
            self.bound.remove(uid);
        }
        if let Some(new) = node {
            self.up(new);
            self.bound.insert(uid.to_string(), new.to_string());
        }
    }

    /// Forgets a deleted pod.
    pub(super) fn forget(&mut self, uid: &str) {
        self.forget_assumed(uid);
        if let Some(old) = self.bound.remove(uid) {
            self.down(&old);
        }
    }

    pub(super) fn forget_assumed(&mut self, uid: &str) {
        if let Some(node) = self.assumed.remove(uid) {
            self.down(&node);
        }
    }

    /// We bound `uid` to `node`; counts there until the cache shows it.
    pub(super) fn assume(&mut self, uid: String, node: String) {
        if self.bound.contains_key(&uid) {
            return;
        }
        if let Some(old) = self.assumed.insert(uid, node.clone()) {
            self.down(&old);
        }
        self.up(&node);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_objects::pod;
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    /// The incremental counts equal a recount over the cache after every step of a sequence
    /// of cache events and bindings (the way `schedule` counted before it kept them).
    #[test]
    fn pod_counts_match_a_full_recount() {
        fn p(uid: &str, node: Option<&str>, phase: Option<&str>) -> Pod {
            pod(
                json!({"metadata": {"uid": uid}, "spec": {"nodeName": node}, "status": {"phase": phase}}),
            )
        }
        enum Step {
            Cache(Box<Pod>),
            Delete(&'static str),
            Bind(&'static str, &'static str),
        }
        let steps = vec![
            Step::Cache(Box::new(p("a", None, None))),
            Step::Bind("a", "n1"),
            Step::Cache(Box::new(p("b", None, None))),
            Step::Bind("b", "n1"),
            // The cache catches up with our binding of a.
            Step::Cache(Box::new(p("a", Some("n1"), None))),
            Step::Cache(Box::new(p("c", Some("n2"), Some("Running")))),
            // c finishes: no longer counted.
            Step::Cache(Box::new(p("c", Some("n2"), Some("Succeeded")))),
            // b is deleted before the cache showed it bound.
            Step::Delete("b"),
            // A binding someone else made.
            Step::Cache(Box::new(p("d", Some("n2"), None))),
            Step::Cache(Box::new(p("d", Some("n2"), Some("Running")))),
            Step::Delete("a"),
            Step::Delete("never-seen"),
        ];
        let mut counts = PodCounts::default();
        let mut cache: BTreeMap<String, Pod> = BTreeMap::new();
        let mut ours: HashMap<String, String> = HashMap::new();
        for (i, step) in steps.into_iter().enumerate() {
            match step {
                Step::Cache(pod) => {
                    counts.observe(&pod);
                    let uid = pod.metadata.uid.clone().unwrap_or_default();
                    if pod
                        .spec
                        .as_ref()
                        .and_then(|s| s.node_name.as_ref())
                        .is_some()
                    {
                        ours.remove(&uid);
                    }
                    cache.insert(uid, *pod);
                }
                Step::Delete(uid) => {
                    counts.forget(uid);
                    cache.remove(uid);
                    ours.remove(uid);
                }
                Step::Bind(uid, node) => {
                    counts.assume(uid.into(), node.into());
                    ours.insert(uid.into(), node.into());
                }
            }
            let mut recount: HashMap<String, usize> = HashMap::new();
            for pod in cache.values() {
                let finished = matches!(
                    pod.status.as_ref().and_then(|s| s.phase.as_deref()),
                    Some("Succeeded" | "Failed")
                );
                if let Some(n) = pod.spec.as_ref().and_then(|s| s.node_name.clone())
                    && !finished
                {
                    *recount.entry(n).or_default() += 1;
                }
            }
            for node in ours.values() {
                *recount.entry(node.clone()).or_default() += 1;
            }
            for node in ["n1", "n2"] {
                assert_eq!(
                    counts.on(node),
                    recount.get(node).copied().unwrap_or(0),
                    "step {i}, node {node}"
                );
            }
        }
        assert_eq!(counts.on("n1"), 0);
        assert_eq!(counts.on("n2"), 1);
    }
}
