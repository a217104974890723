//! Decoding tests: real kubectl request bodies, hand-encoded messages, malformed input.

use serde_json::{Value, json};

use super::{ProtoError, decode_body};

// --- a tiny encoder for hand-built cases ---

fn varint(mut v: u64) -> Vec<u8> {
    let mut out = Vec::new();
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return out;
        }
        out.push(byte | 0x80);
    }
}

fn vf(number: u32, v: u64) -> Vec<u8> {
    let mut out = varint(u64::from(number) << 3);
    out.extend(varint(v));
    out
}

fn lf(number: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = varint((u64::from(number) << 3) | 2);
    out.extend(varint(payload.len() as u64));
    out.extend_from_slice(payload);
    out
}

fn sf(number: u32, s: &str) -> Vec<u8> {
    lf(number, s.as_bytes())
}

fn cat(parts: &[Vec<u8>]) -> Vec<u8> {
    parts.concat()
}

fn envelope(api_version: &str, kind: &str, raw: &[u8]) -> Vec<u8> {
    let mut out = b"k8s\0".to_vec();
    out.extend(lf(1, &cat(&[sf(1, api_version), sf(2, kind)])));
    out.extend(lf(2, raw));
    // Go always writes the (empty) contentEncoding and contentType strings.
    out.extend(sf(3, ""));
    out.extend(sf(4, ""));
    out
}

/// Drops nulls, empty objects and empty arrays, recursively: the forms the brief allows
/// the decoder and `kubectl -o json` to differ on.
fn prune(v: &Value) -> Option<Value> {
    match v {
        Value::Null => None,
        Value::Object(m) => {
            let m: serde_json::Map<String, Value> = m
                .iter()
                .filter_map(|(k, v)| prune(v).map(|v| (k.clone(), v)))
                .collect();
            (!m.is_empty()).then_some(Value::Object(m))
        }
        Value::Array(a) => {
            let a: Vec<Value> = a.iter().filter_map(prune).collect();
            (!a.is_empty()).then_some(Value::Array(a))
        }
        other => Some(other.clone()),
    }
}

// --- real kubectl bodies ---

/// Bodies captured from the real kubectl (v1.33) with a recording proxy, next to what the
/// same command prints with `--dry-run=client -o json`.
#[test]
fn kubectl_create_bodies_decode_to_the_dry_run_json() {
    let cases: &[(&str, &[u8], &str)] = &[
        (
            "kubectl create deployment web --image=nginx --replicas=3",
            include_bytes!("../../../tests/fixtures/protobuf/deployment_web.pb"),
            include_str!("../../../tests/fixtures/protobuf/deployment_web.json"),
        ),
        (
            "kubectl create deployment two --image=nginx --image=busybox --port=80",
            include_bytes!("../../../tests/fixtures/protobuf/deployment_two.pb"),
            include_str!("../../../tests/fixtures/protobuf/deployment_two.json"),
        ),
        (
            "kubectl create namespace demo",
            include_bytes!("../../../tests/fixtures/protobuf/namespace_demo.pb"),
            include_str!("../../../tests/fixtures/protobuf/namespace_demo.json"),
        ),
    ];
    for (command, body, dry_run) in cases {
        let got = decode_body(body).unwrap_or_else(|e| panic!("{command}: {e}"));
        let want: Value = serde_json::from_str(dry_run).expect("fixture JSON");
        assert_eq!(prune(&got), prune(&want), "{command}");
    }
}

#[test]
fn kubectl_deployment_keeps_go_json_empty_structs() {
    let got = decode_body(include_bytes!(
        "../../../tests/fixtures/protobuf/deployment_web.pb"
    ))
    .expect("decodes");
    assert_eq!(got["metadata"]["creationTimestamp"], Value::Null);
    assert_eq!(got["spec"]["strategy"], json!({}));
    assert_eq!(got["status"], json!({}));
    assert_eq!(
        got["spec"]["template"]["spec"]["containers"][0]["resources"],
        json!({})
    );
    assert_eq!(got["spec"]["replicas"], json!(3));
}

// --- hand-encoded messages (field numbers from upstream generated.proto) ---

