//! Drives the pure decisions through whole RollingUpdate and Recreate rollouts against a tiny
//! simulated ReplicaSet controller, checking upstream's guarantees at every step:
//! never more than `replicas + maxSurge` pods, never fewer than `replicas - maxUnavailable`
//! available ones (RollingUpdate), never old and new pods together (Recreate), and completion.

use std::collections::BTreeMap;

use crate::FeatureGates;
use crate::plan::cleanup::replica_sets_to_clean_up;
use crate::plan::new_replica_set::{classify_replica_sets, new_replica_set};
use crate::plan::progress::{RolloutStatusPlan, plan_rollout_status};
use crate::plan::recreate::{RecreatePlan, plan_recreate};
use crate::plan::rolling::{RollingPlan, plan_rolling};
use crate::plan::scale::ScaleStep;
use crate::util::annotations::REVISION_ANNOTATION;
use crate::util::strategy::{max_surge, max_unavailable};
use k8s_openapi::api::apps::v1::{
    Deployment, DeploymentSpec, DeploymentStatus, DeploymentStrategy, ReplicaSet, ReplicaSetSpec,
    ReplicaSetStatus, RollingUpdateDeployment,
};
use k8s_openapi::api::core::v1::{Container, PodSpec, PodTemplateSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
use k8s_openapi::apimachinery::pkg::util::intstr::IntOrString;
use k8s_openapi::jiff::Timestamp;

fn template(image: &str) -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(BTreeMap::from([("app".to_string(), "web".to_string())])),
            ..Default::default()
        }),
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "web".into(),
                image: Some(image.into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
    }
}

fn deployment(replicas: i32, strategy: DeploymentStrategy) -> Deployment {
    Deployment {
        metadata: ObjectMeta {
            name: Some("web".into()),
            namespace: Some("default".into()),
            uid: Some("uid-web".into()),
            generation: Some(2),
            ..Default::default()
        },
        spec: DeploymentSpec {
            replicas: Some(replicas),
            revision_history_limit: Some(0),
            progress_deadline_seconds: Some(600),
            selector: LabelSelector {
                match_labels: Some(BTreeMap::from([("app".to_string(), "web".to_string())])),
                ..Default::default()
            },
            strategy: Some(strategy),
            template: template("web:v2"),
            ..Default::default()
        },
        status: Some(DeploymentStatus::default()),
    }
}

fn old_replica_set(replicas: i32) -> ReplicaSet {
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some("web-old".into()),
            namespace: Some("default".into()),
            uid: Some("uid-old".into()),
            creation_timestamp: Some(Time(Timestamp::UNIX_EPOCH)),
            annotations: Some(BTreeMap::from([(
                REVISION_ANNOTATION.to_string(),
                "1".to_string(),
            )])),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(replicas),
            template: Some(template("web:v1")),
            ..Default::default()
        },
        status: Some(ReplicaSetStatus {
            replicas,
            available_replicas: Some(replicas),
            ready_replicas: Some(replicas),
            observed_generation: Some(1),
            terminating_replicas: Some(0),
            ..Default::default()
        }),
    }
}

fn spec_replicas(rs: &ReplicaSet) -> i32 {
    rs.spec.replicas.unwrap_or(0)
}

fn available(rs: &ReplicaSet) -> i32 {
    rs.status
        .as_ref()
        .and_then(|s| s.available_replicas)
        .unwrap_or(0)
}

/// Applies resizes (as if every Update succeeded).
fn apply(rss: &mut [ReplicaSet], steps: &[ScaleStep], d: &Deployment) {
    for step in steps {
        let rs = rss
            .iter_mut()
            .find(|rs| rs.metadata.name.as_deref() == Some(step.rs_name.as_str()))
            .expect("step names an existing ReplicaSet");
        if let Some(updated) = step.outcome(rs, d).update {
            *rs = updated;
        }
    }
}

