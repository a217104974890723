//! The Deployment side of the ports of upstream's integration tests: the fixture Deployment and
//! a tester that reads it as upstream's `deploymentTester` and `test/utils` do (the new and old
//! ReplicaSets as `deploymentutil` finds them, revision and image, completion, conditions and
//! status counts). Each wait polls the API through kubectl until [`Ctx::timeout`].

use anyhow::{Context, bail, ensure};
use serde_json::{Value, json};

use super::ported_support::{
    container, controller_of, create, int, items, merge_patch, name, pods, selector_of, uid,
};
use super::{Ctx, Observer, Rollout, complete, watch};
use crate::cluster::wait_for;

/// The label every ReplicaSet and pod of a Deployment gets from it.
pub(super) const HASH_LABEL: &str = "pod-template-hash";
/// The revision annotation on Deployments and ReplicaSets.
pub(super) const REVISION: &str = "deployment.kubernetes.io/revision";
/// The desired-replicas annotation on ReplicaSets.
pub(super) const DESIRED_REPLICAS: &str = "deployment.kubernetes.io/desired-replicas";

/// The label map of upstream's fixtures, used as selector and template labels.
pub(super) fn test_labels() -> Value {
    json!({"name": "test"})
}

/// Upstream's `newDeployment`: `replicas` pods of one container, selector `name=test`, the
/// RollingUpdate strategy with its defaults (25 % / 25 %).
pub(super) fn new_deployment(name: &str, replicas: i64, image: &str) -> Value {
    json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": test_labels()},
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {}},
            "template": {"metadata": {"labels": test_labels()},
                         "spec": {"containers": [container(image)]}}
        }
    })
}

/// A template's pods with the hash label removed: upstream's `EqualIgnoreHash` compares these.
fn without_hash(template: &Value) -> Value {
    let mut t = template.clone();
    if let Some(labels) = t["metadata"]["labels"].as_object_mut() {
        labels.remove(HASH_LABEL);
    }
    t
}

/// The condition of `type_` in an object's status.
pub(super) fn condition(o: &Value, type_: &str) -> Option<Value> {
    o["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .cloned()
}

/// The status counts upstream's `checkDeploymentStatusReplicasFields` compares, with
/// `terminatingReplicas` as `None` when the field is absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Counts {
    pub replicas: i64,
    pub updated: i64,
    pub ready: i64,
    pub available: i64,
    pub unavailable: i64,
    pub terminating: Option<i64>,
}

impl Counts {
    fn of(d: &Value) -> Counts {
        let s = &d["status"];
        Counts {
            replicas: int(&s["replicas"]),
            updated: int(&s["updatedReplicas"]),
            ready: int(&s["readyReplicas"]),
            available: int(&s["availableReplicas"]),
            unavailable: int(&s["unavailableReplicas"]),
            terminating: s["terminatingReplicas"].as_i64(),
        }
    }
}

/// One Deployment under test, by namespace and name.
pub(super) struct Tester<'a, 'c> {
    pub c: &'a Ctx<'c>,
    pub ns: String,
    pub name: String,
}

impl<'a, 'c> Tester<'a, 'c> {
    /// Creates `manifest` in `ns` and returns its tester.
    pub fn create(c: &'a Ctx<'c>, ns: &str, manifest: Value) -> anyhow::Result<Self> {
        let d = create(c, ns, &[manifest])?
            .pop()
            .context("kubectl created no Deployment")?;
        Ok(Tester {
            c,
            ns: ns.into(),
            name: name(&d),
        })
    }

    /// The Deployment as the server has it now.
    pub fn get(&self) -> anyhow::Result<Value> {
        self.c.get_json(&["deployment", &self.name, "-n", &self.ns])
    }

    /// `deployment/<name>`, for kubectl.
    pub fn target(&self) -> String {
        format!("deployment/{}", self.name)
    }

