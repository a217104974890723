use std::collections::BTreeMap;

use super::*;
use crate::testing::{int, rolling_deployment, rs, with_annotation};
use crate::util::sizing::is_saturated;

fn ann(r: &ReplicaSet, k: &str) -> Option<String> {
    r.metadata.annotations.as_ref()?.get(k).cloned()
}

#[test]
fn test_annotation_utils() {
    let mut d = rolling_deployment("nginx", 1, Some(int(1)), Some(int(0)));
    let mut r = rs("nginx-rs", 0, 0, 0);
    d.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert(REVISION_ANNOTATION.into(), "1".into());

    // SetNewReplicaSetAnnotations: revisions 11 ..= 20 with a 5-character history limit.
    for i in 10..20 {
        let next = (i + 1).to_string();
        set_new_replica_set_annotations(&d, &mut r, &next, true, 5);
        if i >= 12 {
            assert_eq!(
                ann(&r, REVISION_HISTORY_ANNOTATION).as_deref(),
                Some(format!("{},{}", i - 1, i).as_str()),
                "history after revision {next}"
            );
        }
        assert_eq!(ann(&r, REVISION_ANNOTATION).as_deref(), Some(next.as_str()));
    }

    // SetReplicasAnnotations
    assert!(set_replicas_annotations(&mut r, 10, 11));
    assert_eq!(ann(&r, DESIRED_REPLICAS_ANNOTATION).as_deref(), Some("10"));
    assert_eq!(ann(&r, MAX_REPLICAS_ANNOTATION).as_deref(), Some("11"));
    assert!(!set_replicas_annotations(&mut r, 10, 11));

    // IsSaturated
    let mut r = with_annotation(rs("nginx-rs", 1, 1, 0), DESIRED_REPLICAS_ANNOTATION, "1");
    assert!(is_saturated(&d, Some(&r)));
    r = with_annotation(r, DESIRED_REPLICAS_ANNOTATION, "2");
    assert!(!is_saturated(&d, Some(&r)));
    assert!(!is_saturated(&d, None));
}

#[test]
fn test_replicas_annotations_need_update() {
    let base = rs("hello", 1, 0, 0);
    let cases = [
        ("test Annotations nil", base.clone(), true),
        (
            "test desiredReplicas update",
            with_annotation(
                with_annotation(base.clone(), DESIRED_REPLICAS_ANNOTATION, "8"),
                MAX_REPLICAS_ANNOTATION,
                "20",
            ),
            true,
        ),
        (
            "test maxReplicas update",
            with_annotation(
                with_annotation(base.clone(), DESIRED_REPLICAS_ANNOTATION, "10"),
                MAX_REPLICAS_ANNOTATION,
                "16",
            ),
            true,
        ),
        (
            "test needn't update",
            with_annotation(
                with_annotation(base.clone(), DESIRED_REPLICAS_ANNOTATION, "10"),
                MAX_REPLICAS_ANNOTATION,
                "20",
            ),
            false,
        ),
    ];
    for (name, r, want) in cases {
        assert_eq!(replicas_annotations_need_update(&r, 10, 20), want, "{name}");
    }
}

#[test]
fn test_get_non_negative_int32_from_annotation() {
    let cases: [(&str, Option<&str>, Option<i32>); 9] = [
        ("invalid empty", None, None),
        ("invalid", Some("invalid"), None),
        ("invalid negative ", Some("-1"), None),
        ("valid zero", Some("0"), Some(0)),
        ("valid", Some("13"), Some(13)),
        ("valid max", Some("2147483647"), Some(i32::MAX)),
        ("invalid max out of range", Some("2147483648"), None),
        ("invalid max out of range 2", Some("4294967296"), None),
        ("plus sign rejected", Some("+5"), None),
    ];
    for (name, value, want) in cases {
        let mut r = with_annotation(rs("r", 1, 0, 0), "foo", "2");
        if let Some(v) = value {
            r = with_annotation(r, "test", v);
        }
        assert_eq!(
            non_negative_int32_from_annotation(&r.metadata, "test"),
            want,
            "{name}"
        );
    }
}

#[test]
fn revision_parsing_and_max_last() {
    let r1 = with_annotation(rs("a", 0, 0, 0), REVISION_ANNOTATION, "1");
    let r3 = with_annotation(rs("b", 0, 0, 1), REVISION_ANNOTATION, "3");
    let r3b = with_annotation(rs("c", 0, 0, 2), REVISION_ANNOTATION, "3");
    let bad = with_annotation(rs("d", 0, 0, 3), REVISION_ANNOTATION, "x");
    let empty = with_annotation(rs("e", 0, 0, 3), REVISION_ANNOTATION, "");
    let none = rs("f", 0, 0, 4);
    assert_eq!(revision(&r3.metadata), Ok(3));
    assert_eq!(revision(&none.metadata), Ok(0));
    assert!(revision(&bad.metadata).is_err());
    assert!(revision(&empty.metadata).is_err());
    assert_eq!(max_revision(&[&r1, &r3, &bad, &none]), 3);
    assert_eq!(max_revision(&[]), 0);
    assert_eq!(last_revision(&[&r1, &r3, &bad, &none]), 1);
    assert_eq!(last_revision(&[&r3, &r3b]), 3);
    assert_eq!(last_revision(&[&r3]), 0);
}

