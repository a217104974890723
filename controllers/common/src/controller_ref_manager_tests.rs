//! Table tests for the claim rules, the patch bodies and the claim passes.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use k8s_openapi::api::apps::v1::ReplicaSet;
use k8s_openapi::api::core::v1::{ObjectReference, PodTemplateSpec};
use parking_lot::Mutex;

use super::*;
use crate::pod_view::PodView;
use crate::rs_control::FakeReplicaSetControl;

fn owner() -> ControllerRefOwner {
    ControllerRefOwner {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: "rs".into(),
        namespace: "default".into(),
        uid: "rs-uid".into(),
        deleting: false,
    }
}

fn ref_to(uid: &str, controller: bool) -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: "x".into(),
        uid: uid.into(),
        controller: Some(controller),
        block_owner_deletion: Some(true),
    }
}

fn pod(name: &str, refs: Vec<OwnerReference>, matching: bool) -> Arc<PodView> {
    let mut p = PodView::default();
    p.metadata.name = Some(name.into());
    p.metadata.namespace = Some("default".into());
    p.metadata.uid = Some(format!("{name}-uid"));
    p.metadata.labels = Some(
        [(
            "app".to_string(),
            if matching { "web" } else { "other" }.to_string(),
        )]
        .into_iter()
        .collect(),
    );
    if !refs.is_empty() {
        p.metadata.owner_references = Some(refs);
    }
    Arc::new(p)
}

fn selects(p: &PodView) -> bool {
    p.metadata
        .labels
        .as_ref()
        .and_then(|l| l.get("app"))
        .is_some_and(|v| v == "web")
}

#[test]
fn claim_decision_table() {
    struct Case {
        name: &'static str,
        refs: Vec<OwnerReference>,
        owner_deleting: bool,
        matches: bool,
        dep_deleting: bool,
        dep_ns: &'static str,
        want: ClaimDecision,
    }
    let base = || Case {
        name: "",
        refs: vec![],
        owner_deleting: false,
        matches: true,
        dep_deleting: false,
        dep_ns: "default",
        want: ClaimDecision::Adopt,
    };
    let cases = vec![
        Case {
            name: "matching orphan is adopted",
            ..base()
        },
        Case {
            name: "non-matching orphan is ignored",
            matches: false,
            want: ClaimDecision::Ignore,
            ..base()
        },
        Case {
            name: "orphan while owner deleting is ignored",
            owner_deleting: true,
            want: ClaimDecision::Ignore,
            ..base()
        },
        Case {
            name: "deleting orphan is ignored",
            dep_deleting: true,
            want: ClaimDecision::Ignore,
            ..base()
        },
        Case {
            name: "orphan in another namespace is ignored",
            dep_ns: "other",
            want: ClaimDecision::Ignore,
            ..base()
        },
        Case {
            name: "non-controller owner ref still means orphan",
            refs: vec![ref_to("someone", false)],
            ..base()
        },
        Case {
            name: "owned and matching is kept",
            refs: vec![ref_to("rs-uid", true)],
            want: ClaimDecision::Keep,
            ..base()
        },
        Case {
            name: "owned and matching is kept while owner deleting",
            refs: vec![ref_to("rs-uid", true)],
            owner_deleting: true,
            want: ClaimDecision::Keep,
            ..base()
        },
        Case {
            name: "owned and not matching is released",
            refs: vec![ref_to("rs-uid", true)],
            matches: false,
            want: ClaimDecision::Release,
            ..base()
        },
        Case {
            name: "owned, not matching, owner deleting: left alone",
            refs: vec![ref_to("rs-uid", true)],
            matches: false,
            owner_deleting: true,
            want: ClaimDecision::Ignore,
            ..base()
        },
        Case {
            name: "controlled by someone else is ignored",
            refs: vec![ref_to("other-uid", true)],
            want: ClaimDecision::Ignore,
            ..base()
        },
    ];
    for c in cases {
        let mut o = owner();
        o.deleting = c.owner_deleting;
        let meta = ObjectMeta {
            namespace: Some(c.dep_ns.into()),
            owner_references: (!c.refs.is_empty()).then_some(c.refs),
            deletion_timestamp: c
                .dep_deleting
                .then(|| Time("2024-01-01T00:00:00Z".parse().unwrap())),
            ..Default::default()
        };
        assert_eq!(claim_decision(&o, &meta, c.matches), c.want, "{}", c.name);
    }
}

#[test]
fn patch_bodies_are_byte_exact() {
    assert_eq!(
        adopt_patch(&owner(), "pod-uid").unwrap(),
        r#"{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"rs-uid","controller":true,"blockOwnerDeletion":true}],"uid":"pod-uid"}}"#
    );
    assert_eq!(
        release_patch("rs-uid", "pod-uid").unwrap(),
        r#"{"metadata":{"uid":"pod-uid","ownerReferences":[{"$patch":"delete","uid":"rs-uid"}]}}"#
    );
}