fn meta(name: &str) -> Vec<u8> {
    sf(1, name)
}

/// The body upstream's ReplicaSet controller sends to create a pod: Go's protobuf encoding of a
/// `v1.Pod` with an empty `status`, whose value-typed strings Go writes even when empty. Made
/// with k8s.io/api v0.37.2's serializer; `json` is what Go's `encoding/json` gives for the same
/// object.
#[test]
fn controller_created_pod_with_empty_status_decodes_as_go_json() {
    let body: &[u8] = b"\
        \x6b\x38\x73\x00\x0a\x09\x0a\x02\x76\x31\x12\x03\x50\x6f\x64\x12\xcf\x02\x0a\xa4\x01\x0a\x00\x12\
        \x0f\x77\x65\x62\x2d\x35\x66\x63\x39\x66\x34\x62\x66\x36\x36\x2d\x1a\x07\x64\x65\x66\x61\x75\x6c\
        \x74\x22\x00\x2a\x00\x32\x00\x38\x00\x42\x00\x5a\x0a\x0a\x03\x61\x70\x70\x12\x03\x77\x65\x62\x5a\
        \x1f\x0a\x11\x70\x6f\x64\x2d\x74\x65\x6d\x70\x6c\x61\x74\x65\x2d\x68\x61\x73\x68\x12\x0a\x35\x66\
        \x63\x39\x66\x34\x62\x66\x36\x36\x6a\x4f\x0a\x0a\x52\x65\x70\x6c\x69\x63\x61\x53\x65\x74\x1a\x0e\
        \x77\x65\x62\x2d\x35\x66\x63\x39\x66\x34\x62\x66\x36\x36\x22\x24\x30\x62\x36\x63\x35\x63\x31\x65\
        \x2d\x30\x30\x30\x30\x2d\x34\x30\x30\x30\x2d\x38\x30\x30\x30\x2d\x30\x30\x30\x30\x30\x30\x30\x30\
        \x30\x30\x30\x31\x2a\x07\x61\x70\x70\x73\x2f\x76\x31\x30\x01\x38\x01\x12\x90\x01\x12\x4f\x0a\x05\
        \x6e\x67\x69\x6e\x78\x12\x05\x6e\x67\x69\x6e\x78\x2a\x00\x42\x0f\x12\x0d\x0a\x03\x63\x70\x75\x12\
        \x06\x0a\x04\x31\x30\x30\x6d\x6a\x14\x2f\x64\x65\x76\x2f\x74\x65\x72\x6d\x69\x6e\x61\x74\x69\x6f\
        \x6e\x2d\x6c\x6f\x67\x72\x06\x41\x6c\x77\x61\x79\x73\x80\x01\x00\x88\x01\x00\x90\x01\x00\xa2\x01\
        \x04\x46\x69\x6c\x65\x1a\x06\x41\x6c\x77\x61\x79\x73\x32\x0c\x43\x6c\x75\x73\x74\x65\x72\x46\x69\
        \x72\x73\x74\x42\x00\x4a\x00\x52\x00\x58\x00\x60\x00\x68\x00\x82\x01\x00\x8a\x01\x00\x9a\x01\x11\
        \x64\x65\x66\x61\x75\x6c\x74\x2d\x73\x63\x68\x65\x64\x75\x6c\x65\x72\xc2\x01\x00\x1a\x13\x0a\x00\
        \x1a\x00\x22\x00\x2a\x00\x32\x00\x4a\x00\x5a\x00\x72\x00\x88\x01\x00\x1a\x00\x22\x00";
    let json = r#"{"kind":"Pod","apiVersion":"v1","metadata":{"generateName":"web-5fc9f4bf66-","namespace":"default","labels":{"app":"web","pod-template-hash":"5fc9f4bf66"},"ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"web-5fc9f4bf66","uid":"0b6c5c1e-0000-4000-8000-000000000001","controller":true,"blockOwnerDeletion":true}]},"spec":{"containers":[{"name":"nginx","image":"nginx","resources":{"requests":{"cpu":"100m"}},"terminationMessagePath":"/dev/termination-log","terminationMessagePolicy":"File","imagePullPolicy":"Always"}],"restartPolicy":"Always","dnsPolicy":"ClusterFirst","schedulerName":"default-scheduler"},"status":{}}"#;
    let want: Value = serde_json::from_str(json).expect("Go's JSON");
    let got = decode_body(body).expect("decodes");
    assert_eq!(got["status"], json!({}));
    assert_eq!(prune(&got), prune(&want));
}

