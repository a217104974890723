//! kcm-testenv's strategic merge patch: the input is a JSON array `[doc, patch]` (anything else
//! is skipped); no input panics and no directive is stored.
//!
//! (A first run stopped on `$deleteFromPrimitivainers`, a mutated key: only recognised
//! directives are checked, other `$` keys are plain fields.)
#![no_main]

use kcm_testenv::registry::patch::strategic;
use kcm_testenv::registry::StorageId;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

/// A key the patch understands as a directive (other `$` keys are ordinary, unknown fields).
fn is_directive(k: &str) -> bool {
    k == "$patch"
        || k == "$retainKeys"
        || k.starts_with("$setElementOrder/")
        || k.starts_with("$deleteFromPrimitiveList/")
}

fn has_directive(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.iter().any(|(k, v)| is_directive(k) || has_directive(v)),
        Value::Array(a) => a.iter().any(has_directive),
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(Value::Array(pair)) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let [doc, patch] = pair.as_slice() else {
        return;
    };
    for id in [
        StorageId::Pods,
        StorageId::Deployments,
        StorageId::ReplicaSets,
    ] {
        if let Ok(out) = strategic::apply(id, doc.clone(), patch) {
            assert!(out.is_object());
            assert!(has_directive(doc) || !has_directive(&out), "{out}");
        }
    }
});
