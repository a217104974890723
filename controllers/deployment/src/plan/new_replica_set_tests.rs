use super::*;
use crate::testing::{
    at, int, recreate_deployment, rolling_deployment, rs, spec_mut, status_mut, with_annotation,
};
use crate::util::annotations::{
    DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION, REVISION_HISTORY_ANNOTATION,
};
use crate::util::conditions::{DEPLOYMENT_PROGRESSING, reason_of};
use crate::util::fields::rs_replicas;

fn rs_matching(d: &Deployment, name: &str, replicas: i32, created: i64) -> ReplicaSet {
    let mut r = rs(name, replicas, 0, created);
    r.spec.template = Some(deployment_template(d));
    r
}

#[test]
fn test_generate_replica_set_name() {
    let cases = [
        (
            "short name",
            "my-deployment".to_string(),
            "abcde12345".to_string(),
            "my-deployment-abcde12345".to_string(),
        ),
        (
            "maximum length without truncating",
            "a".repeat(242),
            "abcde12345".into(),
            format!("{}-abcde12345", "a".repeat(242)),
        ),
        (
            "very long deployment name is truncated",
            "b".repeat(250),
            "abcde12345".into(),
            format!("{}-abcde12345", "b".repeat(242)),
        ),
        (
            "very long hash is not truncated",
            "d".repeat(252),
            "h".repeat(252),
            format!("{}-{}", "d".repeat(252), "h".repeat(252)),
        ),
    ];
    for (name, d, h, want) in cases {
        assert_eq!(generate_replica_set_name(&d, &h), want, "{name}");
    }
}

#[test]
fn classify_replica_sets_revisions() {
    let d = rolling_deployment("foo", 3, Some(int(1)), Some(int(0)));
    let old1 = with_annotation(rs("foo-a", 0, 0, 10), REVISION_ANNOTATION, "1");
    let old3 = with_annotation(rs("foo-b", 2, 0, 20), REVISION_ANNOTATION, "3");
    let new_rs = with_annotation(rs_matching(&d, "foo-c", 1, 30), REVISION_ANNOTATION, "2");
    let c = classify_replica_sets(&d, &[&new_rs, &old3, &old1]);
    assert_eq!(c.new_rs.map(|r| name_of(&r.metadata)), Some("foo-c"));
    assert_eq!(
        c.old_rss
            .iter()
            .map(|r| name_of(&r.metadata))
            .collect::<Vec<_>>(),
        ["foo-a", "foo-b"]
    );
    assert_eq!(c.new_revision, "4");
    assert_eq!(c.old_rss.len() + usize::from(c.new_rs.is_some()), 3);
    let c = classify_replica_sets(&d, &[]);
    assert_eq!((c.new_rs, c.new_revision.as_str()), (None, "1"));
}

