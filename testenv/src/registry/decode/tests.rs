//! Decoding by schema, with the error texts kube-apiserver v1.37.2 answered for the same
//! bodies (probed over HTTP; the `… cannot be handled as a …:` prefix is the caller's).

use serde_json::{Value, json};

use super::*;
use crate::registry::schema::catalog;

fn run(kind: (&str, &str, &str), v: Value) -> Result<Decoded, DecodeError> {
    let root = catalog().kind(kind.0, kind.1, kind.2).expect("kind");
    decode(root, v)
}

const CONFIGMAP: (&str, &str, &str) = ("", "v1", "ConfigMap");
const SERVICE: (&str, &str, &str) = ("", "v1", "Service");

#[test]
fn type_errors_as_go_words_them() {
    let cases: &[((&str, &str, &str), Value, &str)] = &[
        (
            CONFIGMAP,
            json!({"data": {"x": 5}}),
            "json: cannot unmarshal number into Go struct field ConfigMap.data of type string",
        ),
        (
            CONFIGMAP,
            json!({"data": 5}),
            "json: cannot unmarshal number into Go struct field ConfigMap.data of type map[string]string",
        ),
        (
            CONFIGMAP,
            json!({"metadata": {"labels": {"a": 1}}}),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type string",
        ),
        (
            CONFIGMAP,
            json!({"metadata": "x"}),
            "json: cannot unmarshal string into Go struct field ConfigMap.metadata of type v1.ObjectMeta",
        ),
        (
            SERVICE,
            json!({"spec": {"ports": [{"port": "x"}]}}),
            "json: cannot unmarshal string into Go struct field ServicePort.spec.ports.port of type int32",
        ),
        (
            SERVICE,
            json!({"spec": {"ports": [{"port": 1.5}]}}),
            "json: cannot unmarshal number 1.5 into Go struct field ServicePort.spec.ports.port of type int32",
        ),
        (
            SERVICE,
            json!({"spec": {"ports": [{"port": 80, "protocol": 5}]}}),
            "json: cannot unmarshal number into Go struct field ServicePort.spec.ports.protocol of type v1.Protocol",
        ),
        (
            SERVICE,
            json!({"spec": {"ports": [{"port": 80, "targetPort": true}]}}),
            "json: cannot unmarshal bool into Go struct field ServicePort.spec.ports.targetPort of type int32",
        ),
        (
            CONFIGMAP,
            json!({"metadata": {"creationTimestamp": 5}}),
            "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.creationTimestamp of type string",
        ),
        (
            SERVICE,
            json!({"spec": {"ports": {"port": 1}}}),
            "json: cannot unmarshal object into Go struct field ServiceSpec.spec.ports of type []v1.ServicePort",
        ),
        (
            ("", "v1", "Secret"),
            json!({"data": {"x": "!!!"}}),
            "illegal base64 data at input byte 0",
        ),
        (
            ("", "v1", "ResourceQuota"),
            json!({"spec": {"hard": {"cpu": "x"}}}),
            "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        ),
        (
            CONFIGMAP,
            json!({"metadata": {"creationTimestamp": "x"}}),
            "parsing time \"x\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"x\" as \"2006\"",
        ),
    ];
    for (kind, body, want) in cases {
        let got = run(*kind, body.clone());
        assert_eq!(got, Err(DecodeError(want.to_string())), "{body}");
    }
}

#[test]
fn unknown_fields_are_dropped_and_named_as_the_strict_decoder_does() {
    let d = run(
        SERVICE,
        json!({"metadata": {"name": "b", "foo": 1}, "spec": {"ports": [{"port": 80, "bar": 2}], "x": {}}}),
    )
    .expect("decodes");
    assert_eq!(
        d.unknown,
        ["metadata.foo", "spec.ports[0].bar", "spec.x"],
        "{}",
        d.value
    );
    assert_eq!(d.value["metadata"], json!({"name": "b"}));
    assert!(d.value["spec"].get("x").is_none());
}

#[test]
fn zero_values_and_default_markers_the_go_type_writes() {
    let d = run(SERVICE, json!({"spec": {"ports": [{"port": 80}]}})).expect("decodes");
    // protocol is a +default marker; status and its loadBalancer are structs, always written
    assert_eq!(d.value["spec"]["ports"][0]["protocol"], "TCP");
    assert_eq!(d.value["status"], json!({"loadBalancer": {}}));
    assert_eq!(d.value["metadata"], json!({}));
    // null reads as absent
    let d = run(CONFIGMAP, json!({"data": null, "immutable": false})).expect("decodes");
    assert_eq!(d.value, json!({"metadata": {}, "immutable": false}));
}

#[test]
fn empty_values_go_leaves_out() {
    // kube-apiserver answered this create without labels, finalizers, data or externalIPs
    let d = run(
        CONFIGMAP,
        json!({"metadata": {"name": "a", "labels": {}, "annotations": null, "finalizers": []},
               "data": {}, "immutable": false}),
    )
    .expect("decodes");
    assert_eq!(
        d.value,
        json!({"metadata": {"name": "a"}, "immutable": false})
    );
    let d = run(
        SERVICE,
        json!({"spec": {"ports": [{"port": 80, "protocol": ""}], "externalIPs": [], "clusterIP": ""}}),
    )
    .expect("decodes");
    // an empty protocol is defaulted as an absent one
    assert_eq!(
        d.value["spec"],
        json!({"ports": [{"port": 80, "protocol": "TCP"}]})
    );
}

#[test]
fn nil_slices_without_omitempty_are_null() {
    // kube-apiserver answered an HPA create with "currentMetrics": null
    let d = run(
        ("autoscaling", "v2", "HorizontalPodAutoscaler"),
        json!({"spec": {"maxReplicas": 3}}),
    )
    .expect("decodes");
    assert_eq!(
        d.value["status"],
        json!({"currentMetrics": null, "desiredReplicas": 0})
    );
}

#[test]
fn values_come_out_as_go_writes_them() {
    let d = run(
        ("", "v1", "ResourceQuota"),
        json!({"spec": {"hard": {"cpu": "1000m", "memory": 1024}}}),
    )
    .expect("decodes");
    assert_eq!(
        d.value["spec"]["hard"],
        json!({"cpu": "1", "memory": "1024"})
    );
    let d = run(
        CONFIGMAP,
        json!({"metadata": {"creationTimestamp": "2026-01-02T03:04:05+02:00"}}),
    )
    .expect("decodes");
    assert_eq!(
        d.value["metadata"]["creationTimestamp"],
        "2026-01-02T01:04:05Z"
    );
    let d = run(("", "v1", "Secret"), json!({"data": {"k": "aGk\n="}})).expect("decodes");
    assert_eq!(d.value["data"]["k"], "aGk=");
    // free-form values stay as they are
    let d = run(
        ("apps", "v1", "ControllerRevision"),
        json!({"data": {"any": [1, {"x": null}]}, "revision": 3}),
    )
    .expect("decodes");
    assert_eq!(d.value["data"], json!({"any": [1, {"x": null}]}));
}

#[test]
fn int_or_string_accepts_both() {
    let d = run(
        SERVICE,
        json!({"spec": {"ports": [{"port": 80, "targetPort": "http"}, {"port": 81, "targetPort": 8081}]}}),
    )
    .expect("decodes");
    assert_eq!(d.value["spec"]["ports"][0]["targetPort"], "http");
    assert_eq!(d.value["spec"]["ports"][1]["targetPort"], 8081);
}

#[test]
fn go_type_names() {
    let svc = catalog().kind("", "v1", "Service").expect("Service");
    let spec = svc.property("spec").expect("spec");
    assert_eq!(go_type(spec), "v1.ServiceSpec");
    assert_eq!(
        go_type(spec.property("ports").expect("ports")),
        "[]v1.ServicePort"
    );
    assert_eq!(
        go_type(spec.property("selector").expect("selector")),
        "map[string]string"
    );
    let secret = catalog().kind("", "v1", "Secret").expect("Secret");
    assert_eq!(
        go_type(secret.property("data").expect("data")),
        "map[string][]uint8"
    );
}
