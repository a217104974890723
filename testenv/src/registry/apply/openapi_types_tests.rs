//! Tests of [`super`] (`openapi_types.rs`), apart from it so that the shared test types it uses
//! (`test_types.rs`) may import the engine without a module circle.

use super::*;
use crate::registry::apply::path::Path;
use crate::registry::apply::schema::TypedSchema;
use crate::registry::apply::test_types::upstream_file;
use crate::registry::apply::typed::{merge, to_set};
use serde_json::json;

fn deployment() -> Option<TypedSchema> {
    let rel = "k8s.io/kubernetes@v1.37.2/api/openapi-spec/v3/apis__apps__v1_openapi.json";
    let Some(text) = upstream_file(rel).and_then(|p| std::fs::read_to_string(p).ok()) else {
        eprintln!(
            "skipped: {rel} is not in the Go module cache (run `cargo xtask upstream build`)"
        );
        return None;
    };
    let doc: Value = serde_json::from_str(&text).expect("upstream's spec parses");
    let types = OpenApiTypes::from_document(&doc);
    let name = types
        .name_of_kind("apps", "v1", "Deployment")
        .expect("Deployment has a definition")
        .to_string();
    Some(TypedSchema::new(Arc::new(types), TypeRef::named(&name)))
}

static DOC: std::sync::OnceLock<Value> = std::sync::OnceLock::new();

#[test]
fn a_lookup_resolves_as_a_map() {
    let defs = json!({"a.B": {"type": "object", "properties": {"c": {"type": "string"}}}});
    DOC.get_or_init(|| defs.clone());
    let types = OpenApiTypes::from_lookup(|n| DOC.get().and_then(|d| d.get(n)));
    let atom = types.resolve_named("a.B").expect("resolves");
    assert!(atom.map.is_some_and(|m| m.fields.contains_key("c")));
    assert!(types.resolve_named("a.Missing").is_none());
}

#[test]
fn upstream_deployment_types() {
    let Some(s) = deployment() else { return };
    let live = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "a"}},
            "template": {"metadata": {"labels": {"app": "a"}}, "spec": {"containers": [
                {"name": "a", "image": "a:1", "ports": [{"containerPort": 80}]},
                {"name": "b", "image": "b:1", "resources": {"limits": {"cpu": "1"}}}]}}}});
    let cfg = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"},
        "spec": {"template": {"spec": {"containers": [{"name": "b", "image": "b:2"}]}}}});
    // containers merge by name; the other container and b's other fields stay
    let merged = merge(&s, &live, &cfg).expect("merges");
    assert_eq!(
        merged["spec"]["template"]["spec"]["containers"],
        json!([{"name": "a", "image": "a:1", "ports": [{"containerPort": 80}]},
               {"name": "b", "image": "b:2", "resources": {"limits": {"cpu": "1"}}}])
    );
    let set = to_set(&s, &live).expect("valid");
    let texts: Vec<String> = set.paths().iter().map(Path::to_string).collect();
    for want in [
        // ports are keyed by containerPort and protocol, protocol defaulted to TCP
        ".spec.template.spec.containers[name=\"a\"].ports[containerPort=80,protocol=\"TCP\"].containerPort",
        // a label selector is atomic
        ".spec.selector",
        // quantities are scalars
        ".spec.template.spec.containers[name=\"b\"].resources.limits.cpu",
        ".metadata.name",
    ] {
        assert!(texts.iter().any(|t| t == want), "{want} not in {texts:?}");
    }
    assert!(!texts.iter().any(|t| t == ".spec.selector.matchLabels.app"));
}
