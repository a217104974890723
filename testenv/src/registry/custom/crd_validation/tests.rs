//! Table tests of CRD validation, after upstream's `TestValidateCustomResourceDefinition`.

use serde_json::{Value, json};

use super::validate_crd;
use crate::registry::api_status::FieldError;

fn crd() -> Value {
    json!({
        "metadata": {"name": "widgets.example.com"},
        "spec": {
            "group": "example.com",
            "scope": "Namespaced",
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "versions": [{"name": "v1", "served": true, "storage": true,
                          "schema": {"openAPIV3Schema": {"type": "object"}}}],
        },
        "status": {"acceptedNames": {"plural": "", "kind": ""}, "storedVersions": ["v1"]},
    })
}

fn texts(errs: &[FieldError]) -> Vec<String> {
    errs.iter().map(FieldError::text).collect()
}

#[test]
fn crd_rules_table() {
    assert!(validate_crd(&crd(), None, false).is_empty());
    let mut gone = crd();
    gone["status"]["storedVersions"] = json!(["v0", "v1"]);
    assert_eq!(
        texts(&validate_crd(&gone, None, false)),
        vec![
            "status.storedVersions[0]: Invalid value: \"v0\": missing from spec.versions; v0 was previously a storage version, and must remain in spec.versions until a storage migration ensures no data remains persisted in v0 and removes v0 from status.storedVersions"
        ]
    );
    // (mutation, expected error texts, or the expected beginning of one when its value is long)
    type Case = (fn(&mut Value), Vec<&'static str>);
    let cases: Vec<Case> = vec![
        (
            |c| c["metadata"]["name"] = json!("gadgets.example.com"),
            vec![
                "metadata.name: Invalid value: \"gadgets.example.com\": must be spec.names.plural+\".\"+spec.group",
            ],
        ),
        (
            |c| {
                c["spec"]["group"] = json!("example");
                c["metadata"]["name"] = json!("widgets.example");
            },
            vec![
                "spec.group: Invalid value: \"example\": should be a domain with at least one dot",
            ],
        ),
        (
            |c| c["spec"]["scope"] = json!("Global"),
            vec![
                "spec.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespaced\"",
            ],
        ),
        (
            |c| c["spec"]["names"]["kind"] = json!("Wid_get"),
            vec![
                "spec.names.kind: Invalid value: \"Wid_get\": may have mixed case, but should otherwise match: a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
            ],
        ),
        (
            |c| c["spec"]["names"]["listKind"] = json!(""),
            vec!["spec.names.listKind: Required value"],
        ),
        (
            |c| c["spec"]["versions"][0]["schema"] = json!(null),
            vec!["spec.versions[0].schema.openAPIV3Schema: Required value"],
        ),
        (
            |c| c["spec"]["versions"][0]["storage"] = json!(false),
            vec!["spec.versions: Invalid value: "],
        ),
        (
            |c| {
                c["spec"]["versions"][0]["name"] = json!("V1");
                c["status"]["storedVersions"] = json!(["V1"]);
            },
            vec!["spec.versions[0].name: Invalid value: \"V1\": a DNS-1035 label"],
        ),
        (
            |c| c["spec"]["versions"][0]["subresources"] = json!({"scale": {"specReplicasPath": ".status.replicas", "statusReplicasPath": "status.replicas"}}),
            vec![
                "spec.subresources.scale.specReplicasPath: Invalid value: \".status.replicas\": should be a json path under .spec",
                "spec.subresources.scale.statusReplicasPath: Invalid value: \"status.replicas\": must be a simple json path starting with .",
            ],
        ),
        (
            |c| {
                c["spec"]["versions"][0]["additionalPrinterColumns"] =
                    json!([{"name": "R", "type": "int", "jsonPath": ".spec.r"}])
            },
            vec![
                "spec.additionalPrinterColumns[0].type: Invalid value: \"int\": must be one of boolean,date,integer,number,string",
            ],
        ),
    ];
    for (mutate, want) in cases {
        let mut c = crd();
        mutate(&mut c);
        let got = texts(&validate_crd(&c, None, false));
        assert_eq!(got.len(), want.len(), "{got:?}");
        for (g, w) in got.iter().zip(&want) {
            assert!(g.starts_with(w), "{g}\n  does not start with\n{w}");
        }
    }
}

#[test]
fn per_version_parts_point_at_their_version_when_they_differ() {
    let mut c = crd();
    c["spec"]["versions"] = json!([
        {"name": "v1", "served": true, "storage": true,
         "schema": {"openAPIV3Schema": {"type": "object", "properties": {"a": {"type": "array"}}}}},
        {"name": "v2", "served": true, "storage": false,
         "schema": {"openAPIV3Schema": {"type": "object"}}},
    ]);
    assert_eq!(
        texts(&validate_crd(&c, None, false)),
        vec![
            "spec.versions[0].schema.openAPIV3Schema.properties[a].items: Required value: must be specified"
        ]
    );
    c["spec"]["versions"][1]["schema"] = c["spec"]["versions"][0]["schema"].clone();
    assert_eq!(
        texts(&validate_crd(&c, None, false)),
        vec![
            "spec.validation.openAPIV3Schema.properties[a].items: Required value: must be specified"
        ]
    );
}

#[test]
fn immutable_fields_on_update() {
    let mut old = crd();
    old["status"]["conditions"] = json!([{"type": "Established", "status": "True"}]);
    let mut new = old.clone();
    new["spec"]["scope"] = json!("Cluster");
    new["spec"]["names"]["kind"] = json!("Gadget");
    assert_eq!(
        texts(&validate_crd(&new, Some(&old), false)),
        vec![
            "spec.scope: Invalid value: \"Cluster\": field is immutable",
            "spec.names.kind: Invalid value: \"Gadget\": field is immutable",
        ]
    );
}
