//! Table tests for the fault spec parser and the injector's determinism, scopes, bodies and counters.

use std::time::Duration;

use kcm_testenv::faults::{FaultInjector, FaultKind, FaultRule, FaultSpec, FaultSpecError, Scope};

fn scope(verbs: &[&str], resources: &[&str]) -> Scope {
    Scope {
        verbs: verbs.iter().map(|s| s.to_string()).collect(),
        resources: resources.iter().map(|s| s.to_string()).collect(),
    }
}

#[test]
fn parse_valid_specs() {
    let cases: Vec<(&str, Vec<FaultRule>)> = vec![
        ("", vec![]),
        (" , ", vec![]),
        (
            "error500=0.05",
            vec![FaultRule::Probability {
                kind: FaultKind::Error500,
                p: 0.05,
                scope: Scope::default(),
            }],
        ),
        (
            "conflict=0.1",
            vec![FaultRule::Probability {
                kind: FaultKind::Conflict,
                p: 0.1,
                scope: scope(&["update"], &[]),
            }],
        ),
        (
            "conflict-bare=0.2",
            vec![FaultRule::Probability {
                kind: FaultKind::BareConflict,
                p: 0.2,
                scope: scope(&["update"], &[]),
            }],
        ),
        (
            "conflict=0.1@update:pods",
            vec![FaultRule::Probability {
                kind: FaultKind::Conflict,
                p: 0.1,
                scope: scope(&["update"], &["pods"]),
            }],
        ),
        (
            "error503=1@*:replicasets|deployments",
            vec![FaultRule::Probability {
                kind: FaultKind::Error503,
                p: 1.0,
                scope: scope(&[], &["replicasets", "deployments"]),
            }],
        ),
        (
            "throttle=0@write",
            vec![FaultRule::Probability {
                kind: FaultKind::Throttle,
                p: 0.0,
                scope: scope(&["write"], &[]),
            }],
        ),
        (
            "watch-drop=0.01",
            vec![FaultRule::Probability {
                kind: FaultKind::WatchDrop,
                p: 0.01,
                scope: scope(&["watch"], &[]),
            }],
        ),
        (
            "latency=5ms..50ms@LIST|watch",
            vec![FaultRule::Latency {
                min: Duration::from_millis(5),
                max: Duration::from_millis(50),
                scope: scope(&["list", "watch"], &[]),
            }],
        ),
        (
            "latency=10ms",
            vec![FaultRule::Latency {
                min: Duration::from_millis(10),
                max: Duration::from_millis(10),
                scope: Scope::default(),
            }],
        ),
        (
            "compact-every=30s, restart-every=1m30s",
            vec![
                FaultRule::Every {
                    kind: FaultKind::Compact,
                    period: Duration::from_secs(30),
                },
                FaultRule::Every {
                    kind: FaultKind::Restart,
                    period: Duration::from_secs(90),
                },
            ],
        ),
        (
            "conflict=0.1@update:pods,conflict=0.5@patch:replicasets",
            vec![
                FaultRule::Probability {
                    kind: FaultKind::Conflict,
                    p: 0.1,
                    scope: scope(&["update"], &["pods"]),
                },
                FaultRule::Probability {
                    kind: FaultKind::Conflict,
                    p: 0.5,
                    scope: scope(&["patch"], &["replicasets"]),
                },
            ],
        ),
    ];
    for (text, rules) in cases {
        let spec = FaultSpec::parse(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
        assert_eq!(spec.rules, rules, "{text:?}");
        // The canonical rendering parses back to the same spec.
        let again = FaultSpec::parse(&spec.to_string()).unwrap_or_else(|e| panic!("{spec}: {e}"));
        assert_eq!(again, spec, "round trip of {text:?}");
    }
}

#[test]
fn parse_rejects_invalid_specs() {
    let cases: &[(&str, &str)] = &[
        ("bogus=1", "unknown fault \"bogus\""),
        ("conflict", "has no value"),
        ("conflict=", "has no value"),
        ("conflict=1.5", "must be a number in [0, 1]"),
        ("error500=-0.1", "must be a number in [0, 1]"),
        ("error503=abc", "must be a number in [0, 1]"),
        ("error503=NaN", "must be a number in [0, 1]"),
        ("latency=50ms..5ms", "is above maximum"),
        ("latency=5..50ms", "missing unit"),
        ("compact-every=0s", "above zero"),
        ("compact-every=10s@update", "take no scope"),
        ("restart-every=1m,restart-every=2m", "more than once"),
        (
            "conflict=0.1@frobnicate:pods",
            "unknown verb \"frobnicate\"",
        ),
        ("compact-every=10", "missing unit"),
    ];
    for (text, needle) in cases {
        let err = FaultSpec::parse(text).expect_err(text);
        let msg = err.to_string();
        assert!(
            msg.contains(needle),
            "{text:?}: {msg:?} should contain {needle:?}"
        );
    }
    let err = FaultSpec::parse("bogus=1").expect_err("unknown");
    assert!(matches!(err, FaultSpecError::UnknownFault { .. }));
    assert!(
        err.to_string()
            .contains("known faults: watch-drop, compact-every, conflict")
    );
}

#[test]
fn scope_matching() {
    let cases: &[(&str, &str, &str, bool, bool)] = &[
        ("*", "get", "pods", false, true),
        ("update", "update", "pods", true, true),
        ("update", "patch", "pods", true, false),
        ("write", "delete", "pods", true, true),
        ("write", "list", "pods", false, false),
        ("read", "list", "pods", false, true),
        ("*:pods", "update", "pods/status", true, true),
        ("*:pods/status", "update", "pods", true, false),
        ("*:pods/status", "patch", "pods/status", true, true),
        ("*:pods", "get", "podsx", false, false),
        ("get|list:leases|events", "list", "events", false, true),
    ];
    for (text, verb, resource, write, want) in cases {
        let spec = FaultSpec::parse(&format!("error500=1@{text}")).expect("valid");
        let FaultRule::Probability { scope, .. } = &spec.rules[0] else {
            panic!("rule")
        };
        assert_eq!(
            scope.matches(verb, resource, *write),
            *want,
            "{text} vs {verb} {resource}"
        );
    }
}

fn run(seed: u64, spec: &str, n: usize) -> Vec<(Duration, Option<u16>)> {
    let inj = FaultInjector::new(FaultSpec::parse(spec).expect("spec"), seed);
    let requests = [
        ("get", "pods", false),
        ("update", "pods", true),
        ("list", "replicasets", false),
        ("patch", "pods/status", true),
    ];
    (0..n)
        .map(|i| {
            let (v, r, w) = requests[i % requests.len()];
            let d = inj.decide(v, r, w);
            (d.latency, d.error.map(|e| e.code))
        })
        .collect()
}

#[test]
fn same_seed_same_faults() {
    let spec = "conflict=0.3,error500=0.1,error503=0.1,throttle=0.1,latency=1ms..9ms";
    let a = run(7, spec, 500);
    let b = run(7, spec, 500);
    assert_eq!(a, b);
    let c = run(8, spec, 500);
    assert_ne!(a, c, "a different seed gives different faults");
    // Every error kind shows up over 500 requests at these rates.
    for code in [409, 500, 503, 429] {
        assert!(a.iter().any(|(_, e)| *e == Some(code)), "{code} expected");
    }
    assert!(
        a.iter()
            .all(|(l, _)| *l >= Duration::from_millis(1) && *l <= Duration::from_millis(9))
    );
}

#[test]
fn probabilities_zero_and_one() {
    let never = run(1, "error500=0,throttle=0", 200);
    assert!(never.iter().all(|(l, e)| l.is_zero() && e.is_none()));
    let always = run(1, "error503=1", 200);
    assert!(always.iter().all(|(_, e)| *e == Some(503)));
}

#[test]
fn conflicts_only_hit_updates_by_default() {
    let inj = FaultInjector::new(FaultSpec::parse("conflict=1").expect("spec"), 3);
    assert!(inj.decide("get", "pods", false).error.is_none());
    assert!(inj.decide("create", "pods", true).error.is_none());
    assert!(inj.decide("patch", "pods", true).error.is_none());
    assert_eq!(
        inj.decide("update", "deployments", true)
            .error
            .map(|e| e.reason),
        Some("Conflict")
    );
}

#[test]
fn status_bodies_match_upstream_shapes() {
    let inj = FaultInjector::new(FaultSpec::parse("conflict=1").expect("spec"), 3);
    let err = inj
        .decide("update", "deployments", true)
        .error
        .expect("conflict");
    let body = err.status_body("apps", "deployments", "web");
    assert_eq!(body["kind"], "Status");
    assert_eq!(body["apiVersion"], "v1");
    assert_eq!(body["status"], "Failure");
    assert_eq!(body["code"], 409);
    assert_eq!(body["reason"], "Conflict");
    assert_eq!(
        body["message"],
        "Operation cannot be fulfilled on deployments.apps \"web\": the object has been modified; please apply your changes to the latest version and try again"
    );
    assert_eq!(
        body["details"],
        serde_json::json!({"name": "web", "group": "apps", "kind": "deployments"})
    );

    let cases: &[(&str, u16, &str)] = &[
        ("error500=1", 500, "InternalError"),
        ("error503=1", 503, "ServiceUnavailable"),
        ("throttle=1", 429, "TooManyRequests"),
    ];
    for (spec, code, reason) in cases {
        let inj = FaultInjector::new(FaultSpec::parse(spec).expect("spec"), 3);
        let err = inj.decide("get", "pods", false).error.expect(spec);
        assert_eq!((err.code, err.reason), (*code, *reason));
        let body = err.status_body("", "pods", "p");
        assert_eq!(body["code"], *code);
        assert_eq!(body["reason"], *reason);
        assert_eq!(body["kind"], "Status");
        assert!(body["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    let throttle = FaultInjector::new(FaultSpec::parse("throttle=1").expect("spec"), 3)
        .decide("get", "pods", false)
        .error
        .expect("429");
    assert_eq!(throttle.retry_after_seconds, Some(1));
    assert_eq!(
        throttle.status_body("", "pods", "")["details"]["retryAfterSeconds"],
        1
    );
    let internal = FaultInjector::new(FaultSpec::parse("error500=1").expect("spec"), 3)
        .decide("get", "pods", false)
        .error
        .expect("500");
    let body = internal.status_body("", "pods", "p");
    assert!(
        body["message"]
            .as_str()
            .is_some_and(|m| m.starts_with("Internal error occurred: "))
    );
}

#[test]
fn counters_and_metrics() {
    let inj = FaultInjector::new(
        FaultSpec::parse("error500=1@get,latency=1ms@list").expect("spec"),
        9,
    );
    for _ in 0..3 {
        assert!(inj.decide("get", "pods", false).error.is_some());
    }
    inj.decide("list", "pods", false);
    assert_eq!(inj.count(FaultKind::Error500), 3);
    assert_eq!(inj.count(FaultKind::Latency), 1);
    let text = inj.render_metrics();
    assert!(text.contains("# TYPE testenv_faults_injected_total counter\n"));
    assert!(text.contains("testenv_faults_injected_total{kind=\"error500\"} 3\n"));
    assert!(text.contains("testenv_faults_injected_total{kind=\"latency\"} 1\n"));
    assert!(text.contains("testenv_faults_injected_total{kind=\"conflict\"} 0\n"));
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("testenv_faults_injected_total{"))
            .count(),
        9
    );
}

#[test]
fn set_spec_changes_faults_while_running() {
    let inj = FaultInjector::new(FaultSpec::default(), 1);
    assert!(inj.decide("get", "pods", false).error.is_none());
    inj.set_spec(FaultSpec::parse("error503=1").expect("spec"));
    assert_eq!(
        inj.decide("get", "pods", false).error.map(|e| e.code),
        Some(503)
    );
    inj.set_spec(FaultSpec::default());
    assert!(inj.decide("get", "pods", false).error.is_none());
}

#[test]
fn watch_drops() {
    let inj = FaultInjector::new(FaultSpec::parse("watch-drop=1@*:pods").expect("spec"), 1);
    assert_eq!(inj.watch_drop_per_second("pods"), 1.0);
    assert_eq!(inj.watch_drop_per_second("leases"), 0.0);
    assert!(inj.roll_watch_drop("pods"));
    assert!(!inj.roll_watch_drop("leases"));
    assert_eq!(inj.count(FaultKind::WatchDrop), 1);
    let none = FaultInjector::new(FaultSpec::default(), 1);
    assert!(!none.roll_watch_drop("pods"));
}

#[tokio::test]
async fn timers_fire_and_follow_set_spec() {
    use kcm_testenv::faults::FaultTimerEvent;
    use std::sync::Arc;
    let inj = Arc::new(FaultInjector::new(
        FaultSpec::parse("compact-every=20ms").expect("spec"),
        1,
    ));
    let mut events = inj.subscribe();
    let token = tokio_util::sync::CancellationToken::new();
    let task = tokio::spawn(inj.clone().run_timers(token.clone()));
    assert_eq!(
        events.recv().await.expect("event"),
        FaultTimerEvent::Compact
    );
    assert_eq!(
        events.recv().await.expect("event"),
        FaultTimerEvent::Compact
    );
    assert_eq!(inj.count(FaultKind::Compact), 2);
    inj.set_spec(FaultSpec::parse("restart-every=30ms").expect("spec"));
    // A compaction already due when the spec changed may still arrive; after the first restart only
    // restarts come.
    while events.recv().await.expect("event") != FaultTimerEvent::Restart {}
    let compactions = inj.count(FaultKind::Compact);
    assert_eq!(
        events.recv().await.expect("event"),
        FaultTimerEvent::Restart
    );
    assert_eq!(inj.count(FaultKind::Compact), compactions);
    assert_eq!(inj.count(FaultKind::Restart), 2);
    token.cancel();
    task.await.expect("timer task ends on shutdown");
}

#[test]
fn command_line_flags() {
    use clap::Parser;
    use kcm_testenv::faults::FaultArgs;
    #[derive(Debug, Parser)]
    struct Cli {
        #[command(flatten)]
        faults: FaultArgs,
    }
    assert!(Cli::parse_from(["x"]).faults.injector().is_none());
    let cli = Cli::parse_from(["x", "--faults", "error503=1@get", "--seed", "9"]);
    let inj = cli.faults.injector().expect("injector");
    assert_eq!(
        inj.decide("get", "pods", false).error.map(|e| e.code),
        Some(503)
    );
    let err = Cli::try_parse_from(["x", "--faults", "bogus=1"]).expect_err("rejected");
    assert!(err.to_string().contains("unknown fault \"bogus\""), "{err}");
}
