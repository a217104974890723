//! Pod-template equality ignoring the `pod-template-hash` label (upstream `EqualIgnoreHash`),
//! and a matcher that compares one template with many without redoing its share of the work.
//!
//! Upstream compares with apimachinery's *semantic* deep equality, under which a nil and an
//! empty map or slice are equal. The exact comparison here is of the JSON forms after dropping
//! `null`s, empty strings, empty arrays and empty objects, which gives the same answer for every
//! template the API server can return. Known deviations (documented, harmless for the
//! controller because the API server defaults both templates the same way): a pointer to an
//! all-zero struct equals an absent one, and quantities are compared textually (`"1000m"` !=
//! `"1"`).
//!
//! That comparison serializes both templates, which a Deployment sync did for every one of its
//! ReplicaSets, several times. Two shortcuts keep its answer and skip the work: templates equal
//! field by field (the hash label aside, labels absent and empty alike) are equal semantically
//! too, so only templates that differ somewhere are serialized; and the Deployment's side is
//! serialized once per sync, not once per ReplicaSet.

use std::cell::OnceCell;
use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::PodTemplateSpec;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use serde_json::Value;

use crate::util::hash::DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY;

/// `EqualIgnoreHash`: whether two pod templates are equal once the `pod-template-hash` label
/// is removed from both (semantics in the module's documentation).
pub(crate) fn equal_ignore_hash(t1: &PodTemplateSpec, t2: &PodTemplateSpec) -> bool {
    TemplateMatcher::new(t1).matches(t2)
}

/// One template (a Deployment's) to compare with many (its ReplicaSets'): answers as
/// [`equal_ignore_hash`], serializing its own template at most once.
#[derive(Debug)]
pub(crate) struct TemplateMatcher<'a> {
    wanted: &'a PodTemplateSpec,
    normalized: OnceCell<Value>,
}

impl<'a> TemplateMatcher<'a> {
    /// A matcher for `wanted`.
    pub(crate) fn new(wanted: &'a PodTemplateSpec) -> Self {
        Self {
            wanted,
            normalized: OnceCell::new(),
        }
    }

    /// Whether `other` equals the wanted template, the hash label aside.
    pub(crate) fn matches(&self, other: &PodTemplateSpec) -> bool {
        if equal_fields_ignore_hash(self.wanted, other) {
            return true;
        }
        let wanted = self
            .normalized
            .get_or_init(|| normalized_without_hash(self.wanted));
        *wanted == normalized_without_hash(other)
    }
}

/// [`equal_ignore_hash`] without its shortcut: the serialized comparison alone (tests check
/// that the two agree).
#[cfg(test)]
pub(crate) fn equal_ignore_hash_serialized(t1: &PodTemplateSpec, t2: &PodTemplateSpec) -> bool {
    normalized_without_hash(t1) == normalized_without_hash(t2)
}

/// Field-by-field equality, the hash label aside and absent labels equal to empty ones. Its
/// `true` implies the semantic equality; its `false` says nothing (a nil against an empty
/// value elsewhere differs here and not there).
fn equal_fields_ignore_hash(a: &PodTemplateSpec, b: &PodTemplateSpec) -> bool {
    if a.spec != b.spec {
        return false;
    }
    let empty = ObjectMeta::default();
    equal_meta_ignore_hash(
        a.metadata.as_ref().unwrap_or(&empty),
        b.metadata.as_ref().unwrap_or(&empty),
    )
}

