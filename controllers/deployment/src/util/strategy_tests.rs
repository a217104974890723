use super::*;
use crate::testing::{int, pct, recreate_deployment, rolling_deployment, set_rolling};

#[test]
fn test_resolve_fenceposts() {
    // (maxSurge, maxUnavailable, desired, expectSurge, expectUnavailable, expectError)
    let cases: [(Option<&str>, Option<&str>, i32, i32, i32, bool); 7] = [
        (Some("0%"), Some("0%"), 0, 0, 1, false),
        (Some("39%"), Some("39%"), 10, 4, 3, false),
        (Some("oops"), Some("39%"), 10, 0, 0, true),
        (Some("55%"), Some("urg"), 10, 0, 0, true),
        (None, Some("39%"), 10, 0, 3, false),
        (Some("39%"), None, 10, 4, 0, false),
        (None, None, 10, 0, 1, false),
    ];
    for (num, (surge, unav, desired, want_surge, want_unav, want_err)) in
        cases.into_iter().enumerate()
    {
        let surge = surge.map(pct);
        let unav = unav.map(pct);
        let got = resolve_fenceposts(surge.as_ref(), unav.as_ref(), desired);
        assert_eq!(got.is_err(), want_err, "#{num}");
        assert_eq!(got.unwrap_or((0, 0)), (want_surge, want_unav), "#{num}");
    }
}

#[test]
fn test_max_unavailable() {
    let cases = [
        ("maxUnavailable less than replicas", 10, int(5), 5),
        ("maxUnavailable equal replicas", 10, int(10), 10),
        ("maxUnavailable greater than replicas", 5, int(10), 5),
        ("maxUnavailable with replicas is 0", 0, int(10), 0),
        (
            "maxUnavailable less than replicas with percents",
            10,
            pct("50%"),
            5,
        ),
        (
            "maxUnavailable equal replicas with percents",
            10,
            pct("100%"),
            10,
        ),
        (
            "maxUnavailable greater than replicas with percents",
            5,
            pct("100%"),
            5,
        ),
    ];
    for (name, replicas, unav, want) in cases {
        let d = rolling_deployment("d", replicas, Some(int(1)), Some(unav));
        assert_eq!(max_unavailable(&d), want, "{name}");
    }
    assert_eq!(
        max_unavailable(&recreate_deployment("d", 3)),
        0,
        "maxUnavailable with Recreate deployment strategy"
    );
}

#[test]
/// Upstream's `TestMinAvailable` cases for RollingUpdate: the `spec.replicas - MaxUnavailable`
/// that `reconcileOldReplicaSets` keeps available.
fn test_min_available() {
    let cases = [
        ("replicas greater than maxUnavailable", 10, int(5), 5),
        ("replicas equal maxUnavailable", 10, int(10), 0),
        ("replicas less than maxUnavailable", 5, int(10), 0),
        ("replicas is 0", 0, int(10), 0),
        (
            "replicas greater than maxUnavailable with percents",
            10,
            pct("60%"),
            4,
        ),
        (
            "replicas equal maxUnavailable with percents",
            10,
            pct("100%"),
            0,
        ),
        (
            "replicas less than maxUnavailable with percents",
            5,
            pct("100%"),
            0,
        ),
    ];
    for (name, replicas, unav, want) in cases {
        let d = rolling_deployment("d", replicas, Some(int(1)), Some(unav));
        assert_eq!(replicas - max_unavailable(&d), want, "{name}");
    }
}

#[test]
fn max_surge_values() {
    assert_eq!(
        max_surge(&rolling_deployment(
            "d",
            10,
            Some(pct("25%")),
            Some(pct("25%"))
        )),
        3
    );
    assert_eq!(
        max_surge(&rolling_deployment("d", 0, Some(pct("25%")), None)),
        0
    );
    assert_eq!(
        max_surge(&rolling_deployment("d", 0, Some(int(4)), None)),
        4
    );
    assert_eq!(max_surge(&recreate_deployment("d", 10)), 0);
    let mut d = rolling_deployment("d", 10, None, None);
    set_rolling(&mut d, pct("bogus"), int(1));
    assert_eq!(max_surge(&d), 0);
}