/// The DeleteOptions bodies client-go sends when it speaks protobuf (upstream's ReplicaSet
/// controller deleting a pod, the Deployment controller deleting a ReplicaSet), encoded by
/// k8s.io/apimachinery v0.37.2's serializer; next to them, Go's JSON for the same options.
#[test]
fn delete_options_decode_as_go_json() {
    let cases: &[(&[u8], &str)] = &[
        (
            b"\x6b\x38\x73\x00\x0a\x13\x0a\x02\x76\x31\x12\x0d\x44\x65\x6c\x65\x74\x65\x4f\x70\x74\
              \x69\x6f\x6e\x73\x12\x00\x1a\x00\x22\x00",
            r#"{"kind":"DeleteOptions","apiVersion":"v1"}"#,
        ),
        (
            b"\x6b\x38\x73\x00\x0a\x18\x0a\x07\x61\x70\x70\x73\x2f\x76\x31\x12\x0d\x44\x65\x6c\x65\
              \x74\x65\x4f\x70\x74\x69\x6f\x6e\x73\x12\x3f\x08\x00\x12\x2a\x0a\x24\x35\x64\x31\x63\
              \x32\x63\x33\x65\x2d\x30\x30\x30\x30\x2d\x34\x30\x30\x30\x2d\x38\x30\x30\x30\x2d\x30\
              \x30\x30\x30\x30\x30\x30\x30\x30\x30\x30\x61\x12\x02\x34\x32\x22\x0a\x42\x61\x63\x6b\
              \x67\x72\x6f\x75\x6e\x64\x2a\x03\x41\x6c\x6c\x1a\x00\x22\x00",
            r#"{"kind":"DeleteOptions","apiVersion":"apps/v1","gracePeriodSeconds":0,"preconditions":{"uid":"5d1c2c3e-0000-4000-8000-00000000000a","resourceVersion":"42"},"propagationPolicy":"Background","dryRun":["All"]}"#,
        ),
    ];
    for (body, json) in cases {
        let want: Value = serde_json::from_str(json).expect("Go's JSON");
        assert_eq!(decode_body(body).expect("decodes"), want);
    }
}

