//! Measures the memory a cached [`PodView`] retains (inline + heap) for a typical
//! 2.3 KB pod, against the full k8s-openapi `Pod`, with a counting allocator.
//!
//! Run `cargo test -p kcm-controller --test pod_view_size -- --nocapture` to see the figures.

use std::alloc::System;

use k8s_openapi::api::core::v1::Pod;
use kcm_controller::pod_view::PodView;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const TYPICAL: &str = include_str!("data/pod_typical.json");
const FULL: &str = include_str!("data/pod.json");

/// Bytes retained on the heap by `T` deserialized from `json`, plus `size_of::<T>()`.
fn retained<T: serde::de::DeserializeOwned>(json: &str) -> usize {
    let region = Region::new(GLOBAL);
    let value: T = serde_json::from_str(json).expect("valid pod json");
    let stats = region.change();
    // bytes_reallocated is the signed net growth of reallocations.
    let heap = (stats.bytes_allocated as isize + stats.bytes_reallocated
        - stats.bytes_deallocated as isize)
        .max(0) as usize;
    drop(value);
    heap + std::mem::size_of::<T>()
}

#[test]
fn pod_view_retains_less_than_3_1_kb_for_a_typical_pod() {
    let compact =
        serde_json::to_string(&serde_json::from_str::<serde_json::Value>(TYPICAL).unwrap())
            .unwrap()
            .len();
    let view = retained::<PodView>(TYPICAL);
    let full = retained::<Pod>(TYPICAL);
    let view_with_mf = retained::<PodView>(FULL);
    let full_with_mf = retained::<Pod>(FULL);
    println!(
        "{{\"json_bytes\":{compact},\"pod_view_bytes\":{view},\"k8s_openapi_pod_bytes\":{full},\
         \"pod_view_bytes_full_fixture\":{view_with_mf},\"k8s_openapi_pod_bytes_full_fixture\":{full_with_mf}}}"
    );
    assert!(view <= 3100, "PodView retains {view} bytes (goal ≤ 3100)");
    assert!(
        view < full,
        "PodView ({view}) should be smaller than Pod ({full})"
    );
}