fn equal_meta_ignore_hash(a: &ObjectMeta, b: &ObjectMeta) -> bool {
    // Every field named, so that a field added to ObjectMeta fails to compile here rather
    // than being left out of the comparison.
    let ObjectMeta {
        annotations,
        creation_timestamp,
        deletion_grace_period_seconds,
        deletion_timestamp,
        finalizers,
        generate_name,
        generation,
        labels,
        managed_fields,
        name,
        namespace,
        owner_references,
        resource_version,
        self_link,
        uid,
    } = a;
    *annotations == b.annotations
        && *creation_timestamp == b.creation_timestamp
        && *deletion_grace_period_seconds == b.deletion_grace_period_seconds
        && *deletion_timestamp == b.deletion_timestamp
        && *finalizers == b.finalizers
        && *generate_name == b.generate_name
        && *generation == b.generation
        && *managed_fields == b.managed_fields
        && *name == b.name
        && *namespace == b.namespace
        && *owner_references == b.owner_references
        && *resource_version == b.resource_version
        && *self_link == b.self_link
        && *uid == b.uid
        && labels_without_hash(labels.as_ref()).eq(labels_without_hash(b.labels.as_ref()))
}

fn labels_without_hash(
    labels: Option<&BTreeMap<String, String>>,
) -> impl Iterator<Item = (&String, &String)> {
    labels
        .into_iter()
        .flatten()
        .filter(|(k, _)| k.as_str() != DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY)
}

/// The template's JSON form without the hash label and without empty values.
fn normalized_without_hash(t: &PodTemplateSpec) -> Value {
    let mut value = serde_json::to_value(t).unwrap_or(Value::Null);
    if let Some(Value::Object(labels)) = value.pointer_mut("/metadata/labels") {
        labels.remove(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY);
    }
    prune_empty(&mut value);
    value
}

/// Removes zero-length values recursively; returns whether `v` itself is now "empty".
fn prune_empty(v: &mut Value) -> bool {
    match v {
        Value::Null => true,
        Value::String(s) => s.is_empty(),
        Value::Array(items) => {
            for item in items.iter_mut() {
                prune_empty(item);
            }
            items.is_empty()
        }
        Value::Object(map) => {
            map.retain(|_, child| !prune_empty(child));
            map.is_empty()
        }
        Value::Bool(_) | Value::Number(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use k8s_openapi::api::core::v1::{Container, EnvVar, PodSpec};
    use proptest::prelude::*;

    /// Maps that are absent, empty, or hold some of a few entries (the hash label among them).
    fn small_map() -> impl Strategy<Value = Option<BTreeMap<String, String>>> {
        prop_oneof![
            Just(None),
            proptest::collection::btree_map(
                prop_oneof![
                    Just("app".to_string()),
                    Just(DEFAULT_DEPLOYMENT_UNIQUE_LABEL_KEY.to_string()),
                ],
                prop_oneof![
                    Just(String::new()),
                    Just("a".to_string()),
                    Just("b".to_string())
                ],
                0..3,
            )
            .prop_map(Some),
        ]
    }

    fn template() -> impl Strategy<Value = PodTemplateSpec> {
        let env = prop_oneof![
            Just(None),
            Just(Some(Vec::new())),
            Just(Some(vec![EnvVar {
                name: "ROLL".into(),
                value: Some("1".into()),
                ..Default::default()
            }])),
        ];
        let image = prop_oneof![
            Just(None),
            Just(Some(String::new())),
            Just(Some("x".into()))
        ];
        (
            small_map(),
            small_map(),
            proptest::option::of(Just(())),
            env,
            image,
        )
            .prop_map(
                |(labels, annotations, has_spec, env, image)| PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        labels,
                        annotations,
                        ..Default::default()
                    }),
                    spec: has_spec.map(|()| PodSpec {
                        containers: vec![Container {
                            name: "c".into(),
                            env,
                            image,
                            ..Default::default()
                        }],
                        ..Default::default()
                    }),
                },
            )
    }

    proptest! {
        /// The shortcuts never change the answer: over templates that differ in absent against
        /// empty values, the hash label and real content, the matcher answers as the
        /// serialized comparison, whichever side it was built for.
        #[test]
        fn shortcuts_answer_as_the_serialized_comparison(a in template(), b in template()) {
            let want = equal_ignore_hash_serialized(&a, &b);
            prop_assert_eq!(TemplateMatcher::new(&a).matches(&b), want);
            prop_assert_eq!(TemplateMatcher::new(&b).matches(&a), want);
        }
    }
}