    /// The ReplicaSets labelled with the Deployment's selector and controlled by it, oldest
    /// first (upstream's `ListReplicaSets`, sorted as `FindNewReplicaSet` sorts them).
    pub fn replica_sets(&self, d: &Value) -> anyhow::Result<Vec<Value>> {
        let selector = selector_of(&d["spec"]["selector"]["matchLabels"]);
        let list = self
            .c
            .get_json(&["replicasets", "-n", &self.ns, "-l", &selector])?;
        let owner = uid(d);
        let mut owned: Vec<Value> = items(&list)
            .into_iter()
            .filter(|rs| controller_of(rs).is_some_and(|r| r["uid"] == owner.as_str()))
            .collect();
        owned.sort_by_key(|rs| {
            (
                rs["metadata"]["creationTimestamp"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                name(rs),
            )
        });
        Ok(owned)
    }

    /// The new ReplicaSet: the oldest whose template is the Deployment's, hash label aside.
    pub fn new_rs(&self) -> anyhow::Result<Option<Value>> {
        let d = self.get()?;
        let want = without_hash(&d["spec"]["template"]);
        Ok(self
            .replica_sets(&d)?
            .into_iter()
            .find(|rs| without_hash(&rs["spec"]["template"]) == want))
    }

    /// The new ReplicaSet, which must exist.
    pub fn expect_new_rs(&self) -> anyhow::Result<Value> {
        self.new_rs()?
            .with_context(|| format!("expected Deployment {} to have a new ReplicaSet", self.name))
    }

    /// Fails when a new ReplicaSet exists.
    pub fn expect_no_new_rs(&self) -> anyhow::Result<()> {
        if let Some(rs) = self.new_rs()? {
            bail!(
                "expected Deployment {} not to create a new ReplicaSet, got {}",
                self.name,
                name(&rs)
            );
        }
        Ok(())
    }

    /// Every ReplicaSet of the Deployment other than the new one (upstream's `allOldRSs`).
    pub fn old_rss(&self) -> anyhow::Result<Vec<Value>> {
        let d = self.get()?;
        let want = without_hash(&d["spec"]["template"]);
        let all = self.replica_sets(&d)?;
        let new_uid = all
            .iter()
            .find(|rs| without_hash(&rs["spec"]["template"]) == want)
            .map(uid);
        Ok(all
            .into_iter()
            .filter(|rs| Some(uid(rs)) != new_uid)
            .collect())
    }

    /// Waits until the Deployment and its new ReplicaSet (with the hash in its selector) carry
    /// `revision` and run `image` (upstream's `WaitForDeploymentRevisionAndImage`).
    pub fn wait_revision_and_image(&self, revision: &str, image: &str) -> anyhow::Result<()> {
        let has_image = |o: &Value| {
            o["spec"]["template"]["spec"]["containers"]
                .as_array()
                .is_some_and(|cs| cs.iter().any(|c| c["image"] == image))
        };
        let mut last = String::new();
        let outcome = wait_for(
            &format!("revision {revision} and image {image}"),
            self.c.timeout(),
            || {
                let d = self.get()?;
                let Some(rs) = self.new_rs()? else {
                    last = "no new ReplicaSet yet".into();
                    return Ok(None);
                };
                last = format!(
                    "deployment revision {} image ok {}, ReplicaSet {} revision {} image ok {} hash in selector {}",
                    d["metadata"]["annotations"][REVISION],
                    has_image(&d),
                    name(&rs),
                    rs["metadata"]["annotations"][REVISION],
                    has_image(&rs),
                    rs["spec"]["selector"]["matchLabels"][HASH_LABEL].is_string()
                );
                let ok = rs["spec"]["selector"]["matchLabels"][HASH_LABEL].is_string()
                    && d["metadata"]["annotations"][REVISION] == revision
                    && rs["metadata"]["annotations"][REVISION] == revision
                    && has_image(&d)
                    && has_image(&rs);
                Ok(ok.then_some(()))
            },
        );
        outcome.with_context(|| format!("Deployment {}: {last}", self.name))
    }

    /// Waits until the Deployment is complete: its generation observed and every replica
    /// updated and available (upstream's `WaitForDeploymentComplete`). The pods are made Ready
    /// by the kubelets: these templates are not held.
    pub fn wait_complete(&self) -> anyhow::Result<()> {
        let (c, ns, n) = (self.c, &self.ns, &self.name);
        wait_for(&format!("Deployment {n} to complete"), c.timeout(), || {
            Ok(complete(c, ns, n)?.then_some(()))
        })
        .with_context(|| {
            format!(
                "last status: {}",
                self.get().map(|d| d["status"].clone()).unwrap_or_default()
            )
        })
    }

    /// [`Tester::wait_complete`] checking at every poll that the rollout keeps within maxSurge
    /// and maxUnavailable (`surge`, `unavailable` as pod counts), as upstream's
    /// `WaitForDeploymentCompleteAndCheckRolling`; the samples go to `obs`.
    pub fn wait_complete_rolling(
        &self,
        obs: &mut Observer,
        surge: i64,
        unavailable: i64,
    ) -> anyhow::Result<()> {
        let r = Rollout {
            ns: self.ns.clone(),
            name: self.name.clone(),
            max_surge: surge,
            max_unavailable: unavailable,
            recreate: false,
        };
        let (ns, n) = (&self.ns, &self.name);
        watch(self.c, &r, obs, true, |c| complete(c, ns, n))
    }

    /// Applies a merge patch to the Deployment; returns its generation after the write.
    pub fn update(&self, patch: Value) -> anyhow::Result<i64> {
        merge_patch(self.c, &self.ns, &self.target(), &patch)?;
        Ok(int(&self.get()?["metadata"]["generation"]))
    }

    /// Waits until the controller has observed `generation`.
    pub fn wait_observed(&self, generation: i64) -> anyhow::Result<()> {
        wait_for(
            &format!(
                "Deployment {} to observe generation {generation}",
                self.name
            ),
            self.c.timeout(),
            || Ok((int(&self.get()?["status"]["observedGeneration"]) >= generation).then_some(())),
        )
    }

    /// Waits until the current generation is observed with at least `min` updated replicas.
    pub fn wait_updated_at_least(&self, min: i64) -> anyhow::Result<()> {
        wait_for(
            &format!("Deployment {} to have {min} updated replicas", self.name),
            self.c.timeout(),
            || {
                let d = self.get()?;
                let ok = int(&d["status"]["observedGeneration"])
                    >= int(&d["metadata"]["generation"])
                    && int(&d["status"]["updatedReplicas"]) >= min;
                Ok(ok.then_some(()))
            },
        )
    }

    /// Waits until condition `type_` has `reason`, then checks its message; returns it.
    pub fn wait_condition(
        &self,
        type_: &str,
        reason: &str,
        message: &str,
    ) -> anyhow::Result<Value> {
        let cond = wait_for(
            &format!("Deployment {} condition {type_} reason {reason}", self.name),
            self.c.timeout(),
            || Ok(condition(&self.get()?, type_).filter(|c| c["reason"] == reason)),
        )?;
        ensure!(
            cond["message"] == message,
            "condition {type_} ({reason}) of Deployment {}: message {}, want {message:?}",
            self.name,
            cond["message"]
        );
        Ok(cond)
    }

    /// Checks the status counts now (upstream's `checkDeploymentStatusReplicasFields`).
    pub fn check_counts(&self, want: Counts) -> anyhow::Result<()> {
        let got = Counts::of(&self.get()?);
        ensure!(
            got == want,
            "Deployment {} status counts: got {got:?}, want {want:?}",
            self.name
        );
        Ok(())
    }

    /// Waits until `readyReplicas` equals `spec.replicas`.
    pub fn wait_ready_replicas(&self) -> anyhow::Result<()> {
        wait_for(
            &format!("Deployment {} to have every replica ready", self.name),
            self.c.timeout(),
            || {
                let d = self.get()?;
                Ok(
                    (int(&d["status"]["readyReplicas"]) == int(&d["spec"]["replicas"]))
                        .then_some(()),
                )
            },
        )
    }

    /// The names of the pods the new ReplicaSet controls (upstream's `listUpdatedPods`).
    pub fn updated_pods(&self) -> anyhow::Result<Vec<String>> {
        let d = self.get()?;
        let rs = self.expect_new_rs()?;
        let pods = pods(
            self.c,
            &self.ns,
            &selector_of(&d["spec"]["selector"]["matchLabels"]),
        )?;
        Ok(pods
            .iter()
            .filter(|p| controller_of(p).is_some_and(|r| r["uid"] == uid(&rs).as_str()))
            .map(name)
            .collect())
    }

    /// Upstream's `scaleDeployment`: sets `spec.replicas`, waits for completion, and checks the
    /// new ReplicaSet has the same count.
    pub fn scale(&self, replicas: i64) -> anyhow::Result<()> {
        self.update(json!({"spec": {"replicas": replicas}}))?;
        self.wait_complete()?;
        let rs = self.expect_new_rs()?;
        ensure!(
            int(&rs["spec"]["replicas"]) == replicas,
            "expected new ReplicaSet {} to have {replicas} replicas, got {}",
            name(&rs),
            rs["spec"]["replicas"]
        );
        Ok(())
    }
}
