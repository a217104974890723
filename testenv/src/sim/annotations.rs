//! Per-pod behaviour requested through `sim.kcm-rs.io/*` annotations, so that a Deployment's pod
//! template can ask for slow, broken or unschedulable pods.

use std::collections::BTreeMap;
use std::time::Duration;

use kcm_util::go_duration::parse_go_duration;

/// Delay from binding to Ready (Go duration).
pub const READY_AFTER: &str = "sim.kcm-rs.io/ready-after";
/// `"true"`: the pod runs but never becomes Ready.
pub const NEVER_READY: &str = "sim.kcm-rs.io/never-ready";
/// `"true"`: the containers crash on start and restart with back-off (CrashLoopBackOff).
pub const CRASH_LOOP: &str = "sim.kcm-rs.io/crash-loop";
/// Go duration: the pod fails (phase Failed, exit code 1) this long after it started running.
pub const FAIL_AFTER: &str = "sim.kcm-rs.io/fail-after";
/// `"true"`: the scheduler never finds a node for the pod.
pub const UNSCHEDULABLE: &str = "sim.kcm-rs.io/unschedulable";

/// How the simulated kubelet and scheduler treat one pod.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PodBehaviour {
    /// Delay from binding to Running (and Ready).
    pub ready_after: Duration,
    /// Running but never Ready.
    pub never_ready: bool,
    /// Crash loop.
    pub crash_loop: bool,
    /// Fail this long after Running.
    pub fail_after: Option<Duration>,
    /// Never scheduled.
    pub unschedulable: bool,
}

impl PodBehaviour {
    /// Read the annotations; malformed values fall back to the defaults (and are reported by
    /// [`PodBehaviour::problems`]).
    pub fn from_annotations(
        annotations: Option<&BTreeMap<String, String>>,
        default_ready_after: Duration,
    ) -> Self {
        let get = |k: &str| annotations.and_then(|a| a.get(k)).map(|s| s.trim());
        let flag = |k: &str| get(k).is_some_and(|v| v.eq_ignore_ascii_case("true"));
        PodBehaviour {
            ready_after: get(READY_AFTER)
                .and_then(|v| parse_go_duration(v).ok())
                .unwrap_or(default_ready_after),
            never_ready: flag(NEVER_READY),
            crash_loop: flag(CRASH_LOOP),
            fail_after: get(FAIL_AFTER).and_then(|v| parse_go_duration(v).ok()),
            unschedulable: flag(UNSCHEDULABLE),
        }
    }

    /// Malformed annotation values, for logging.
    pub fn problems(annotations: Option<&BTreeMap<String, String>>) -> Vec<String> {
        let mut out = Vec::new();
        for key in [READY_AFTER, FAIL_AFTER] {
            if let Some(v) = annotations.and_then(|a| a.get(key))
                && let Err(e) = parse_go_duration(v.trim())
            {
                out.push(format!("{key}: {e}"));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ann(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn annotations_table() {
        let d = Duration::from_millis(200);
        let cases: Vec<(Vec<(&str, &str)>, PodBehaviour)> = vec![
            (
                vec![],
                PodBehaviour {
                    ready_after: d,
                    never_ready: false,
                    crash_loop: false,
                    fail_after: None,
                    unschedulable: false,
                },
            ),
            (
                vec![(READY_AFTER, "2s"), (NEVER_READY, "true")],
                PodBehaviour {
                    ready_after: Duration::from_secs(2),
                    never_ready: true,
                    crash_loop: false,
                    fail_after: None,
                    unschedulable: false,
                },
            ),
            (
                vec![
                    (CRASH_LOOP, "TRUE"),
                    (FAIL_AFTER, "1m"),
                    (UNSCHEDULABLE, "true"),
                ],
                PodBehaviour {
                    ready_after: d,
                    never_ready: false,
                    crash_loop: true,
                    fail_after: Some(Duration::from_secs(60)),
                    unschedulable: true,
                },
            ),
            (
                vec![
                    (READY_AFTER, "soon"),
                    (NEVER_READY, "yes"),
                    (FAIL_AFTER, "-1s"),
                ],
                PodBehaviour {
                    ready_after: d,
                    never_ready: false,
                    crash_loop: false,
                    fail_after: None,
                    unschedulable: false,
                },
            ),
        ];
        for (pairs, want) in cases {
            let a = ann(&pairs);
            assert_eq!(
                PodBehaviour::from_annotations(Some(&a), d),
                want,
                "{pairs:?}"
            );
        }
        let bad = ann(&[(READY_AFTER, "soon"), (FAIL_AFTER, "3s")]);
        assert_eq!(PodBehaviour::problems(Some(&bad)).len(), 1);
    }
}