#[test]
fn new_replica_set_object() {
    let mut d = rolling_deployment("foo", 3, Some(int(1)), Some(int(0)));
    spec_mut(&mut d).min_ready_seconds = Some(5);
    d.metadata.labels = Some(crate::testing::labels(&[("deployment-only", "x")]));
    d.metadata
        .annotations
        .get_or_insert_with(Default::default)
        .insert("kubernetes.io/change-cause".into(), "v2".into());
    let old = rs("foo-old", 3, 3, 0);
    let created = new_replica_set(&d, &[&old], "2").expect("builds");
    let hash = compute_hash(&deployment_template(&d), None);
    assert_eq!(
        created.metadata.name.as_deref(),
        Some(format!("foo-{hash}").as_str())
    );
    assert_eq!(created.metadata.namespace.as_deref(), Some("default"));
    let labels = created.metadata.labels.clone().unwrap_or_default();
    assert_eq!(labels.get(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY), Some(&hash));
    assert_eq!(labels.get("foo").map(String::as_str), Some("bar"));
    assert!(!labels.contains_key("deployment-only"));
    let spec = created.spec.clone();
    assert_eq!(
        spec.selector
            .match_labels
            .unwrap_or_default()
            .get(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY),
        Some(&hash)
    );
    assert_eq!(spec.min_ready_seconds, Some(5));
    let t_labels = spec
        .template
        .and_then(|t| t.metadata)
        .and_then(|m| m.labels)
        .unwrap_or_default();
    assert_eq!(t_labels, labels);
    // 3 old + 0 new, max 4 -> room 1.
    assert_eq!(rs_replicas(&created), 1);
    let owner = created
        .metadata
        .owner_references
        .clone()
        .unwrap_or_default();
    assert_eq!(owner, vec![new_controller_ref(&d)]);
    assert_eq!(
        (owner[0].controller, owner[0].block_owner_deletion),
        (Some(true), Some(true))
    );
    assert_eq!(
        (owner[0].kind.as_str(), owner[0].api_version.as_str()),
        ("Deployment", "apps/v1")
    );
    let a = created.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(a.get(REVISION_ANNOTATION).map(String::as_str), Some("2"));
    assert_eq!(
        a.get(DESIRED_REPLICAS_ANNOTATION).map(String::as_str),
        Some("3")
    );
    assert_eq!(
        a.get(MAX_REPLICAS_ANNOTATION).map(String::as_str),
        Some("4")
    );
    assert_eq!(
        a.get("kubernetes.io/change-cause").map(String::as_str),
        Some("v2")
    );
    // The template of the new RS still equals the deployment's, ignoring the hash.
    assert!(equal_ignore_hash(
        &rs_template(&created),
        &deployment_template(&d)
    ));
    // A collision count changes the hash and thus the name.
    status_mut(&mut d).collision_count = Some(1);
    let other = new_replica_set(&d, &[&old], "2").expect("builds");
    assert_ne!(other.metadata.name, created.metadata.name);
}

#[test]
fn new_replica_set_recreate_and_errors() {
    let d = recreate_deployment("foo", 4);
    assert_eq!(
        new_replica_set(&d, &[], "1").map(|r| rs_replicas(&r)),
        Ok(4)
    );
    let d = rolling_deployment("foo", 4, None, Some(int(1)));
    assert_eq!(
        new_replica_set(&d, &[], "1").map(|r| rs_replicas(&r)),
        Err(DeploymentError::NilIntOrString)
    );
}