#[test]
fn copy_annotations_respects_skip_list() {
    let mut d = rolling_deployment("web", 3, Some(int(1)), Some(int(0)));
    let a = d.metadata.annotations.get_or_insert_with(BTreeMap::new);
    a.insert(LAST_APPLIED_CONFIG_ANNOTATION.into(), "{}".into());
    a.insert(REVISION_ANNOTATION.into(), "7".into());
    a.insert(DESIRED_REPLICAS_ANNOTATION.into(), "99".into());
    a.insert(DEPRECATED_ROLLBACK_TO.into(), "2".into());
    a.insert(CHANGE_CAUSE_ANNOTATION.into(), "kubectl set image".into());
    a.insert("team".into(), "a".into());
    let mut r = rs("web-1", 0, 0, 0);
    assert!(copy_deployment_annotations_to_replica_set(&d, &mut r));
    let got = r.metadata.annotations.clone().unwrap_or_default();
    let want: BTreeMap<String, String> = [
        (
            CHANGE_CAUSE_ANNOTATION.to_string(),
            "kubectl set image".to_string(),
        ),
        ("team".to_string(), "a".to_string()),
    ]
    .into_iter()
    .collect();
    assert_eq!(got, want);
    assert!(!copy_deployment_annotations_to_replica_set(&d, &mut r));
}

#[test]
fn set_new_replica_set_annotations_for_created_rs() {
    let d = rolling_deployment("web", 10, Some(int(3)), Some(int(2)));
    let mut r = rs("web-1", 0, 0, 0);
    assert!(set_new_replica_set_annotations(
        &d,
        &mut r,
        "1",
        false,
        MAX_REV_HISTORY_LENGTH_IN_CHARS
    ));
    assert_eq!(ann(&r, REVISION_ANNOTATION).as_deref(), Some("1"));
    assert_eq!(ann(&r, DESIRED_REPLICAS_ANNOTATION).as_deref(), Some("10"));
    assert_eq!(ann(&r, MAX_REPLICAS_ANNOTATION).as_deref(), Some("13"));
    assert_eq!(ann(&r, REVISION_HISTORY_ANNOTATION), None);
}

#[test]
fn set_new_replica_set_annotations_reuse_builds_history() {
    let d = rolling_deployment("web", 1, None, None);
    let mut r = with_annotation(rs("web-1", 0, 0, 0), REVISION_ANNOTATION, "1");
    assert!(set_new_replica_set_annotations(
        &d,
        &mut r,
        "4",
        true,
        MAX_REV_HISTORY_LENGTH_IN_CHARS
    ));
    assert_eq!(ann(&r, REVISION_ANNOTATION).as_deref(), Some("4"));
    assert_eq!(ann(&r, REVISION_HISTORY_ANNOTATION).as_deref(), Some("1"));
    assert!(set_new_replica_set_annotations(
        &d,
        &mut r,
        "6",
        true,
        MAX_REV_HISTORY_LENGTH_IN_CHARS
    ));
    assert_eq!(ann(&r, REVISION_HISTORY_ANNOTATION).as_deref(), Some("1,4"));
    // Never lowered, nothing changes.
    assert!(!set_new_replica_set_annotations(
        &d,
        &mut r,
        "5",
        true,
        MAX_REV_HISTORY_LENGTH_IN_CHARS
    ));
    assert_eq!(ann(&r, REVISION_ANNOTATION).as_deref(), Some("6"));
    // Existing RS never gets replica annotations from this function.
    assert_eq!(ann(&r, DESIRED_REPLICAS_ANNOTATION), None);
}

#[test]
fn set_new_replica_set_annotations_invalid_revisions() {
    let mut d = rolling_deployment("web", 1, None, None);
    d.metadata
        .annotations
        .get_or_insert_with(BTreeMap::new)
        .insert("team".into(), "a".into());
    let mut r = with_annotation(rs("web-1", 0, 0, 0), REVISION_ANNOTATION, "garbage");
    // Copy step changed things, but the invalid old revision makes it report false.
    assert!(!set_new_replica_set_annotations(
        &d, &mut r, "2", true, 2000
    ));
    assert_eq!(ann(&r, "team").as_deref(), Some("a"));
    assert_eq!(ann(&r, REVISION_ANNOTATION).as_deref(), Some("garbage"));
    let mut r = rs("web-2", 0, 0, 0);
    assert!(!set_new_replica_set_annotations(
        &d, &mut r, "x", true, 2000
    ));
}

#[test]
fn set_deployment_revision_reports_change() {
    let mut d = rolling_deployment("web", 1, None, None);
    assert!(set_deployment_revision(&mut d, "3"));
    assert!(!set_deployment_revision(&mut d, "3"));
}

#[test]
fn set_deployment_annotations_to_rollback() {
    let mut d = rolling_deployment("web", 1, None, None);
    let a = d.metadata.annotations.get_or_insert_with(BTreeMap::new);
    a.insert(REVISION_ANNOTATION.into(), "5".into());
    a.insert("team".into(), "new".into());
    a.insert("only-on-deployment".into(), "x".into());
    let r = with_annotation(
        with_annotation(
            with_annotation(rs("web-1", 0, 0, 0), REVISION_ANNOTATION, "2"),
            "team",
            "old",
        ),
        CHANGE_CAUSE_ANNOTATION,
        "v1",
    );
    set_deployment_annotations_to(&mut d, &r);
    let got = d.metadata.annotations.clone().unwrap_or_default();
    let want: BTreeMap<String, String> = [
        (REVISION_ANNOTATION, "5"),
        ("team", "old"),
        (CHANGE_CAUSE_ANNOTATION, "v1"),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    assert_eq!(got, want);
}