#[test]
fn hand_encoded_objects() {
    // IntOrString: type=1, intVal=2, strVal=3
    let ios_int = cat(&[vf(1, 0), vf(2, 0)]);
    let ios_pct = cat(&[vf(1, 1), vf(2, 0), sf(3, "25%")]);
    // Deployment{spec{replicas 0 (pointer: kept), strategy{RollingUpdate{maxUnavailable 0, maxSurge "25%"}},
    // minReadySeconds 0 (value: omitted), revisionHistoryLimit 10, paused false}}
    let strategy = cat(&[
        sf(1, "RollingUpdate"),
        lf(2, &cat(&[lf(1, &ios_int), lf(2, &ios_pct)])),
    ]);
    let dep_spec = cat(&[vf(1, 0), lf(4, &strategy), vf(5, 0), vf(6, 10), vf(7, 0)]);
    // Pod with env, valueFrom (inline LocalObjectReference), resources, tolerations, ports.
    let env = cat(&[
        lf(7, &cat(&[sf(1, "A"), sf(2, "1")])),
        lf(
            7,
            &cat(&[
                sf(1, "B"),
                sf(2, ""),
                lf(
                    3,
                    &lf(3, &cat(&[lf(1, &sf(1, "cm")), sf(2, "key"), vf(3, 0)])),
                ),
            ]),
        ),
    ]);
    let qty = |s: &str| lf(2, &sf(1, s));
    let resources = cat(&[
        lf(1, &cat(&[sf(1, "cpu"), qty("500m")])),
        lf(2, &cat(&[sf(1, "memory"), qty("64Mi")])),
    ]);
    let port = cat(&[sf(1, "http"), vf(2, 0), vf(3, 8080), sf(4, "TCP")]);
    let container = cat(&[
        sf(1, "app"),
        sf(2, "busybox"),
        sf(3, "sh"),
        sf(4, "-c"),
        sf(4, "sleep 1"),
        lf(6, &port),
        env,
        lf(8, &resources),
        sf(13, "/dev/termination-log"),
        sf(14, "IfNotPresent"),
    ]);
    let toleration = cat(&[sf(1, "k"), sf(2, "Exists"), sf(4, "NoExecute"), vf(5, 0)]);
    let pod_spec = cat(&[
        lf(2, &container),
        sf(3, "Never"),
        vf(4, 0),
        lf(7, &cat(&[sf(1, "disk"), sf(2, "ssd")])),
        lf(14, b""),
        lf(22, &toleration),
    ]);
    let labels = lf(11, &cat(&[sf(1, "app"), sf(2, "x")]));
    let owner = cat(&[
        sf(1, "ReplicaSet"),
        sf(3, "rs"),
        sf(4, "u1"),
        sf(5, "apps/v1"),
        vf(6, 1),
        vf(7, 0),
    ]);
    let pod_meta = cat(&[
        sf(1, "p"),
        sf(2, ""),
        sf(3, "default"),
        vf(7, 0),
        lf(8, &cat(&[vf(1, 1_700_000_000), vf(2, 5)])),
        labels,
        lf(13, &owner),
        sf(14, "example.com/f"),
    ]);
    // Lease with MicroTime renewTime.
    let lease_spec = cat(&[
        sf(1, "holder"),
        vf(2, 15),
        lf(4, &cat(&[vf(1, 1_700_000_000), vf(2, 123_456_789)])),
        vf(5, 0),
    ]);

    let cases: Vec<(&str, Vec<u8>, Value)> = vec![
        (
            "namespace with finalizers and empty status",
            envelope(
                "v1",
                "Namespace",
                &cat(&[lf(1, &meta("n")), lf(2, &sf(1, "kubernetes")), lf(3, b"")]),
            ),
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n"},
                   "spec": {"finalizers": ["kubernetes"]}, "status": {}}),
        ),
        (
            "deployment strategy with IntOrString and pointer zeros",
            envelope(
                "apps/v1",
                "Deployment",
                &cat(&[lf(1, &meta("d")), lf(2, &dep_spec)]),
            ),
            json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
                   "spec": {"replicas": 0, "revisionHistoryLimit": 10,
                            "strategy": {"type": "RollingUpdate",
                                         "rollingUpdate": {"maxUnavailable": 0, "maxSurge": "25%"}}}}),
        ),
        (
            "pod with the common container fields",
            envelope(
                "v1",
                "Pod",
                &cat(&[lf(1, &pod_meta), lf(2, &pod_spec), lf(3, b"")]),
            ),
            json!({"apiVersion": "v1", "kind": "Pod",
                   "metadata": {"name": "p", "namespace": "default",
                                "creationTimestamp": "2023-11-14T22:13:20Z",
                                "labels": {"app": "x"},
                                "ownerReferences": [{"apiVersion": "apps/v1", "kind": "ReplicaSet",
                                                     "name": "rs", "uid": "u1", "controller": true,
                                                     "blockOwnerDeletion": false}],
                                "finalizers": ["example.com/f"]},
                   "spec": {"containers": [{"name": "app", "image": "busybox", "command": ["sh"],
                                            "args": ["-c", "sleep 1"],
                                            "ports": [{"name": "http", "containerPort": 8080, "protocol": "TCP"}],
                                            "env": [{"name": "A", "value": "1"},
                                                    {"name": "B", "valueFrom": {"configMapKeyRef": {"name": "cm", "key": "key", "optional": false}}}],
                                            "resources": {"limits": {"cpu": "500m"}, "requests": {"memory": "64Mi"}},
                                            "terminationMessagePath": "/dev/termination-log",
                                            "imagePullPolicy": "IfNotPresent"}],
                            "restartPolicy": "Never", "terminationGracePeriodSeconds": 0,
                            "nodeSelector": {"disk": "ssd"}, "securityContext": {},
                            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute",
                                             "tolerationSeconds": 0}]},
                   "status": {}}),
        ),
        (
            "lease with a MicroTime",
            envelope(
                "coordination.k8s.io/v1",
                "Lease",
                &cat(&[lf(1, &meta("l")), lf(2, &lease_spec)]),
            ),
            json!({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"},
                   "spec": {"holderIdentity": "holder", "leaseDurationSeconds": 15,
                            "renewTime": "2023-11-14T22:13:20.123456Z", "leaseTransitions": 0}}),
        ),
        (
            "core v1 event with zero and set times",
            envelope(
                "v1",
                "Event",
                &cat(&[
                    lf(1, &cat(&[meta("e.1"), sf(3, "default")])),
                    lf(
                        2,
                        &cat(&[sf(1, "Pod"), sf(2, "default"), sf(3, "p"), sf(5, "v1")]),
                    ),
                    sf(3, "Scheduled"),
                    sf(4, "assigned"),
                    lf(5, &sf(1, "scheduler")),
                    lf(6, &vf(1, 0)),
                    lf(7, b""),
                    vf(8, 2),
                    sf(9, "Normal"),
                    lf(10, b""),
                    sf(14, ""),
                ]),
            ),
            json!({"apiVersion": "v1", "kind": "Event",
                   "metadata": {"name": "e.1", "namespace": "default"},
                   "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p", "apiVersion": "v1"},
                   "reason": "Scheduled", "message": "assigned", "source": {"component": "scheduler"},
                   "firstTimestamp": "1970-01-01T00:00:00Z", "lastTimestamp": null, "count": 2,
                   "type": "Normal", "eventTime": null}),
        ),
        (
            "negative int32 is sign-extended on the wire",
            envelope(
                "apps/v1",
                "ReplicaSet",
                &cat(&[lf(1, &meta("r")), lf(2, &vf(1, (-1i64) as u64))]),
            ),
            json!({"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "r"},
                   "spec": {"replicas": -1}}),
        ),
    ];
    for (name, body, want) in cases {
        assert_eq!(decode_body(&body), Ok(want), "{name}");
    }
}

