//! Tests for pod construction, validation, the kube-backed control (against a
//! mock HTTP service) and the fake.

use super::*;
use crate::testing::{MockApi, MockResponse};
use k8s_openapi::api::core::v1::{Container, PodSpec};
use serde_json::json;

fn controller_ref() -> OwnerReference {
    OwnerReference {
        api_version: "apps/v1".into(),
        kind: "ReplicaSet".into(),
        name: "foobar".into(),
        uid: "rs-uid".into(),
        controller: Some(true),
        block_owner_deletion: Some(true),
    }
}

fn owner() -> ObjectReference {
    ObjectReference {
        api_version: Some("apps/v1".into()),
        kind: Some("ReplicaSet".into()),
        name: Some("foobar".into()),
        namespace: Some("default".into()),
        uid: Some("rs-uid".into()),
        ..Default::default()
    }
}

fn template() -> PodTemplateSpec {
    PodTemplateSpec {
        metadata: Some(ObjectMeta {
            labels: Some(
                [("name", "foo"), ("type", "production")]
                    .into_iter()
                    .map(|(k, v)| (k.to_string(), v.to_string()))
                    .collect(),
            ),
            annotations: Some([("a".to_string(), "b".to_string())].into_iter().collect()),
            finalizers: Some(vec!["example.com/f".into()]),
            ..Default::default()
        }),
        spec: Some(PodSpec {
            containers: vec![Container {
                name: "c".into(),
                image: Some("nginx".into()),
                ..Default::default()
            }],
            ..Default::default()
        }),
    }
}

#[test]
fn pod_from_template_copies_metadata_and_spec() {
    let pod = get_pod_from_template(&template(), "foobar", Some(&controller_ref()));
    let m = &pod.metadata;
    assert_eq!(m.generate_name.as_deref(), Some("foobar-"));
    assert_eq!(m.labels, template().metadata.unwrap().labels);
    assert_eq!(m.annotations, template().metadata.unwrap().annotations);
    assert_eq!(
        m.finalizers.as_deref(),
        Some(&["example.com/f".to_string()][..])
    );
    assert_eq!(m.owner_references, Some(vec![controller_ref()]));
    assert!(m.name.is_none() && m.namespace.is_none());
    assert_eq!(pod.spec, template().spec);
    assert!(pod.status.is_none());
}

#[test]
fn pods_prefix_falls_back_to_name_when_too_long() {
    assert_eq!(pods_prefix("web"), "web-");
    let long = "a".repeat(253);
    assert_eq!(pods_prefix(&long), long);
}

#[test]
fn controller_ref_validation() {
    type Mutate = fn(&mut OwnerReference);
    let cases: Vec<(&str, Mutate, Option<&str>)> = vec![
        ("valid", |_| {}, None),
        (
            "empty apiVersion",
            |r| r.api_version.clear(),
            Some("controllerRef has empty APIVersion"),
        ),
        (
            "empty kind",
            |r| r.kind.clear(),
            Some("controllerRef has empty Kind"),
        ),
        (
            "controller unset",
            |r| r.controller = None,
            Some("controllerRef.Controller is not set to true"),
        ),
        (
            "controller false",
            |r| r.controller = Some(false),
            Some("controllerRef.Controller is not set to true"),
        ),
        (
            "block unset",
            |r| r.block_owner_deletion = None,
            Some("controllerRef.BlockOwnerDeletion is not set"),
        ),
    ];
    for (name, mutate, want) in cases {
        let mut r = controller_ref();
        mutate(&mut r);
        let got = validate_controller_ref(&r).err().map(|e| e.to_string());
        assert_eq!(got.as_deref(), want, "{name}");
    }
}

fn kube_control(
    api: &MockApi,
) -> (
    KubePodControl,
    tokio::sync::mpsc::Receiver<k8s_openapi::api::core::v1::Event>,
) {
    let (rec, rx) = EventRecorder::channel("replicaset-controller", 16);
    (KubePodControl::new(api.client(), rec), rx)
}

/// Upstream `TestCreatePodsWithGenerateName`.
#[tokio::test]
async fn test_create_pods_with_generate_name() {
    let api = MockApi::new(|req| {
        let mut pod = req.body.clone();
        pod["metadata"]["name"] = json!("foobar-x7k2p");
        MockResponse::json(201, pod)
    });
    let (control, mut events) = kube_control(&api);
    control
        .create_pods("default", &template(), &owner(), &controller_ref())
        .await
        .unwrap();
    control
        .create_pods_with_generate_name(
            "default",
            &template(),
            &owner(),
            &controller_ref(),
            Some("hello-"),
        )
        .await
        .unwrap();
    let reqs = api.requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].method, "POST");
    assert_eq!(reqs[0].path, "/api/v1/namespaces/default/pods");
    assert_eq!(reqs[0].body["metadata"]["generateName"], "foobar-");
    assert_eq!(
        reqs[0].body["metadata"]["labels"],
        json!({"name": "foo", "type": "production"})
    );
    assert_eq!(reqs[0].body["spec"]["containers"][0]["image"], "nginx");
    assert_eq!(reqs[1].body["metadata"]["generateName"], "hello-");
    assert_eq!(
        reqs[1].body["metadata"]["ownerReferences"],
        json!([{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "foobar", "uid": "rs-uid",
                "controller": true, "blockOwnerDeletion": true}])
    );
    let e = events.recv().await.unwrap();
    assert_eq!(e.reason.as_deref(), Some("SuccessfulCreate"));
    assert_eq!(e.message.as_deref(), Some("Created pod: foobar-x7k2p"));
    assert_eq!(e.involved_object, owner());
}

