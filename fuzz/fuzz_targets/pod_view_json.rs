//! JSON decoding of the projected pod type: no input panics, and whenever k8s-openapi's full
//! Pod accepts the input, `PodView` accepts it too and holds the same values.
#![no_main]

use k8s_openapi::api::core::v1::Pod;
use kcm_controller::PodView;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let _ = serde_json::from_slice::<PodView>(data);
    // Compared on documents without duplicate keys (re-serialized, the last value wins): an
    // API server never sends duplicates, and PodView refuses them where k8s-openapi takes the
    // last one (the first run stopped on a duplicated `uid`).
    let Ok(doc) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    let text = doc.to_string();
    let view = serde_json::from_str::<PodView>(&text);
    let Ok(pod) = serde_json::from_str::<Pod>(&text) else {
        return;
    };
    let view = view.expect("PodView accepts what Pod accepts");
    assert_eq!(view.metadata.name, pod.metadata.name);
    assert_eq!(view.metadata.labels, pod.metadata.labels);
    assert_eq!(
        view.metadata.owner_references,
        pod.metadata.owner_references
    );
    let spec_node = pod.spec.as_ref().and_then(|s| s.node_name.clone());
    assert_eq!(view.spec.node_name, spec_node);
    let phase = pod.status.as_ref().and_then(|s| s.phase.clone());
    assert_eq!(view.status.phase, phase);
});