// --- errors ---

#[test]
fn unsupported_content_is_named() {
    let cases: Vec<(&str, Vec<u8>, &str)> = vec![
        (
            "unknown kind",
            envelope("v1", "Gadget", b""),
            "kind \"Gadget\"",
        ),
        (
            "unknown field number",
            envelope("v1", "Namespace", &lf(1, &sf(99, "x"))),
            "field 99 (wire type Len) of message io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        ),
        (
            "unknown field number of a kind without a table",
            envelope("v1", "ConfigMap", &vf(42, 1)),
            "field 42 (wire type Varint) of message io.k8s.api.core.v1.ConfigMap",
        ),
        (
            "content encoding",
            [b"k8s\0".as_slice(), &lf(1, &sf(1, "v1")), &sf(3, "gzip")].concat(),
            "contentEncoding \"gzip\"",
        ),
    ];
    for (name, body, needle) in cases {
        match decode_body(&body) {
            Err(ProtoError::Unsupported(text)) => assert!(text.contains(needle), "{name}: {text}"),
            other => panic!("{name}: {other:?}"),
        }
    }
}

/// Kinds without a table of their own, and a tabled kind whose table lacks a message type (a
/// pod's volumes), decode by the kinds' schemas; `apiVersion` and `kind` come from the envelope.
#[test]
fn kinds_without_a_table_decode_by_schema() {
    // Volume{name "data", VolumeSource(2){emptyDir(2){medium "Memory"}}}
    let volume = cat(&[sf(1, "data"), lf(2, &lf(2, &sf(1, "Memory")))]);
    let container = cat(&[sf(1, "c"), sf(2, "busybox")]);
    let pod_spec = cat(&[lf(1, &volume), lf(2, &container)]);
    let cases: Vec<(&str, Vec<u8>, Value)> = vec![
        (
            "pod with a volume",
            envelope("v1", "Pod", &lf(2, &pod_spec)),
            json!({"apiVersion": "v1", "kind": "Pod", "spec": {
                "volumes": [{"name": "data", "emptyDir": {"medium": "Memory"}}],
                "containers": [{"name": "c", "image": "busybox"}]
            }}),
        ),
        (
            "job",
            envelope(
                "batch/v1",
                "Job",
                &cat(&[
                    lf(1, &meta("j")),
                    lf(2, &cat(&[vf(7, 4), lf(6, &lf(2, &pod_spec))])),
                ]),
            ),
            json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "j"},
            "spec": {"backoffLimit": 4, "template": {"spec": {
                "volumes": [{"name": "data", "emptyDir": {"medium": "Memory"}}],
                "containers": [{"name": "c", "image": "busybox"}]
            }}}}),
        ),
        (
            "service with a named target port",
            envelope(
                "v1",
                "Service",
                &lf(
                    2,
                    &cat(&[
                        lf(
                            1,
                            &cat(&[vf(3, 80), lf(4, &cat(&[vf(1, 1), sf(3, "http")]))]),
                        ),
                        lf(2, &cat(&[sf(1, "app"), sf(2, "web")])),
                        sf(4, "ClusterIP"),
                    ]),
                ),
            ),
            json!({"apiVersion": "v1", "kind": "Service", "spec": {
                "ports": [{"port": 80, "targetPort": "http"}],
                "selector": {"app": "web"},
                "type": "ClusterIP"
            }}),
        ),
    ];
    for (name, body, want) in cases {
        assert_eq!(decode_body(&body), Ok(want), "{name}");
    }
}