#[tokio::test]
async fn create_without_labels_is_rejected_locally() {
    let api = MockApi::new(|_| MockResponse::json(500, json!({})));
    let (control, mut events) = kube_control(&api);
    let mut t = template();
    t.metadata = None;
    let err = control
        .create_pods("default", &t, &owner(), &controller_ref())
        .await
        .unwrap_err();
    assert_eq!(err.to_string(), "unable to create pods, no labels");
    assert!(api.requests().is_empty());
    assert!(events.try_recv().is_err());
}

#[tokio::test]
async fn create_failure_records_warning_unless_namespace_terminating() {
    let api = MockApi::new(|_| {
        MockResponse::status(
            403,
            "Forbidden",
            "pods \"foobar-\" is forbidden: exceeded quota: q",
            None,
        )
    });
    let (control, mut events) = kube_control(&api);
    let err = control
        .create_pods("default", &template(), &owner(), &controller_ref())
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "pods \"foobar-\" is forbidden: exceeded quota: q"
    );
    let e = events.recv().await.unwrap();
    assert_eq!(e.type_.as_deref(), Some("Warning"));
    assert_eq!(e.reason.as_deref(), Some("FailedCreate"));
    assert_eq!(
        e.message.as_deref(),
        Some("Error creating: pods \"foobar-\" is forbidden: exceeded quota: q")
    );

    let api = MockApi::new(|_| {
        MockResponse::status(
            403,
            "Forbidden",
            "namespace default is being terminated",
            Some("NamespaceTerminating"),
        )
    });
    let (control, mut events) = kube_control(&api);
    let err = control
        .create_pods("default", &template(), &owner(), &controller_ref())
        .await
        .unwrap_err();
    assert!(err.has_status_cause(NAMESPACE_TERMINATING_CAUSE));
    assert!(
        events.try_recv().is_err(),
        "no event when the namespace is terminating"
    );
}

/// Upstream `TestDeletePodsAllowsMissing`, plus the success and failure events.
#[tokio::test]
async fn test_delete_pods_allows_missing() {
    let api =
        MockApi::new(|_| MockResponse::status(404, "NotFound", "pods \"podName\" not found", None));
    let (control, mut events) = kube_control(&api);
    let err = control
        .delete_pod("namespace-name", "podName", &owner())
        .await
        .unwrap_err();
    assert!(err.is_not_found());
    assert_eq!(api.requests()[0].method, "DELETE");
    assert_eq!(
        api.requests()[0].path,
        "/api/v1/namespaces/namespace-name/pods/podName"
    );
    assert!(events.try_recv().is_err());

    let api = MockApi::new(|_| MockResponse::status(500, "InternalError", "etcd down", None));
    let (control, mut events) = kube_control(&api);
    let err = control.delete_pod("ns", "p", &owner()).await.unwrap_err();
    assert_eq!(err.to_string(), "unable to delete pods: etcd down");
    assert_eq!(
        events.recv().await.unwrap().message.as_deref(),
        Some("Error deleting: etcd down")
    );

    let api = MockApi::new(|_| {
        MockResponse::json(
            200,
            json!({"kind": "Status", "apiVersion": "v1", "status": "Success"}),
        )
    });
    let (control, mut events) = kube_control(&api);
    control.delete_pod("ns", "p", &owner()).await.unwrap();
    let e = events.recv().await.unwrap();
    assert_eq!(e.reason.as_deref(), Some("SuccessfulDelete"));
    assert_eq!(e.message.as_deref(), Some("Deleted pod: p"));
}

/// Upstream `TestPatchPodCallbacks` (master): the write observer only sees successful patches.
#[tokio::test]
async fn test_patch_pod_callbacks() {
    let api = MockApi::new(|req| {
        if req.path.ends_with("/missing") {
            MockResponse::status(404, "NotFound", "pods \"missing\" not found", None)
        } else {
            MockResponse::json(
                200,
                json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "resourceVersion": "9"}}),
            )
        }
    });
    let seen = Arc::new(Mutex::new(Vec::new()));
    let seen2 = seen.clone();
    let (rec, _rx) = EventRecorder::channel("c", 4);
    let control =
        KubePodControl::new(api.client(), rec).with_write_observer(Arc::new(move |p: &Pod| {
            seen2
                .lock()
                .push(p.metadata.resource_version.clone().unwrap_or_default());
        }));
    let err = control.patch_pod("ns", "missing", "{}").await.unwrap_err();
    assert!(err.is_not_found());
    assert!(seen.lock().is_empty());
    control.patch_pod("ns", "p", "{}").await.unwrap();
    assert_eq!(*seen.lock(), ["9"]);
    let reqs = api.requests();
    assert_eq!(reqs[1].method, "PATCH");
    assert_eq!(
        reqs[1].content_type.as_deref(),
        Some("application/strategic-merge-patch+json")
    );
}

#[tokio::test]
async fn fake_pod_control_records_and_limits() {
    let fake = FakePodControl::default();
    fake.set_create_limit(2);
    for _ in 0..3 {
        let _ = fake
            .create_pods("ns", &template(), &owner(), &controller_ref())
            .await;
    }
    let st = fake.state();
    assert_eq!(st.create_call_count, 3);
    assert_eq!(st.templates.len(), 2);
    assert_eq!(st.controller_refs, vec![controller_ref(); 2]);
    fake.set_error(Some(Arc::new(|| ControlError::not_found("pods", "x"))));
    assert!(
        fake.delete_pod("ns", "x", &owner())
            .await
            .unwrap_err()
            .is_not_found()
    );
    assert_eq!(fake.state().delete_pod_names, ["x"]);
    fake.clear();
    assert_eq!(fake.state(), FakePodControlState::default());
}
