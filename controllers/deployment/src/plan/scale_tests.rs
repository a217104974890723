use super::*;
use crate::testing::{int, recreate_deployment, rolling_deployment, rs, with_annotation};
use crate::util::annotations::{DESIRED_REPLICAS_ANNOTATION, MAX_REPLICAS_ANNOTATION};
use crate::util::fields::name_of;

struct Case {
    name: &'static str,
    d_replicas: i32,
    d_surge: i32,
    old_d_replicas: i32,
    old_d_surge: i32,
    new_rs: Option<(&'static str, i32)>,
    old_rss: Vec<(&'static str, i32)>,
    expected_new: Option<i32>,
    expected_old: Vec<i32>,
}

/// Upstream `TestScale` fixture: every RS annotated from the *old* deployment; the new RS is
/// the newest, old RSs get older down the list.
fn run(
    c: Case,
    tweak: impl Fn(&mut Vec<ReplicaSet>),
) -> (Vec<ScaleStep>, Vec<ReplicaSet>, Deployment) {
    let d = rolling_deployment("foo", c.d_replicas, Some(int(c.d_surge)), Some(int(0)));
    let annotate = |r: ReplicaSet| {
        with_annotation(
            with_annotation(
                r,
                DESIRED_REPLICAS_ANNOTATION,
                &c.old_d_replicas.to_string(),
            ),
            MAX_REPLICAS_ANNOTATION,
            &(c.old_d_replicas + c.old_d_surge).to_string(),
        )
    };
    let mut objects: Vec<ReplicaSet> = Vec::new();
    if let Some((name, size)) = c.new_rs {
        objects.push(annotate(rs(name, size, 0, 1_000)));
    }
    for (i, (name, size)) in c.old_rss.iter().enumerate() {
        objects.push(annotate(rs(name, *size, 0, 900 - i as i64 * 100)));
    }
    tweak(&mut objects);
    let (new_rs, old_rss): (Option<&ReplicaSet>, Vec<&ReplicaSet>) = if c.new_rs.is_some() {
        (objects.first(), objects.iter().skip(1).collect())
    } else {
        (None, objects.iter().collect())
    };
    let steps = scale(&d, new_rs, &old_rss);
    let all: Vec<&ReplicaSet> = objects.iter().collect();
    let after = apply_scale_steps(&all, &steps, &d);
    let mut after = after.iter();
    if c.new_rs.is_some() {
        let got = after.next().map(rs_replicas);
        assert_eq!(got, c.expected_new, "{}: new RS", c.name);
    }
    let got_old: Vec<i32> = after.map(rs_replicas).collect();
    assert_eq!(got_old, c.expected_old, "{}: old RSs", c.name);
    (steps, objects, d)
}

#[test]
fn test_scale() {
    let cases = vec![
        Case {
            name: "normal scaling event: 10 -> 12",
            d_replicas: 12,
            d_surge: 0,
            old_d_replicas: 10,
            old_d_surge: 0,
            new_rs: Some(("foo-v1", 10)),
            old_rss: vec![],
            expected_new: Some(12),
            expected_old: vec![],
        },
        Case {
            name: "normal scaling event: 10 -> 5",
            d_replicas: 5,
            d_surge: 0,
            old_d_replicas: 10,
            old_d_surge: 0,
            new_rs: Some(("foo-v1", 10)),
            old_rss: vec![],
            expected_new: Some(5),
            expected_old: vec![],
        },
        Case {
            name: "proportional scaling: 5 -> 10",
            d_replicas: 10,
            d_surge: 0,
            old_d_replicas: 5,
            old_d_surge: 0,
            new_rs: Some(("foo-v2", 2)),
            old_rss: vec![("foo-v1", 3)],
            expected_new: Some(4),
            expected_old: vec![6],
        },
        Case {
            name: "proportional scaling: 5 -> 3",
            d_replicas: 3,
            d_surge: 0,
            old_d_replicas: 5,
            old_d_surge: 0,
            new_rs: Some(("foo-v2", 2)),
            old_rss: vec![("foo-v1", 3)],
            expected_new: Some(1),
            expected_old: vec![2],
        },
        Case {
            name: "proportional scaling: 9 -> 4",
            d_replicas: 4,
            d_surge: 0,
            old_d_replicas: 9,
            old_d_surge: 0,
            new_rs: Some(("foo-v2", 8)),
            old_rss: vec![("foo-v1", 1)],
            expected_new: Some(4),
            expected_old: vec![0],
        },
        Case {
            name: "proportional scaling: 7 -> 10",
            d_replicas: 10,
            d_surge: 0,
            old_d_replicas: 7,
            old_d_surge: 0,
            new_rs: Some(("foo-v3", 2)),
            old_rss: vec![("foo-v2", 3), ("foo-v1", 2)],
            expected_new: Some(3),
            expected_old: vec![4, 3],
        },
        Case {
            name: "proportional scaling: 13 -> 8",
            d_replicas: 8,
            d_surge: 0,
            old_d_replicas: 13,
            old_d_surge: 0,
            new_rs: Some(("foo-v3", 2)),
            old_rss: vec![("foo-v2", 8), ("foo-v1", 3)],
            expected_new: Some(1),
            expected_old: vec![5, 2],
        },
        Case {
            name: "leftover distribution: 3 -> 4",
            d_replicas: 4,
            d_surge: 0,
            old_d_replicas: 3,
            old_d_surge: 0,
            new_rs: Some(("foo-v3", 1)),
            old_rss: vec![("foo-v2", 1), ("foo-v1", 1)],
            expected_new: Some(2),
            expected_old: vec![1, 1],
        },
        Case {
            name: "leftover distribution: 3 -> 2",
            d_replicas: 2,
            d_surge: 0,
            old_d_replicas: 3,
            old_d_surge: 0,
            new_rs: Some(("foo-v3", 1)),
            old_rss: vec![("foo-v2", 1), ("foo-v1", 1)],
            expected_new: Some(1),
            expected_old: vec![1, 0],
        },
        Case {
            name: "proportional scaling (no new rs): 4 -> 5",
            d_replicas: 5,
            d_surge: 0,
            old_d_replicas: 4,
            old_d_surge: 0,
            new_rs: None,
            old_rss: vec![("foo-v2", 2), ("foo-v1", 2)],
            expected_new: None,
            expected_old: vec![3, 2],
        },
        Case {
            name: "proportional scaling: 6 -> 0",
            d_replicas: 0,
            d_surge: 0,
            old_d_replicas: 6,
            old_d_surge: 0,
            new_rs: Some(("foo-v3", 3)),
            old_rss: vec![("foo-v2", 2), ("foo-v1", 1)],
            expected_new: Some(0),
            expected_old: vec![0, 0],
        },
        Case {
            name: "proportional scaling: 0 -> 6",
            d_replicas: 6,
            d_surge: 0,
            old_d_replicas: 0,
            old_d_surge: 0,
            new_rs: Some(("foo-v3", 0)),
            old_rss: vec![("foo-v2", 0), ("foo-v1", 0)],
            expected_new: Some(6),
            expected_old: vec![0, 0],
        },
        Case {
            name: "deployment with surge pods",
            d_replicas: 20,
            d_surge: 2,
            old_d_replicas: 10,
            old_d_surge: 2,
            new_rs: Some(("foo-v2", 6)),
            old_rss: vec![("foo-v1", 6)],
            expected_new: Some(11),
            expected_old: vec![11],
        },
        Case {
            name: "change both surge and size",
            d_replicas: 50,
            d_surge: 6,
            old_d_replicas: 10,
            old_d_surge: 3,
            new_rs: Some(("foo-v2", 5)),
            old_rss: vec![("foo-v1", 8)],
            expected_new: Some(22),
            expected_old: vec![34],
        },
        Case {
            name: "change both size and template",
            d_replicas: 14,
            d_surge: 0,
            old_d_replicas: 10,
            old_d_surge: 0,
            new_rs: None,
            old_rss: vec![("foo-v2", 7), ("foo-v1", 3)],
            expected_new: None,
            expected_old: vec![10, 4],
        },
    ];
    for c in cases {
        let _ = run(c, |_| {});
    }
}

#[test]
fn test_scale_failed_rs_update() {
    // Deployment 5 (was 5); foo-v2 was last resized for 3 (a previous update failed midway).
    let (steps, objects, d) = run(
        Case {
            name: "failed rs update",
            d_replicas: 5,
            d_surge: 0,
            old_d_replicas: 5,
            old_d_surge: 0,
            new_rs: Some(("foo-v3", 2)),
            old_rss: vec![("foo-v2", 1), ("foo-v1", 1)],
            expected_new: Some(2),
            expected_old: vec![2, 1],
        },
        |objs| {
            let v2 = with_annotation(
                with_annotation(objs[1].clone(), DESIRED_REPLICAS_ANNOTATION, "3"),
                MAX_REPLICAS_ANNOTATION,
                "3",
            );
            objs[1] = v2;
        },
    );
    // wasntUpdated: foo-v3 and foo-v1 get no API call at all.
    for rs_obj in &objects {
        let name = name_of(&rs_obj.metadata);
        let calls = steps
            .iter()
            .filter(|s| s.rs_name == name && s.outcome(rs_obj, &d).update.is_some())
            .count();
        assert_eq!(calls, usize::from(name == "foo-v2"), "{name}");
    }
}

#[test]
fn test_scale_saturated_but_broken_new_replica_set() {
    // d.R 2, surge 1, unav 1; new RS has 2 replicas but 0 available: nothing to add.
    let mut d = rolling_deployment("foo", 2, Some(int(1)), Some(int(1)));
    d.metadata.generation = Some(1);
    let ann = |r| {
        with_annotation(
            with_annotation(r, DESIRED_REPLICAS_ANNOTATION, "2"),
            MAX_REPLICAS_ANNOTATION,
            "3",
        )
    };
    let new_rs = ann(rs("foo-v2", 2, 0, 100));
    let old = ann(rs("foo-v1", 1, 1, 50));
    let steps = scale(&d, Some(&new_rs), &[&old]);
    let after = apply_scale_steps(&[&new_rs, &old], &steps, &d);
    assert_eq!(
        after.iter().map(rs_replicas).collect::<Vec<_>>(),
        vec![2, 1]
    );
    assert!(steps.iter().all(|s| {
        s.outcome(if s.rs_name == "foo-v2" { &new_rs } else { &old }, &d)
            .update
            .is_none()
    }));
}

#[test]
fn scale_saturated_new_rs_zeroes_old() {
    let d = rolling_deployment("foo", 3, Some(int(1)), Some(int(0)));
    let new_rs = with_annotation(rs("foo-v2", 3, 3, 100), DESIRED_REPLICAS_ANNOTATION, "3");
    let old = rs("foo-v1", 2, 2, 50);
    let steps = scale(&d, Some(&new_rs), &[&old]);
    assert_eq!(
        steps,
        vec![ScaleStep {
            rs_name: "foo-v1".into(),
            new_replicas: 0,
            kind: ScaleKind::IfSizeChanged
        }]
    );
}

#[test]
fn scale_recreate_does_not_proportionally_scale() {
    let d = recreate_deployment("foo", 10);
    let new_rs = rs("foo-v2", 2, 0, 100);
    let old = rs("foo-v1", 3, 0, 50);
    assert!(scale(&d, Some(&new_rs), &[&old]).is_empty());
}

#[test]
fn scale_replica_set_refreshes_annotations_and_events() {
    let d = rolling_deployment("foo", 5, Some(int(2)), Some(int(0)));
    let r = rs("foo-v1", 3, 3, 0);
    let out = scale_replica_set(&r, 3, &d);
    let updated = out.update.clone().expect("annotations missing -> update");
    assert!(out.event.is_none(), "no resize");
    let a = updated.metadata.annotations.clone().unwrap_or_default();
    assert_eq!(
        a.get(DESIRED_REPLICAS_ANNOTATION).map(String::as_str),
        Some("5")
    );
    assert_eq!(
        a.get(MAX_REPLICAS_ANNOTATION).map(String::as_str),
        Some("7")
    );
    // Up to date: no call.
    assert!(scale_replica_set(&updated, 3, &d).update.is_none());
    // Resize: event with upstream wording.
    let out = scale_replica_set_and_record_event(&updated, 5, &d);
    assert_eq!(
        out.event.map(|e| e.message).as_deref(),
        Some("Scaled up replica set foo-v1 from 3 to 5")
    );
    // Same size: nothing, even though annotations would be stale.
    assert!(
        scale_replica_set_and_record_event(&r, 3, &d)
            .update
            .is_none()
    );
}

#[test]
fn test_is_scaling_event() {
    let d = rolling_deployment("foo", 5, Some(int(1)), Some(int(0)));
    let same = with_annotation(rs("a", 2, 0, 0), DESIRED_REPLICAS_ANNOTATION, "5");
    let other = with_annotation(rs("b", 2, 0, 0), DESIRED_REPLICAS_ANNOTATION, "4");
    let inactive_other = with_annotation(rs("c", 0, 0, 0), DESIRED_REPLICAS_ANNOTATION, "4");
    let garbage = with_annotation(rs("d", 2, 0, 0), DESIRED_REPLICAS_ANNOTATION, "x");
    assert!(!is_scaling_event(
        &d,
        Some(&same),
        &[&inactive_other, &garbage]
    ));
    assert!(is_scaling_event(&d, Some(&same), &[&other]));
    assert!(is_scaling_event(&d, None, &[&other]));
    assert!(!is_scaling_event(&d, None, &[]));
}

/// Exhaustive small-grid check of proportional scaling invariants, for ReplicaSets whose
/// annotations are consistent with their sizes (last sized for a deployment of `a + b + c`
/// replicas without surge): sizes never negative; when adding, exactly `d.R + maxSurge`
/// replicas result; when removing, never more than before and never fewer than allowed; a
/// single active ReplicaSet takes `d.R`.
#[test]
fn scale_invariants_on_a_grid() {
    for desired in 0..8 {
        for surge in 0..3 {
            for a in 0..5 {
                for b in 0..5 {
                    for c in 0..5 {
                        let d = rolling_deployment("foo", desired, Some(int(surge)), Some(int(1)));
                        let before = a + b + c;
                        let ann = |r: ReplicaSet| {
                            let v = before.to_string();
                            with_annotation(
                                with_annotation(r, DESIRED_REPLICAS_ANNOTATION, &v),
                                MAX_REPLICAS_ANNOTATION,
                                &v,
                            )
                        };
                        let new_rs = ann(rs("v3", a, 0, 300));
                        let v2 = ann(rs("v2", b, 0, 200));
                        let v1 = ann(rs("v1", c, 0, 100));
                        let steps = scale(&d, Some(&new_rs), &[&v2, &v1]);
                        let after = apply_scale_steps(&[&new_rs, &v2, &v1], &steps, &d);
                        let sizes: Vec<i32> = after.iter().map(rs_replicas).collect();
                        let total: i32 = sizes.iter().sum();
                        let allowed = if desired > 0 { desired + surge } else { 0 };
                        let active = [a, b, c].iter().filter(|n| **n > 0).count();
                        let case = format!("d={desired} s={surge} {a},{b},{c} -> {sizes:?}");
                        assert!(sizes.iter().all(|n| *n >= 0), "{case}");
                        if active >= 2 {
                            if allowed > before {
                                assert_eq!(total, allowed, "up: {case}");
                            } else {
                                assert!(total >= allowed && total <= before, "down: {case}");
                            }
                        } else {
                            assert_eq!(total, desired, "single: {case}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn proportional_scaling_events_derive_direction_per_replica_set() {
    let d = rolling_deployment("foo", 10, Some(int(0)), Some(int(0)));
    let ann = |r| {
        with_annotation(
            with_annotation(r, DESIRED_REPLICAS_ANNOTATION, "5"),
            MAX_REPLICAS_ANNOTATION,
            "5",
        )
    };
    let v2 = ann(rs("foo-v2", 2, 0, 200));
    let v1 = ann(rs("foo-v1", 3, 0, 100));
    let steps = scale(&d, Some(&v2), &[&v1]);
    assert!(steps.iter().all(|s| s.kind == ScaleKind::Always));
    let messages: Vec<String> = steps
        .iter()
        .filter_map(|s| {
            let current = if s.rs_name == "foo-v2" { &v2 } else { &v1 };
            s.outcome(current, &d).event.map(|e| e.message)
        })
        .collect();
    assert_eq!(
        messages,
        [
            "Scaled up replica set foo-v1 from 3 to 6",
            "Scaled up replica set foo-v2 from 2 to 4"
        ]
    );
}