#[test]
fn malformed_input_is_an_error() {
    let good = envelope("v1", "Namespace", &lf(1, &meta("demo")));
    let cases: Vec<(&str, Vec<u8>, ProtoError)> = vec![
        ("empty", vec![], ProtoError::BadMagic),
        ("bad magic", b"k8x\0\x0a\x00".to_vec(), ProtoError::BadMagic),
        (
            "json body",
            b"{\"kind\":\"Pod\"}".to_vec(),
            ProtoError::BadMagic,
        ),
        (
            "wrong wire type for a string",
            envelope("v1", "Namespace", &lf(1, &vf(1, 5))),
            ProtoError::WrongWireType {
                message: "ObjectMeta",
                field: "name",
                wire_type: super::wire::WireType::Varint,
            },
        ),
        (
            "wrong wire type for a message",
            envelope("v1", "Namespace", &vf(1, 1)),
            ProtoError::WrongWireType {
                message: "Namespace",
                field: "metadata",
                wire_type: super::wire::WireType::Varint,
            },
        ),
        (
            "invalid utf-8",
            envelope("v1", "Namespace", &lf(1, &lf(1, &[0xff, 0xfe]))),
            ProtoError::InvalidUtf8 {
                message: "ObjectMeta",
                field: "name",
            },
        ),
        (
            "IntOrString type 2",
            envelope(
                "apps/v1",
                "Deployment",
                &lf(2, &lf(4, &lf(2, &lf(1, &vf(1, 2))))),
            ),
            ProtoError::InvalidValue {
                message: "RollingUpdateDeployment",
                field: "maxUnavailable",
                detail: "IntOrString type 2 is neither 0 (int) nor 1 (string)".into(),
            },
        ),
    ];
    for (name, body, want) in cases {
        assert_eq!(decode_body(&body), Err(want), "{name}");
    }
    // Every truncation of a valid body fails cleanly (or, at a field boundary, decodes).
    for cut in 0..good.len() {
        let _ = decode_body(&good[..cut]);
    }
    assert!(decode_body(&good[..good.len() - 1]).is_err());
}

proptest::proptest! {
    #[test]
    fn arbitrary_bytes_never_panic(tail in proptest::collection::vec(proptest::num::u8::ANY, 0..256)) {
        let mut body = b"k8s\0".to_vec();
        body.extend(tail);
        let _ = decode_body(&body);
    }

    #[test]
    fn arbitrary_object_bytes_never_panic(raw in proptest::collection::vec(proptest::num::u8::ANY, 0..256)) {
        for (api_version, kind) in [("apps/v1", "Deployment"), ("v1", "Pod"), ("coordination.k8s.io/v1", "Lease")] {
            let _ = decode_body(&envelope(api_version, kind, &raw));
        }
    }
}
