//! How a simulated pod's life advances (the kubelet's view of its containers): pure transitions
//! from one [`Stage`] to the next, with the delay before the one after.

use std::time::Duration;

use k8s_openapi::api::core::v1::Pod;
use kcm_util::go_duration::format_go_duration;

use super::super::annotations::PodBehaviour;
use super::super::config::SimConfig;
use super::super::timestamps::now_time;
use super::image_pull::{is_missing, pull_backoff};
use super::pod_status::Stage;

/// The containers of a pod whose images cannot be pulled: the init containers' when any fails
/// (they are pulled first), else the app containers'.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PullFailure {
    /// Whether the failing containers are init containers.
    pub init: bool,
    /// Their names, in spec order.
    pub containers: Vec<String>,
}

/// Which of `pod`'s containers fail to pull with the missing-image `patterns`; `None` when every
/// image can be pulled.
pub(crate) fn pull_failure(pod: &Pod, patterns: &[String]) -> Option<PullFailure> {
    let spec = pod.spec.as_ref()?;
    let failing = |containers: &[k8s_openapi::api::core::v1::Container]| -> Vec<String> {
        containers
            .iter()
            .filter(|c| is_missing(patterns, c.image.as_deref().unwrap_or("")))
            .map(|c| c.name.clone())
            .collect()
    };
    let init = failing(spec.init_containers.as_deref().unwrap_or(&[]));
    if !init.is_empty() {
        return Some(PullFailure {
            init: true,
            containers: init,
        });
    }
    let app = failing(&spec.containers);
    (!app.is_empty()).then_some(PullFailure {
        init: false,
        containers: app,
    })
}