/// The simulated ReplicaSet controller: pods are created/deleted at once; a new pod becomes
/// available one tick after it was created; removed pods are the unavailable ones first.
fn tick(rss: &mut [ReplicaSet]) {
    for rs in rss.iter_mut() {
        let spec = spec_replicas(rs);
        let status = rs.status.get_or_insert_with(Default::default);
        let before = status.replicas;
        let was_available = status.available_replicas.unwrap_or(0);
        let available = if spec >= before {
            was_available.max(before).min(spec)
        } else {
            was_available.min(spec)
        };
        status.replicas = spec;
        status.available_replicas = Some(available);
        status.ready_replicas = Some(available);
        status.observed_generation = Some(1);
        status.terminating_replicas = Some(0);
    }
}

fn now(i: i64) -> Timestamp {
    Timestamp::from_second(1_700_000_000 + i).expect("valid")
}

fn write_status(d: &mut Deployment, rss: &[ReplicaSet], new_name: Option<&str>, i: i64) {
    let all: Vec<&ReplicaSet> = rss.iter().collect();
    let new_rs = rss
        .iter()
        .find(|rs| rs.metadata.name.as_deref() == new_name);
    if let RolloutStatusPlan::Update(status) =
        plan_rollout_status(&all, new_rs, d, &FeatureGates::default(), now(i))
    {
        d.status = Some(status);
    }
}

fn rolling(surge: IntOrString, unavailable: IntOrString) -> DeploymentStrategy {
    DeploymentStrategy {
        type_: Some("RollingUpdate".into()),
        rolling_update: Some(RollingUpdateDeployment {
            max_surge: Some(surge),
            max_unavailable: Some(unavailable),
        }),
    }
}

#[test]
fn rolling_update_respects_surge_and_availability_and_completes() {
    let values = |v: &[&str]| -> Vec<IntOrString> {
        v.iter()
            .map(|s| match s.parse::<i32>() {
                Ok(n) => IntOrString::Int(n),
                Err(_) => IntOrString::String((*s).to_string()),
            })
            .collect()
    };
    for replicas in [1, 3, 10] {
        for surge in values(&["0", "1", "3", "25%"]) {
            for unavailable in values(&["0", "1", "2", "25%"]) {
                let mut d = deployment(replicas, rolling(surge.clone(), unavailable.clone()));
                let max_total = replicas + max_surge(&d);
                let min_available = replicas - max_unavailable(&d);
                let case = format!("R={replicas} surge={surge:?} unavailable={unavailable:?}");
                let mut rss = vec![old_replica_set(replicas)];
                let mut new_name: Option<String> = None;
                let mut done = false;
                for i in 0..200 {
                    let refs: Vec<&ReplicaSet> = rss.iter().collect();
                    let classified = classify_replica_sets(&d, &refs);
                    if classified.new_rs.is_none() {
                        let created =
                            new_replica_set(&d, &classified.old_rss, &classified.new_revision)
                                .expect("buildable");
                        assert_eq!(
                            created
                                .metadata
                                .annotations
                                .as_ref()
                                .and_then(|a| a.get(REVISION_ANNOTATION))
                                .map(String::as_str),
                            Some("2")
                        );
                        new_name = created.metadata.name.clone();
                        rss.push(created);
                        continue;
                    }
                    let new_rs = classified.new_rs.expect("present").clone();
                    let olds: Vec<ReplicaSet> =
                        classified.old_rss.iter().map(|rs| (*rs).clone()).collect();
                    let old_refs: Vec<&ReplicaSet> = olds.iter().collect();
                    match plan_rolling(&d, &new_rs, &old_refs).expect("valid strategy") {
                        RollingPlan::ScaleNewReplicaSet(step) => apply(&mut rss, &[step], &d),
                        RollingPlan::ScaleDownOldReplicaSets(plan) => {
                            apply(&mut rss, &plan.steps, &d)
                        }
                        RollingPlan::Idle { cleanup } => {
                            if cleanup {
                                let doomed: Vec<String> = replica_sets_to_clean_up(&old_refs, &d)
                                    .iter()
                                    .filter_map(|rs| rs.metadata.name.clone())
                                    .collect();
                                rss.retain(|rs| {
                                    !doomed.contains(
                                        rs.metadata.name.as_ref().unwrap_or(&String::new()),
                                    )
                                });
                                done = true;
                            }
                        }
                    }
                    let total: i32 = rss.iter().map(spec_replicas).sum();
                    assert!(
                        total <= max_total.max(replicas),
                        "{case}: {total} pods > {max_total} at step {i}"
                    );
                    tick(&mut rss);
                    let avail: i32 = rss.iter().map(available).sum();
                    assert!(
                        avail >= min_available.min(replicas),
                        "{case}: {avail} available < {min_available} at step {i}"
                    );
                    write_status(&mut d, &rss, new_name.as_deref(), i);
                    if done {
                        break;
                    }
                }
                assert!(done, "{case}: rollout did not complete");
                assert_eq!(rss.len(), 1, "{case}: old ReplicaSet cleaned up");
                assert_eq!(spec_replicas(&rss[0]), replicas, "{case}");
                assert_eq!(rss[0].metadata.name, new_name, "{case}");
                let status = d.status.clone().unwrap_or_default();
                assert_eq!(status.updated_replicas, Some(replicas), "{case}");
                let progressing = status
                    .conditions
                    .unwrap_or_default()
                    .into_iter()
                    .find(|c| c.type_.as_deref() == Some("Progressing"))
                    .expect("Progressing condition");
                assert_eq!(
                    progressing.reason.as_deref(),
                    Some("NewReplicaSetAvailable"),
                    "{case}"
                );
            }
        }
    }
}

