//! Table tests for the correlator (after upstream `TestEventCorrelator` in
//! `tools/record/events_cache_test.go`; and cases of `events_cache.go`'s aggregation and spam filter).

use super::*;
use crate::clock::{Clock, FakeClock};
use k8s_openapi::api::core::v1::{EventSource, ObjectReference};
use std::collections::HashMap;

fn clock() -> FakeClock {
    FakeClock::new("2024-05-15T00:00:00Z".parse().unwrap())
}

fn correlator(c: &FakeClock) -> EventCorrelator {
    EventCorrelator::new(CorrelatorOptions::default(), Arc::new(c.clone()))
}

fn event(c: &FakeClock, object: &str, reason: &str, message: &str) -> Event {
    let now = Time(c.now());
    Event {
        metadata: k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta {
            name: Some(format!("{object}.{:x}", c.now().as_nanosecond())),
            namespace: Some("default".into()),
            ..Default::default()
        },
        involved_object: ObjectReference {
            api_version: Some("apps/v1".into()),
            kind: Some("ReplicaSet".into()),
            name: Some(object.into()),
            namespace: Some("default".into()),
            uid: Some(format!("uid-{object}")),
            ..Default::default()
        },
        reason: Some(reason.into()),
        message: Some(message.into()),
        type_: Some("Normal".into()),
        count: Some(1),
        first_timestamp: Some(now.clone()),
        last_timestamp: Some(now),
        source: Some(EventSource {
            component: Some("replicaset-controller".into()),
            host: None,
        }),
        reporting_component: Some("replicaset-controller".into()),
        reporting_instance: Some(String::new()),
        ..Default::default()
    }
}

/// Feeds `prev` through the correlator (writing back the "server" copy of each
/// written event, as the sink does), then correlates `new`.
fn run(c: &FakeClock, corr: &EventCorrelator, prev: Vec<Event>, new: Event) -> CorrelateResult {
    for (i, e) in prev.into_iter().enumerate() {
        let r = corr.correlate(e);
        if !r.skip {
            let mut stored = r.event.clone();
            stored.metadata.resource_version = Some(format!("{}", i + 1));
            corr.update_state(&stored);
        }
    }
    let _ = c;
    corr.correlate(new)
}

#[test]
fn test_event_correlator() {
    struct Case {
        name: &'static str,
        prev: fn(&FakeClock) -> Vec<Event>,
        new: fn(&FakeClock) -> Event,
        want_count: i32,
        want_message_prefix: &'static str,
        want_patch: bool,
        want_skip: bool,
    }
    let cases = [
        Case {
            name: "create-a-single-event",
            prev: |_| vec![],
            new: |c| event(c, "rs", "SuccessfulCreate", "Created pod: a"),
            want_count: 1,
            want_message_prefix: "Created pod: a",
            want_patch: false,
            want_skip: false,
        },
        Case {
            name: "the-same-event-should-just-count",
            prev: |c| vec![event(c, "rs", "R", "m"), event(c, "rs", "R", "m")],
            new: |c| event(c, "rs", "R", "m"),
            want_count: 3,
            want_message_prefix: "m",
            want_patch: true,
            want_skip: false,
        },
        Case {
            name: "nine-distinct-messages-are-not-aggregated",
            prev: |c| {
                (0..8)
                    .map(|i| event(c, "rs", "R", &format!("m{i}")))
                    .collect()
            },
            new: |c| event(c, "rs", "R", "m8"),
            want_count: 1,
            want_message_prefix: "m8",
            want_patch: false,
            want_skip: false,
        },
        Case {
            name: "similar-events-should-aggregate-event",
            prev: |c| {
                (0..9)
                    .map(|i| event(c, "rs", "R", &format!("m{i}")))
                    .collect()
            },
            new: |c| event(c, "rs", "R", "m9"),
            want_count: 1,
            want_message_prefix: "(combined from similar events): m9",
            want_patch: false,
            want_skip: false,
        },
        Case {
            name: "similar-events-many-times-should-count-the-aggregate",
            prev: |c| {
                (0..10)
                    .map(|i| event(c, "rs", "R", &format!("m{i}")))
                    .collect()
            },
            new: |c| event(c, "rs", "R", "m10"),
            want_count: 2,
            want_message_prefix: "(combined from similar events): m10",
            want_patch: true,
            want_skip: false,
        },
        Case {
            name: "different-reasons-do-not-aggregate",
            prev: |c| {
                (0..9)
                    .map(|i| event(c, "rs", &format!("R{i}"), "m"))
                    .collect()
            },
            new: |c| event(c, "rs", "R9", "m"),
            want_count: 1,
            want_message_prefix: "m",
            want_patch: false,
            want_skip: false,
        },
        Case {
            name: "spam-filter-drops-the-26th-event-about-one-object",
            prev: |c| {
                (0..25)
                    .map(|i| event(c, "rs", &format!("R{i}"), "m"))
                    .collect()
            },
            new: |c| event(c, "rs", "R25", "m"),
            want_count: 1,
            want_message_prefix: "m",
            want_patch: false,
            want_skip: true,
        },
        Case {
            name: "spam-filter-is-per-object",
            prev: |c| {
                (0..25)
                    .map(|i| event(c, "rs", &format!("R{i}"), "m"))
                    .collect()
            },
            new: |c| event(c, "other-rs", "R25", "m"),
            want_count: 1,
            want_message_prefix: "m",
            want_patch: false,
            want_skip: false,
        },
    ];
    for case in cases {
        let c = clock();
        let corr = correlator(&c);
        let r = run(&c, &corr, (case.prev)(&c), (case.new)(&c));
        assert_eq!(r.skip, case.want_skip, "{}: skip", case.name);
        if case.want_skip {
            continue;
        }
        assert_eq!(r.event.count, Some(case.want_count), "{}: count", case.name);
        assert!(
            r.event
                .message
                .as_deref()
                .unwrap_or_default()
                .starts_with(case.want_message_prefix),
            "{}: message {:?}",
            case.name,
            r.event.message
        );
        assert_eq!(r.patch.is_some(), case.want_patch, "{}: patch", case.name);
    }
}

