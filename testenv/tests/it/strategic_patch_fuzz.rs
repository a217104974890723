//! Property tests for kcm-testenv's strategic merge patch over documents and patches built from
//! the field names whose lists have a strategy (containers, env, ownerReferences, finalizers,
//! conditions) and the directives (`$patch`, `$retainKeys`, `$setElementOrder/`,
//! `$deleteFromPrimitiveList/`):
//!
//! * any document and patch are answered without panicking, with an object on success;
//! * a patch of maps and scalars only is exactly a JSON merge patch (RFC 7386);
//! * a patch without directives applied twice gives what it gave once;
//! * no directive is ever stored.
//!
//! Case count: proptest's default (256), scaled with `PROPTEST_CASES`.

use kcm_testenv::registry::StorageId;
use kcm_testenv::registry::patch::strategic;
use proptest::prelude::*;
use serde_json::{Map, Value};

const KEYS: &[&str] = &[
    "metadata",
    "spec",
    "status",
    "template",
    "containers",
    "env",
    "ownerReferences",
    "finalizers",
    "conditions",
    "name",
    "uid",
    "type",
    "image",
    "value",
];
const DIRECTIVE_KEYS: &[&str] = &[
    "$patch",
    "$retainKeys",
    "$setElementOrder/containers",
    "$setElementOrder/env",
    "$setElementOrder/conditions",
    "$deleteFromPrimitiveList/finalizers",
];
const IDS: &[StorageId] = &[
    StorageId::PODS,
    StorageId::DEPLOYMENTS,
    StorageId::REPLICASETS,
];

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        (-3i64..3).prop_map(Value::from),
        prop::sample::select(&["a", "b", "c", "Ready", "merge", "replace", "delete"][..])
            .prop_map(Value::from),
    ]
}

/// JSON values over the field names above; `directives` adds directive keys to maps and
/// `arrays` allows lists.
fn json(directives: bool, arrays: bool) -> impl Strategy<Value = Value> {
    let key = if directives {
        prop::sample::select([KEYS, DIRECTIVE_KEYS].concat()).boxed()
    } else {
        prop::sample::select(KEYS).boxed()
    };
    scalar().prop_recursive(5, 48, 5, move |inner| {
        let map = prop::collection::btree_map(key.clone(), inner.clone(), 0..5)
            .prop_map(|m| Value::Object(m.into_iter().map(|(k, v)| (k.to_string(), v)).collect()));
        if arrays {
            prop_oneof![
                2 => map,
                1 => prop::collection::vec(inner, 0..4).prop_map(Value::Array),
            ]
            .boxed()
        } else {
            map.boxed()
        }
    })
}

fn object(v: Value) -> Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => Map::new(),
    }
}

/// The paths whose lists have a strategy (or are plain lists), so that patches reach them.
const LIST_PATHS: &[&[&str]] = &[
    &["metadata", "finalizers"],
    &["metadata", "ownerReferences"],
    &["status", "conditions"],
    &["spec", "containers"],
    &["spec", "tolerations"],
    &["spec", "template", "spec", "containers"],
];

/// A patch of random content merged with lists placed at [`LIST_PATHS`] (their elements are
/// maps with merge keys more often than not).
fn targeted_patch(directives: bool) -> impl Strategy<Value = Value> {
    let element = prop_oneof![
        2 => (prop::sample::select(&["name", "uid", "type"][..]), prop::sample::select(&["a", "b"][..]), json(directives, true))
            .prop_map(|(k, v, rest)| {
                let mut m = object(rest);
                m.insert(k.to_string(), Value::from(v));
                Value::Object(m)
            }),
        1 => json(directives, true),
    ];
    let placed = (
        prop::sample::select(LIST_PATHS),
        prop::collection::vec(element, 0..4),
    )
        .prop_map(|(path, items)| {
            path.iter().rev().fold(Value::Array(items), |inner, k| {
                Value::Object(Map::from_iter([(k.to_string(), inner)]))
            })
        });
    (json(directives, true), prop::collection::vec(placed, 0..3)).prop_map(|(base, placed)| {
        let mut patch = Value::Object(object(base));
        for p in placed {
            json_patch::merge(&mut patch, &p);
        }
        patch
    })
}

fn doc() -> impl Strategy<Value = Value> {
    json(false, true).prop_map(|v| Value::Object(object(v)))
}

/// A directive key anywhere in `v`, as a path for the failure message.
fn stored_directive(v: &Value, path: &str) -> Option<String> {
    match v {
        Value::Object(m) => m.iter().find_map(|(k, v)| {
            if k.starts_with('$') {
                Some(format!("{path}/{k}"))
            } else {
                stored_directive(v, &format!("{path}/{k}"))
            }
        }),
        Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, v)| stored_directive(v, &format!("{path}/{i}"))),
        _ => None,
    }
}

/// Sets every list element's merge key (`name`, `uid`, `type`) that is null, a map or a list
/// to a string. Such an element's stored form differs from it (nulls dropped; upstream's typed
/// decoding stores `""` for a null), so it matches nothing and is appended again on every
/// application, upstream too: idempotence does not hold for it. Real merge keys are strings or
/// numbers.
fn scalar_merge_keys(v: &mut Value) {
    match v {
        Value::Object(m) => m.values_mut().for_each(scalar_merge_keys),
        Value::Array(a) => {
            for e in a {
                if let Value::Object(m) = e {
                    for k in ["name", "uid", "type"] {
                        if let Some(v) = m.get_mut(k)
                            && (v.is_null() || v.is_object() || v.is_array())
                        {
                            *v = Value::from("a");
                        }
                    }
                }
                scalar_merge_keys(e);
            }
        }
        _ => {}
    }
}

proptest! {
    #[test]
    fn any_patch_is_answered(id in prop::sample::select(IDS), doc in json(true, true), patch in prop_oneof![json(true, true), targeted_patch(true)]) {
        if let Ok(out) = strategic::apply(id, doc, &patch) {
            prop_assert!(out.is_object());
        }
    }

    #[test]
    fn maps_and_scalars_patch_like_a_json_merge_patch(id in prop::sample::select(IDS), doc in doc(), patch in json(false, false)) {
        let patch = Value::Object(object(patch));
        let got = strategic::apply(id, doc.clone(), &patch)
            .map_err(|e| TestCaseError::fail(format!("{e} for {patch}")))?;
        let mut want = doc;
        json_patch::merge(&mut want, &patch);
        prop_assert_eq!(got, want, "patch {}", patch);
    }

    #[test]
    fn patches_without_directives_are_idempotent(id in prop::sample::select(IDS), doc in doc(), patch in targeted_patch(false)) {
        let mut patch = Value::Object(object(patch));
        scalar_merge_keys(&mut patch);
        if let Ok(once) = strategic::apply(id, doc, &patch) {
            let twice = strategic::apply(id, once.clone(), &patch)
                .map_err(|e| TestCaseError::fail(format!("second application failed: {e}")))?;
            prop_assert_eq!(twice, once, "patch {}", patch);
        }
    }

    #[test]
    fn directives_are_never_stored(id in prop::sample::select(IDS), doc in doc(), patch in targeted_patch(true)) {
        let patch = Value::Object(object(patch));
        if let Ok(out) = strategic::apply(id, doc, &patch) {
            prop_assert_eq!(stored_directive(&out, ""), None, "patch {}\nresult {}", patch, out);
        }
    }
}