/// The stage after `current` and the delay before the one after it. `pull` is what fails to pull
/// with the pod's spec as it is now.
///
/// A crashing container of a pod with `restartPolicy: Never` is not restarted: the pod fails.
/// Images that cannot be pulled keep the pod Pending whatever its annotations ask: a failed
/// pull shows `ErrImagePull`, half-way through the back-off the kubelet's next sync shows
/// `ImagePullBackOff`, and when the back-off is over the pull is tried again (and the
/// containers start if the spec's images can now be pulled).
pub(crate) fn advance(
    current: &Stage,
    behaviour: &PodBehaviour,
    restart_never: bool,
    crash_backoff: &mut Duration,
    pull: Option<&PullFailure>,
    config: &SimConfig,
) -> (Stage, Option<Duration>) {
    let now = now_time();
    let half = |failures: u32| {
        pull_backoff(
            failures.saturating_sub(1),
            config.image_pull_backoff,
            config.image_pull_max_backoff,
        ) / 2
    };
    let failed = |failures: u32, pull: &PullFailure| {
        (
            Stage::PullFailing {
                failing: pull.containers.clone(),
                init: pull.init,
                failures,
                backing_off: false,
            },
            Some(half(failures)),
        )
    };
    match (current, pull) {
        (Stage::Creating, Some(p)) => failed(1, p),
        // The images can be pulled now: the containers start.
        (Stage::PullFailing { .. }, None) => advance(
            &Stage::Creating,
            behaviour,
            restart_never,
            crash_backoff,
            None,
            config,
        ),
        (
            Stage::PullFailing {
                failing,
                init,
                failures,
                backing_off: false,
            },
            Some(p),
        ) if p.containers == *failing && p.init == *init => (
            Stage::PullFailing {
                failing: failing.clone(),
                init: *init,
                failures: *failures,
                backing_off: true,
            },
            Some(half(*failures)),
        ),
        (Stage::PullFailing { failures, .. }, Some(p)) => failed(failures + 1, p),
        (Stage::Creating, None) if behaviour.crash_loop && restart_never => (
            Stage::Terminated {
                exit_code: 1,
                finished_at: now,
            },
            None,
        ),
        (Stage::Creating, None) if behaviour.crash_loop => {
            let b = *crash_backoff;
            (
                Stage::CrashLoop {
                    restarts: 1,
                    backoff: format_go_duration(b),
                    last_started: now.clone(),
                    last_finished: now,
                },
                Some(b),
            )
        }
        (Stage::Creating, None) => (
            Stage::Running {
                ready: !behaviour.never_ready,
            },
            behaviour.fail_after,
        ),
        (Stage::CrashLoop { restarts, .. }, _) => {
            *crash_backoff = (*crash_backoff * 2).min(config.crash_loop_max_backoff);
            let b = *crash_backoff;
            (
                Stage::CrashLoop {
                    restarts: restarts + 1,
                    backoff: format_go_duration(b),
                    last_started: now.clone(),
                    last_finished: now,
                },
                Some(b),
            )
        }
        (Stage::Running { .. }, _) => (
            Stage::Terminated {
                exit_code: 1,
                finished_at: now,
            },
            None,
        ),
        (Stage::Terminated { .. }, _) => (current.clone(), None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn behaviour() -> PodBehaviour {
        PodBehaviour::from_annotations(None, Duration::from_millis(200))
    }

    #[test]
    fn scripts() {
        let config = SimConfig::default();
        let mut b = config.crash_loop_backoff;
        let (s, after) = advance(&Stage::Creating, &behaviour(), false, &mut b, None, &config);
        assert_eq!((s, after), (Stage::Running { ready: true }, None));

        let mut never = behaviour();
        never.never_ready = true;
        never.fail_after = Some(Duration::from_secs(3));
        let (s, after) = advance(&Stage::Creating, &never, false, &mut b, None, &config);
        assert_eq!(
            (s.clone(), after),
            (
                Stage::Running { ready: false },
                Some(Duration::from_secs(3))
            )
        );
        let (s, after) = advance(&s, &never, false, &mut b, None, &config);
        assert!(matches!(s, Stage::Terminated { exit_code: 1, .. }));
        assert_eq!(after, None);

        let mut crash = behaviour();
        crash.crash_loop = true;
        let (mut s, _) = advance(&Stage::Creating, &crash, false, &mut b, None, &config);
        let mut restarts = vec![];
        let mut backoffs = vec![];
        for _ in 0..6 {
            if let Stage::CrashLoop {
                restarts: r,
                backoff,
                ..
            } = &s
            {
                restarts.push(*r);
                backoffs.push(backoff.clone());
            }
            s = advance(&s, &crash, false, &mut b, None, &config).0;
        }
        assert_eq!(restarts, vec![1, 2, 3, 4, 5, 6]);
        assert_eq!(backoffs, vec!["1s", "2s", "4s", "8s", "10s", "10s"]);

        let (s, after) = advance(&Stage::Creating, &crash, true, &mut b, None, &config);
        assert!(
            matches!(s, Stage::Terminated { exit_code: 1, .. }),
            "restartPolicy Never: {s:?}"
        );
        assert_eq!(after, None);
    }

    fn pod(containers: &[(&str, &str)], init: &[(&str, &str)]) -> Pod {
        let list = |cs: &[(&str, &str)]| -> Vec<serde_json::Value> {
            cs.iter()
                .map(|(n, i)| serde_json::json!({"name": n, "image": i}))
                .collect()
        };
        serde_json::from_value(serde_json::json!({
            "metadata": {"name": "p"},
            "spec": {"containers": list(containers), "initContainers": list(init)},
        }))
        .expect("pod")
    }

    #[test]
    fn pull_failures_of_init_containers_come_first() {
        let patterns = vec!["*:404".to_string()];
        let f = |p: &Pod| pull_failure(p, &patterns);
        assert_eq!(f(&pod(&[("a", "nginx")], &[])), None);
        assert_eq!(
            f(&pod(
                &[("a", "web:404"), ("b", "nginx"), ("c", "x:404")],
                &[]
            )),
            Some(PullFailure {
                init: false,
                containers: vec!["a".into(), "c".into()]
            })
        );
        assert_eq!(
            f(&pod(
                &[("a", "web:404")],
                &[("i", "tool:404"), ("j", "tool")]
            )),
            Some(PullFailure {
                init: true,
                containers: vec!["i".into()]
            })
        );
    }

    /// ErrImagePull at once, ImagePullBackOff half-way through each back-off, a new pull when it
    /// is over, the back-off doubling up to its cap; never Running while the image is missing,
    /// and started as soon as the spec's image can be pulled.
    #[test]
    fn image_pull_rhythm() {
        let config = SimConfig {
            image_pull_backoff: Duration::from_secs(10),
            image_pull_max_backoff: Duration::from_secs(40),
            ..SimConfig::default()
        };
        let mut b = config.crash_loop_backoff;
        let missing = PullFailure {
            init: false,
            containers: vec!["app".into()],
        };
        let mut stage = Stage::Creating;
        let mut seen = Vec::new();
        for _ in 0..8 {
            let (next, after) =
                advance(&stage, &behaviour(), false, &mut b, Some(&missing), &config);
            let Stage::PullFailing {
                failures,
                backing_off,
                ..
            } = &next
            else {
                panic!("never started while the image is missing: {next:?}");
            };
            let reason = if *backing_off {
                "ImagePullBackOff"
            } else {
                "ErrImagePull"
            };
            seen.push(format!(
                "{reason}#{failures} {}s",
                after.unwrap_or_default().as_secs()
            ));
            stage = next;
        }
        assert_eq!(
            seen,
            [
                "ErrImagePull#1 5s",
                "ImagePullBackOff#1 5s",
                "ErrImagePull#2 10s",
                "ImagePullBackOff#2 10s",
                "ErrImagePull#3 20s",
                "ImagePullBackOff#3 20s",
                "ErrImagePull#4 20s",
                "ImagePullBackOff#4 20s",
            ]
        );
        // The spec's image fixed: the containers start at the next step, as any pod's.
        let (next, _) = advance(&stage, &behaviour(), false, &mut b, None, &config);
        assert_eq!(next, Stage::Running { ready: true });
        // A crash-looping pod's missing image keeps it Pending too.
        let mut crash = behaviour();
        crash.crash_loop = true;
        let (next, _) = advance(
            &Stage::Creating,
            &crash,
            true,
            &mut b,
            Some(&missing),
            &config,
        );
        assert!(matches!(next, Stage::PullFailing { .. }), "{next:?}");
    }
}