#[test]
fn recheck_deletion_timestamp_messages() {
    let fresh = |uid: &str, deleted: bool| ObjectMeta {
        name: Some("rs".into()),
        namespace: Some("default".into()),
        uid: Some(uid.into()),
        deletion_timestamp: deleted.then(|| Time("2024-05-15T10:11:12Z".parse().unwrap())),
        ..Default::default()
    };
    assert_eq!(
        recheck_deletion_timestamp(&owner(), Ok(fresh("rs-uid", false))),
        Ok(())
    );
    assert_eq!(
        recheck_deletion_timestamp(&owner(), Ok(fresh("new-uid", false))).unwrap_err(),
        "can't recheck DeletionTimestamp: original ReplicaSet default/rs is gone: got uid new-uid, wanted rs-uid"
    );
    assert_eq!(
        recheck_deletion_timestamp(&owner(), Ok(fresh("rs-uid", true))).unwrap_err(),
        "default/rs has just been deleted at 2024-05-15 10:11:12 +0000 UTC"
    );
    assert_eq!(
        recheck_deletion_timestamp(
            &owner(),
            Err(ControlError::not_found("replicasets.apps", "rs"))
        )
        .unwrap_err(),
        "can't recheck DeletionTimestamp: replicasets.apps \"rs\" not found"
    );
}

/// A pod control whose patches fail per pod name with the given (code, reason).
#[derive(Default)]
struct ScriptedPods {
    failures: HashMap<String, (u16, &'static str)>,
    patches: Mutex<Vec<(String, String)>>,
}

impl PodControl for ScriptedPods {
    fn create_pods_with_generate_name<'a>(
        &'a self,
        _: &'a str,
        _: &'a PodTemplateSpec,
        _: &'a ObjectReference,
        _: &'a OwnerReference,
        _: Option<&'a str>,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(async { Err(ControlError::Other("unexpected create".into())) })
    }

    fn delete_pod<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
        _: &'a ObjectReference,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(async { Err(ControlError::Other("unexpected delete".into())) })
    }

    fn patch_pod<'a>(
        &'a self,
        _: &'a str,
        name: &'a str,
        patch: &'a str,
    ) -> BoxFuture<'a, Result<(), ControlError>> {
        Box::pin(async move {
            self.patches
                .lock()
                .push((name.to_string(), patch.to_string()));
            match self.failures.get(name) {
                Some((code, reason)) => {
                    Err(ControlError::api(*code, reason, format!("{reason} {name}")))
                }
                None => Ok(()),
            }
        })
    }
}

fn names(v: &[Arc<PodView>]) -> Vec<&str> {
    v.iter()
        .map(|p| p.metadata.name.as_deref().unwrap_or_default())
        .collect()
}

