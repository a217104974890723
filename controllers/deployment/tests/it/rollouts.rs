//! Rollouts driven by the controller with ReplicaSet availability faked by the test,
//! adoption/orphaning, hash collisions and the legacy rollback annotation.

use std::collections::BTreeMap;

use crate::common::*;
use k8s_openapi::api::apps::v1::{ReplicaSet, ReplicaSetSpec};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta};
use kcm_deployment::compute_hash;
use kube::api::PostParams;
use serde_json::json;

/// Sets every ReplicaSet's status to "all desired pods exist and are available".
async fn make_all_available(h: &Harness, rss: &[ReplicaSet]) {
    for rs in rss {
        let n = spec_replicas(rs);
        let st = rs.status.clone().unwrap_or_default();
        if st.replicas != n || st.available_replicas != Some(n) {
            h.fake_rs_status(rs.metadata.name.as_deref().unwrap(), n, n)
                .await;
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rolling_update_respects_surge_and_availability() {
    let h = Harness::start().await;
    let mut d = rolling("web", 4, 1, 0);
    d.spec.revision_history_limit = Some(0);
    let d = h.create(&d).await;
    let old = h.first_replica_set(&d).await;
    let old_name = old.metadata.name.clone().unwrap();
    h.fake_rs_status(&old_name, 4, 4).await;
    wait_until("rollout 1 complete", || async {
        let d = h.get("web").await;
        condition(&d, "Progressing").is_some_and(|c| c.1 == "NewReplicaSetAvailable")
    })
    .await;

    h.set_image("web", "nginx:2").await;
    // Surge: the new ReplicaSet gets exactly maxSurge = 1 while nothing new is available;
    // the old one keeps all 4 (maxUnavailable = 0).
    let new = h.replica_set_with_image(&d, "nginx:2").await;
    let new_name = new.metadata.name.clone().unwrap();
    assert_eq!(spec_replicas(&new), 1);
    assert_eq!(
        annotation(&new.metadata, "deployment.kubernetes.io/revision"),
        Some("2")
    );
    let old = h.replica_sets().get(&old_name).await.unwrap();
    assert_eq!(spec_replicas(&old), 4);

    // Drive it: make whatever exists available, and check the bounds at every step.
    loop {
        let rss = h.owned_replica_sets(&d).await;
        let total: i32 = rss.iter().map(spec_replicas).sum();
        assert!(total <= 5, "surge bound exceeded: {total}");
        let new = rss
            .iter()
            .find(|rs| rs.metadata.name.as_deref() == Some(&new_name));
        let old = rss
            .iter()
            .find(|rs| rs.metadata.name.as_deref() == Some(&old_name));
        if new.is_some_and(|n| spec_replicas(n) == 4) && old.is_none() {
            break;
        }
        make_all_available(&h, &rss).await;
        let before: Vec<(String, i32)> = rss
            .iter()
            .map(|rs| (rs.metadata.name.clone().unwrap(), spec_replicas(rs)))
            .collect();
        wait_until("next rollout step", || async {
            let now: Vec<(String, i32)> = h
                .owned_replica_sets(&d)
                .await
                .iter()
                .map(|rs| (rs.metadata.name.clone().unwrap(), spec_replicas(rs)))
                .collect();
            now != before
        })
        .await;
    }
    // revisionHistoryLimit 0: the drained old ReplicaSet was deleted.
    h.wait_for_event(
        "web",
        "ScalingReplicaSet",
        &format!("Scaled down replica set {old_name} from 1 to 0"),
    )
    .await;
    let d = wait_for("rollout 2 complete", || async {
        let d = h.get("web").await;
        condition(&d, "Progressing")
            .is_some_and(|c| c.1 == "NewReplicaSetAvailable" && c.2.contains(&new_name))
            .then_some(d)
    })
    .await;
    assert_eq!(
        annotation(&d.metadata, "deployment.kubernetes.io/revision"),
        Some("2")
    );
    let st = d.status.unwrap();
    assert_eq!((st.replicas, st.updated_replicas), (Some(4), Some(4)));
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn recreate_scales_old_down_before_creating_new() {
    let h = Harness::start().await;
    let d = h.create(&recreate("web", 2)).await;
    let old = h.first_replica_set(&d).await;
    let old_name = old.metadata.name.clone().unwrap();
    assert_eq!(spec_replicas(&old), 2);
    h.fake_rs_status(&old_name, 2, 2).await;

    h.set_image("web", "nginx:2").await;
    h.wait_scaled_to(&old_name, 0).await;
    h.wait_for_event(
        "web",
        "ScalingReplicaSet",
        &format!("Scaled down replica set {old_name} from 2 to 0"),
    )
    .await;
    // Its pods still "run" (status.replicas = 2): the new ReplicaSet must not exist yet.
    assert_eq!(
        h.owned_replica_sets(&d).await.len(),
        1,
        "new RS created too early"
    );

    h.fake_rs_status(&old_name, 0, 0).await;
    let new = h.replica_set_with_image(&d, "nginx:2").await;
    assert_eq!(spec_replicas(&new), 2);
    h.shutdown().await;
}

fn hand_made_rs(name: &str, app: &str, rs_labels: BTreeMap<String, String>) -> ReplicaSet {
    ReplicaSet {
        metadata: ObjectMeta {
            name: Some(name.into()),
            namespace: Some(NS.into()),
            labels: Some(rs_labels),
            ..Default::default()
        },
        spec: ReplicaSetSpec {
            replicas: Some(0),
            selector: LabelSelector {
                match_labels: Some(labels(app)),
                ..Default::default()
            },
            template: Some(template(app, "nginx:1")),
            ..Default::default()
        },
        status: None,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn adopts_matching_orphan_and_releases_it_when_labels_change() {
    let h = Harness::start().await;
    h.replica_sets()
        .create(
            &PostParams::default(),
            &hand_made_rs("orphan", "web", labels("web")),
        )
        .await
        .expect("create orphan");
    let d = h.create(&rolling("web", 2, 1, 0)).await;
    let uid = d.metadata.uid.clone().unwrap();
    let adopted = wait_for("adoption", || async {
        let rs = h.replica_sets().get("orphan").await.ok()?;
        let r = rs.metadata.owner_references.clone()?.into_iter().next()?;
        (r.uid == uid).then_some((rs, r))
    })
    .await;
    assert_eq!(
        (
            adopted.1.controller,
            adopted.1.block_owner_deletion,
            adopted.1.kind.as_str()
        ),
        (Some(true), Some(true), "Deployment")
    );
    // Same template (ignoring the hash): it is the new ReplicaSet, scaled to 2; none created.
    wait_until("adopted ReplicaSet scaled", || async {
        spec_replicas(&h.replica_sets().get("orphan").await.unwrap()) == 2
    })
    .await;
    assert_eq!(h.owned_replica_sets(&d).await.len(), 1);

    // Labels stop matching: released (ownerReference removed), and a new RS is created.
    let mut rs = h.replica_sets().get("orphan").await.unwrap();
    rs.metadata.labels = Some(labels("other"));
    h.replica_sets()
        .replace("orphan", &PostParams::default(), &rs)
        .await
        .expect("relabel");
    wait_until("release", || async {
        let rs = h.replica_sets().get("orphan").await.unwrap();
        rs.metadata
            .owner_references
            .unwrap_or_default()
            .iter()
            .all(|r| r.uid != uid)
    })
    .await;
    let created = wait_for("replacement ReplicaSet", || async {
        h.owned_replica_sets(&d).await.into_iter().next()
    })
    .await;
    assert_ne!(created.metadata.name.as_deref(), Some("orphan"));
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hash_collision_bumps_collision_count() {
    let h = Harness::start().await;
    let mut d = rolling("web", 1, 1, 0);
    d.spec.paused = Some(true);
    let d = h.create(&d).await;
    // The name the controller will try first, taken by an unrelated ReplicaSet.
    let stored_template = d.spec.template.clone();
    let taken = format!("web-{}", compute_hash(&stored_template, None));
    h.replica_sets()
        .create(
            &PostParams::default(),
            &hand_made_rs(&taken, "squatter", labels("squatter")),
        )
        .await
        .expect("create squatter");
    h.merge_patch("web", json!({"spec": {"paused": false}}))
        .await;
    let d = wait_for("collisionCount 1", || async {
        let d = h.get("web").await;
        (d.status.as_ref()?.collision_count == Some(1)).then_some(d)
    })
    .await;
    let expected = format!("web-{}", compute_hash(&stored_template, Some(1)));
    let rs = wait_for("ReplicaSet with the bumped hash", || async {
        h.owned_replica_sets(&d).await.into_iter().next()
    })
    .await;
    assert_eq!(rs.metadata.name.as_deref(), Some(expected.as_str()));
    let squatter = h.replica_sets().get(&taken).await.unwrap();
    assert!(squatter.metadata.owner_references.is_none());
    h.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rollback_annotation_restores_previous_template() {
    let h = Harness::start().await;
    let d = h.create(&rolling("web", 1, 1, 0)).await;
    let first = h.first_replica_set(&d).await;
    h.fake_rs_status(first.metadata.name.as_deref().unwrap(), 1, 1)
        .await;
    h.set_image("web", "nginx:2").await;
    wait_until("revision 2", || async {
        annotation(
            &h.get("web").await.metadata,
            "deployment.kubernetes.io/revision",
        ) == Some("2")
    })
    .await;
    h.merge_patch(
        "web",
        json!({"metadata": {"annotations": {"deprecated.deployment.rollback.to": "1"}}}),
    )
    .await;
    let d = wait_for("rolled back template", || async {
        let d = h.get("web").await;
        let img = d.spec.template.spec.as_ref()?.containers[0].image.clone();
        (img.as_deref() == Some("nginx:1")).then_some(d)
    })
    .await;
    assert_eq!(
        annotation(&d.metadata, "deprecated.deployment.rollback.to"),
        None
    );
    h.wait_for_event(
        "web",
        "DeploymentRollback",
        "Rolled back deployment \"web\" to revision 1",
    )
    .await;
    h.shutdown().await;
}