#[test]
fn existing_new_replica_set_decisions() {
    let mut d = rolling_deployment("foo", 3, Some(int(1)), Some(int(0)));
    spec_mut(&mut d).progress_deadline_seconds = Some(600);
    // Revision raised -> update RS (history records the old revision).
    let reused = with_annotation(rs_matching(&d, "foo-1", 0, 0), REVISION_ANNOTATION, "1");
    match plan_existing_new_replica_set(&d, &reused, "4", at(0)) {
        ExistingNewReplicaSetAction::UpdateReplicaSet(r) => {
            let a = r.metadata.annotations.unwrap_or_default();
            assert_eq!(a.get(REVISION_ANNOTATION).map(String::as_str), Some("4"));
            assert_eq!(
                a.get(REVISION_HISTORY_ANNOTATION).map(String::as_str),
                Some("1")
            );
        }
        other => panic!("unexpected {other:?}"),
    }
    // minReadySeconds drift -> update RS.
    spec_mut(&mut d).min_ready_seconds = Some(7);
    let current = with_annotation(rs_matching(&d, "foo-1", 3, 0), REVISION_ANNOTATION, "4");
    match plan_existing_new_replica_set(&d, &current, "4", at(0)) {
        ExistingNewReplicaSetAction::UpdateReplicaSet(r) => {
            assert_eq!(r.spec.min_ready_seconds, Some(7));
        }
        other => panic!("unexpected {other:?}"),
    }
    // In sync: the deployment gets the RS's revision and FoundNewReplicaSet.
    spec_mut(&mut d).min_ready_seconds = None;
    match plan_existing_new_replica_set(&d, &current, "4", at(9)) {
        ExistingNewReplicaSetAction::UpdateDeploymentStatus(nd) => {
            assert_eq!(annotation(&nd.metadata, REVISION_ANNOTATION), Some("4"));
            let c = get_deployment_condition(
                &nd.status.clone().unwrap_or_default(),
                DEPLOYMENT_PROGRESSING,
            )
            .expect("Progressing");
            assert_eq!(
                (c.status.as_deref().unwrap_or_default(), reason_of(&c)),
                (CONDITION_TRUE, FOUND_NEW_RS_REASON)
            );
            assert_eq!(
                c.message.as_deref(),
                Some("Found new replica set \"foo-1\"")
            );
            // Second pass with the stored result: nothing.
            assert_eq!(
                plan_existing_new_replica_set(&nd, &current, "4", at(10)),
                ExistingNewReplicaSetAction::Nothing
            );
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn already_exists_resolution() {
    let d = rolling_deployment("foo", 3, Some(int(1)), Some(int(0)));
    let mut ours = rs_matching(&d, "foo-x", 0, 0);
    ours.metadata.owner_references = Some(vec![new_controller_ref(&d)]);
    assert_eq!(
        on_new_replica_set_already_exists(&d, &ours),
        AlreadyExistsResolution::Ours
    );
    // Same template but another owner: collision.
    let mut foreign = ours.clone();
    if let Some(r) = foreign.metadata.owner_references.as_mut() {
        r[0].uid = "someone-else".into();
    }
    match on_new_replica_set_already_exists(&d, &foreign) {
        AlreadyExistsResolution::HashCollision(nd) => {
            assert_eq!(nd.status.and_then(|s| s.collision_count), Some(1));
        }
        other => panic!("unexpected {other:?}"),
    }
    // Ours by owner but different template: collision, count incremented from 1 to 2.
    let mut d2 = d.clone();
    status_mut(&mut d2).collision_count = Some(1);
    let mut stale = rs("foo-x", 0, 0, 0);
    stale.metadata.owner_references = Some(vec![new_controller_ref(&d)]);
    match on_new_replica_set_already_exists(&d2, &stale) {
        AlreadyExistsResolution::HashCollision(nd) => {
            assert_eq!(nd.status.and_then(|s| s.collision_count), Some(2))
        }
        other => panic!("unexpected {other:?}"),
    }
}

#[test]
fn create_failure_and_after_create() {
    let mut d = rolling_deployment("foo", 3, Some(int(1)), Some(int(0)));
    let f = on_new_replica_set_create_failed(&d, "foo-abc", "quota exceeded", at(1));
    assert_eq!(f.status_update, None);
    assert_eq!(f.event.type_, EventType::Warning);
    assert_eq!(f.event.reason, "ReplicaSetCreateError");
    assert_eq!(
        f.event.message,
        "Failed to create new replica set \"foo-abc\": quota exceeded"
    );
    spec_mut(&mut d).progress_deadline_seconds = Some(600);
    let f = on_new_replica_set_create_failed(&d, "foo-abc", "quota exceeded", at(1));
    let s = f.status_update.and_then(|d| d.status).unwrap_or_default();
    let c = get_deployment_condition(&s, DEPLOYMENT_PROGRESSING).expect("Progressing");
    assert_eq!(
        (c.status.as_deref().unwrap_or_default(), reason_of(&c)),
        (CONDITION_FALSE, FAILED_RS_CREATE_REASON)
    );

    let created = new_replica_set(&d, &[], "1").expect("builds");
    let a = after_new_replica_set_created(&d, &created, "1", true, at(2));
    assert_eq!(
        a.event.map(|e| e.message),
        Some(format!(
            "Scaled up replica set {} from 0 to 3",
            name_of(&created.metadata)
        ))
    );
    let nd = a.status_update.expect("revision + condition");
    assert_eq!(annotation(&nd.metadata, REVISION_ANNOTATION), Some("1"));
    let c = get_deployment_condition(
        &nd.status.clone().unwrap_or_default(),
        DEPLOYMENT_PROGRESSING,
    )
    .expect("Progressing");
    assert_eq!(reason_of(&c), NEW_REPLICA_SET_REASON);
    assert_eq!(
        c.message,
        Some(format!(
            "Created new replica set \"{}\"",
            name_of(&created.metadata)
        ))
    );
    // Adopted after AlreadyExists with the revision already set: nothing.
    let a = after_new_replica_set_created(&nd, &created, "1", false, at(3));
    assert_eq!(
        a,
        AfterCreate {
            event: None,
            status_update: None
        }
    );
}