#[tokio::test]
async fn claim_pods_adopts_releases_and_keeps() {
    let control = ScriptedPods::default();
    let checks = Arc::new(AtomicUsize::new(0));
    let checks2 = checks.clone();
    let mut m = ControllerRefManager::new(
        owner(),
        Box::new(move || {
            Box::pin(async move {
                checks2.fetch_add(1, Ordering::SeqCst);
                Ok(())
            })
        }),
    );
    let pods = vec![
        pod("orphan-1", vec![], true),
        pod("owned", vec![ref_to("rs-uid", true)], true),
        pod("owned-stale", vec![ref_to("rs-uid", true)], false),
        pod("foreign", vec![ref_to("other", true)], true),
        pod("orphan-2", vec![], true),
        pod("orphan-nomatch", vec![], false),
    ];
    let res = m.claim_pods(&control, &pods, selects).await;
    assert!(res.error.is_none(), "{:?}", res.error);
    assert_eq!(names(&res.claimed), ["orphan-1", "owned", "orphan-2"]);
    assert_eq!(
        checks.load(Ordering::SeqCst),
        1,
        "can_adopt runs once per pass"
    );
    let patches = control.patches.lock().clone();
    let patched: Vec<&str> = patches.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(patched, ["orphan-1", "owned-stale", "orphan-2"]);
    assert!(patches[0].1.contains(r#""uid":"orphan-1-uid""#));
    assert!(patches[1].1.contains(r#""$patch":"delete""#));
}

#[tokio::test]
async fn claim_pods_error_handling() {
    let control = ScriptedPods {
        failures: [
            ("adopt-404".to_string(), (404, "NotFound")),
            ("adopt-409".to_string(), (409, "Conflict")),
            ("release-404".to_string(), (404, "NotFound")),
            ("release-422".to_string(), (422, "Invalid")),
            ("release-500".to_string(), (500, "InternalError")),
        ]
        .into_iter()
        .collect(),
        ..Default::default()
    };
    let mut m = ControllerRefManager::without_recheck(owner());
    let mine = || vec![ref_to("rs-uid", true)];
    let pods = vec![
        pod("adopt-404", vec![], true),
        pod("adopt-409", vec![], true),
        pod("release-404", mine(), false),
        pod("release-422", mine(), false),
        pod("release-500", mine(), false),
        pod("adopt-ok", vec![], true),
    ];
    let res = m.claim_pods(&control, &pods, selects).await;
    assert_eq!(
        names(&res.claimed),
        ["adopt-ok"],
        "processing continues after errors"
    );
    let err = res.into_result().unwrap_err();
    assert_eq!(
        err.to_string(),
        "[Conflict adopt-409, InternalError release-500]"
    );
}

#[tokio::test]
async fn failed_can_adopt_fails_every_adoption_but_not_releases() {
    let control = ScriptedPods::default();
    let calls = Arc::new(AtomicUsize::new(0));
    let calls2 = calls.clone();
    let mut m = ControllerRefManager::new(
        owner(),
        Box::new(move || {
            Box::pin(async move {
                calls2.fetch_add(1, Ordering::SeqCst);
                Err("default/rs has just been deleted at 2024-05-15 10:11:12 +0000 UTC".to_string())
            })
        }),
    );
    let pods = vec![
        pod("o1", vec![], true),
        pod("stale", vec![ref_to("rs-uid", true)], false),
        pod("o2", vec![], true),
    ];
    let res = m.claim_pods(&control, &pods, selects).await;
    assert!(res.claimed.is_empty());
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    let msg = res.error.unwrap().to_string();
    assert!(
        msg.starts_with("[can't adopt Pod default/o1 (o1-uid): default/rs has just been deleted"),
        "{msg}"
    );
    assert_eq!(control.patches.lock().len(), 1, "only the release was sent");
}

/// Spec vector D9: a deleting owner neither adopts nor releases.
#[tokio::test]
async fn deleting_owner_sends_no_patches() {
    let control = ScriptedPods::default();
    let mut o = owner();
    o.deleting = true;
    let mut m = ControllerRefManager::without_recheck(o);
    let pods = vec![
        pod("owned-stale", vec![ref_to("rs-uid", true)], false),
        pod("owned", vec![ref_to("rs-uid", true)], true),
        pod("orphan", vec![], true),
    ];
    let res = m.claim_pods(&control, &pods, selects).await;
    assert_eq!(names(&res.claimed), ["owned"]);
    assert!(control.patches.lock().is_empty());
}

#[tokio::test]
async fn claim_replica_sets_uses_rs_control() {
    let control = FakeReplicaSetControl::default();
    let deploy = ControllerRefOwner {
        api_version: "apps/v1".into(),
        kind: "Deployment".into(),
        name: "web".into(),
        namespace: "default".into(),
        uid: "d-uid".into(),
        deleting: false,
    };
    let rs = |name: &str, owned: bool| {
        let mut r = ReplicaSet::default();
        r.metadata.name = Some(name.into());
        r.metadata.namespace = Some("default".into());
        r.metadata.uid = Some(format!("{name}-uid"));
        if owned {
            r.metadata.owner_references = Some(vec![OwnerReference {
                uid: "d-uid".into(),
                controller: Some(true),
                ..Default::default()
            }]);
        }
        Arc::new(r)
    };
    let sets = vec![rs("orphan", false), rs("owned", true)];
    let mut m = ControllerRefManager::without_recheck(deploy);
    let res = m
        .claim_replica_sets(&control, &sets, |_r: &ReplicaSet| true)
        .await;
    assert_eq!(res.into_result().unwrap().len(), 2);
    let patches = control.patches();
    assert_eq!(patches.len(), 1);
    assert_eq!(patches[0].1, "orphan");
    assert_eq!(
        patches[0].2,
        r#"{"metadata":{"ownerReferences":[{"apiVersion":"apps/v1","kind":"Deployment","name":"web","uid":"d-uid","controller":true,"blockOwnerDeletion":true}],"uid":"orphan-uid"}}"#
    );
}

#[test]
fn owner_of_replica_set() {
    let mut r = ReplicaSet::default();
    r.metadata.name = Some("rs".into());
    r.metadata.namespace = Some("default".into());
    r.metadata.uid = Some("rs-uid".into());
    assert_eq!(ControllerRefOwner::of(&r), owner());
    assert_eq!(owner().controller_ref().kind, "ReplicaSet");
}