#[test]
fn recreate_never_runs_old_and_new_pods_together() {
    let mut d = deployment(
        4,
        DeploymentStrategy {
            type_: Some("Recreate".into()),
            rolling_update: None,
        },
    );
    let mut rss = vec![old_replica_set(4)];
    let mut new_name: Option<String> = None;
    let mut done = false;
    for i in 0..50 {
        let refs: Vec<&ReplicaSet> = rss.iter().collect();
        let classified = classify_replica_sets(&d, &refs);
        let olds: Vec<ReplicaSet> = classified.old_rss.iter().map(|rs| (*rs).clone()).collect();
        let new_rs = classified.new_rs.cloned();
        let old_refs: Vec<&ReplicaSet> = olds.iter().collect();
        // Pods: one per status replica, phase Running.
        let pods: Vec<(String, &str)> = rss
            .iter()
            .flat_map(|rs| {
                let uid = rs.metadata.uid.clone().unwrap_or_default();
                let n = rs.status.as_ref().map_or(0, |s| s.replicas);
                (0..n).map(move |_| (uid.clone(), "Running"))
            })
            .collect();
        let pod_refs = pods.iter().map(|(uid, phase)| (uid.as_str(), *phase));
        match plan_recreate(&d, new_rs.as_ref(), &old_refs, pod_refs) {
            RecreatePlan::ScaleDownOldReplicaSets(steps) => apply(&mut rss, &steps, &d),
            RecreatePlan::WaitForOldPods => {}
            RecreatePlan::CreateNewReplicaSet => {
                let mut created =
                    new_replica_set(&d, &old_refs, &classified.new_revision).expect("buildable");
                created.metadata.uid = Some("uid-new".into());
                assert_eq!(spec_replicas(&created), 4, "Recreate creates at full size");
                new_name = created.metadata.name.clone();
                rss.push(created);
            }
            RecreatePlan::ScaleUpNewReplicaSet { step, cleanup } => {
                apply(&mut rss, step.as_slice(), &d);
                done = cleanup;
            }
        }
        tick(&mut rss);
        let old_pods: i32 = rss
            .iter()
            .filter(|rs| rs.metadata.name.as_deref() == Some("web-old"))
            .map(|rs| rs.status.as_ref().map_or(0, |s| s.replicas))
            .sum();
        let new_pods: i32 = rss
            .iter()
            .filter(|rs| rs.metadata.name != Some("web-old".into()))
            .map(|rs| rs.status.as_ref().map_or(0, |s| s.replicas))
            .sum();
        assert!(
            old_pods == 0 || new_pods == 0,
            "old and new pods together at step {i}"
        );
        write_status(&mut d, &rss, new_name.as_deref(), i);
        if done {
            break;
        }
    }
    assert!(done, "recreate did not complete");
}
