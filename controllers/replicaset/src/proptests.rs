//! Property tests: status invariants and the per-sync create/delete bounds.

use std::sync::Arc;

use k8s_openapi::jiff::SignedDuration;
use kcm_controller::pod_view::PodView;
use proptest::prelude::*;

use crate::status::calculate_status;
use crate::testing::{Harness, labels, new_pod, new_replica_set, t0};

fn arb_pod() -> impl Strategy<Value = (u8, bool, i64, bool)> {
    // (phase selector, ready, seconds since ready, fully labelled)
    (0u8..3, any::<bool>(), 0i64..100, any::<bool>())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn status_counts_are_nested(pods in prop::collection::vec(arb_pod(), 0..20), min_ready in 0i32..60) {
        let mut rs = new_replica_set(3, &[("name", "foo")]);
        rs.spec.min_ready_seconds = Some(min_ready);
        let active: Vec<Arc<PodView>> = pods
            .iter()
            .enumerate()
            .map(|(i, &(phase, ready, since, full))| {
                let phase = ["Pending", "Running", "Unknown"][usize::from(phase)];
                let mut p = new_pod(&format!("p{i}"), &rs, phase, Some(t0() - SignedDuration::from_secs(since)), true);
                if phase == "Running" && !ready {
                    p.status.conditions[0].status = "False".into();
                }
                if full {
                    p.metadata.labels = Some(labels(&[("name", "foo"), ("type", "production")]));
                }
                Arc::new(p)
            })
            .collect();
        let s = calculate_status(&rs, &active, Some(0), None, t0());
        let (f, r, a) = (
            s.fully_labeled_replicas.unwrap_or(0),
            s.ready_replicas.unwrap_or(0),
            s.available_replicas.unwrap_or(0),
        );
        prop_assert_eq!(s.replicas as usize, active.len());
        prop_assert!(a <= r && r <= s.replicas && f <= s.replicas);
        let full = pods.iter().filter(|p| p.3).count();
        prop_assert_eq!(f as usize, full);
    }

    #[test]
    fn one_sync_creates_or_deletes_at_most_burst(replicas in 0i32..40, have in 0usize..40, burst in 1usize..12) {
        let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().expect("rt");
        rt.block_on(async {
            let h = Harness::new(burst);
            let rs = new_replica_set(replicas, &[("foo", "bar")]);
            h.add_rs(&rs);
            for i in 0..have {
                h.add_pod(new_pod(&format!("p{i}"), &rs, "Running", None, true));
            }
            h.controller.sync_replica_set(&crate::testing::key()).await.expect("sync");
            let want = usize::try_from(replicas).unwrap_or(0);
            let (c, d, p) = h.cdp();
            prop_assert_eq!(p, 0);
            prop_assert_eq!(c, want.saturating_sub(have).min(burst));
            prop_assert_eq!(d, have.saturating_sub(want).min(burst));
            let exp = h.controller.expectations().get_expectations(&crate::testing::key());
            if c > 0 || d > 0 {
                prop_assert_eq!(exp, Some((c as i64, d as i64)));
            } else {
                prop_assert_eq!(exp, None);
            }
            Ok(())
        })?;
    }
}