#[test]
fn repeat_reuses_name_first_timestamp_and_rv_and_patches_three_fields() {
    let c = clock();
    let corr = correlator(&c);
    let first = corr.correlate(event(&c, "rs", "R", "m"));
    let mut stored = first.event.clone();
    stored.metadata.resource_version = Some("7".into());
    corr.update_state(&stored);

    c.step(Duration::from_secs(3));
    let again = corr.correlate(event(&c, "rs", "R", "m"));
    assert_eq!(again.event.metadata.name, first.event.metadata.name);
    assert_eq!(again.event.metadata.resource_version.as_deref(), Some("7"));
    assert_eq!(again.event.first_timestamp, first.event.first_timestamp);
    assert_eq!(again.event.count, Some(2));
    assert_eq!(
        again.patch,
        Some(json!({"count": 2, "lastTimestamp": "2024-05-15T00:00:03Z", "message": "m"}))
    );
}

#[test]
fn aggregation_group_resets_after_max_interval() {
    let c = clock();
    let corr = correlator(&c);
    for i in 0..9 {
        let r = corr.correlate(event(&c, "rs", "R", &format!("m{i}")));
        assert_eq!(r.event.count, Some(1));
    }
    c.step(Duration::from_secs(601));
    let r = corr.correlate(event(&c, "rs", "R", "m9"));
    assert_eq!(r.event.message.as_deref(), Some("m9"), "group was reset");
}

#[test]
fn spam_filter_refills_one_token_per_five_minutes() {
    let c = clock();
    let corr = correlator(&c);
    for i in 0..25 {
        assert!(!corr.correlate(event(&c, "rs", &format!("R{i}"), "m")).skip);
    }
    assert!(corr.correlate(event(&c, "rs", "X", "m")).skip);
    c.step(Duration::from_secs(299));
    assert!(corr.correlate(event(&c, "rs", "Y", "m")).skip);
    c.step(Duration::from_secs(2));
    assert!(!corr.correlate(event(&c, "rs", "Z", "m")).skip);
    assert!(corr.correlate(event(&c, "rs", "W", "m")).skip);
}

proptest::proptest! {
    /// Per source+object, never more events pass than the burst plus one per 5
    /// minutes elapsed; a repeat's count always grows (by more than one when
    /// filtered repeats were counted in between, as upstream observes before
    /// filtering).
    #[test]
    fn spam_filter_bounds_and_counts_grow(steps in proptest::collection::vec((0u64..120, 0usize..3, 0usize..3), 1..200)) {
        let c = clock();
        let corr = correlator(&c);
        let mut passed = 0u64;
        let mut elapsed = 0u64;
        let mut last_count: HashMap<String, i32> = HashMap::new();
        for (dt, reason, msg) in steps {
            c.step(Duration::from_secs(dt));
            elapsed += dt;
            let r = corr.correlate(event(&c, "rs", &format!("R{reason}"), &format!("m{msg}")));
            if r.skip {
                continue;
            }
            passed += 1;
            let key = format!("{reason}/{msg}");
            let count = r.event.count.unwrap_or(0);
            if let Some(prev) = last_count.get(&key) {
                proptest::prop_assert!(count > *prev, "count {} after {}", count, prev);
            }
            last_count.insert(key, count);
        }
        proptest::prop_assert!(passed <= 25 + elapsed / 300 + 1, "passed {} in {} s", passed, elapsed);
    }
}
