//! The enabled controllers, built on one shared informer factory and started as
//! kube-controller-manager starts them (`BuildControllers` and
//! `RunControllers`, `cmd/kube-controller-manager/app/controllermanager.go`): each gets its own client, the
//! informers start once all are built, then the controllers, `--controller-start-interval`
//! (plus jitter) apart; `/readyz` waits for the caches. At exit they are cancelled together
//! and given `--controller-shutdown-timeout` to finish.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

use kcm_informer::{InformerFactory, InformerOptions};

use super::coordination::Coordination;
use crate::client::ClientFactory;
use crate::controller::{Controller, ControllerContext, Run};
use crate::feature_gates::FeatureGates;
use crate::options::Options;
use crate::serving::{Endpoints, Probe};

/// Up to how much longer than `--controller-start-interval` kcm waits between starting two
/// controllers (upstream's `ControllerStartJitter`).
const CONTROLLER_START_JITTER: f64 = 1.0;

/// The informer resync period: `min` × `factor`, `factor` random in [1, 2), as
/// kube-controller-manager's `ResyncPeriod(c)`.
fn resync_period(min: Duration, factor: f64) -> Duration {
    min.mul_f64(factor)
}

/// How long to wait before starting the controller at `index`: nothing before the first, then
/// `interval` × (1 + `jitter` × [`CONTROLLER_START_JITTER`]), `jitter` random in [0, 1)
/// (upstream's `wait.Jitter`); nothing with a zero interval.
fn start_delay(index: usize, interval: Duration, jitter: f64) -> Option<Duration> {
    if index == 0 || interval.is_zero() {
        return None;
    }
    Some(interval.mul_f64(1.0 + jitter * CONTROLLER_START_JITTER))
}

/// The built controllers, not started yet, and the informer factory they registered with.
pub(super) struct Built {
    /// The informers of every controller.
    pub(super) factory: InformerFactory,
    runs: Vec<(&'static str, Run)>,
}

/// The running controllers.
pub(super) struct Running {
    tasks: Vec<JoinHandle<()>>,
    cancel: CancellationToken,
}

/// Builds the `enabled` controllers (with `--use-service-account-credentials`, each as its
/// service account), which register their informers and handlers on one factory; the
/// informers list and watch as `coordination` allows.
pub(super) async fn build(
    options: &Options,
    clients: &mut ClientFactory,
    enabled: Vec<Controller>,
    feature_gates: &FeatureGates,
    coordination: &Coordination,
    stop: &CancellationToken,
) -> anyhow::Result<Built> {
    let names: Vec<&str> = enabled.iter().map(Controller::name).collect();
    tracing::info!(controllers = ?names, "starting controllers");
    if options.use_service_account_credentials {
        clients.use_service_account_credentials(stop.child_token())?;
    }
    let factory = InformerFactory::new(
        clients.client("shared-informers")?,
        InformerOptions {
            resync_period: resync_period(options.min_resync_period, rand::random::<f64>() + 1.0),
            namespace: options.namespace.clone(),
            reflector: coordination.reflector(),
        },
    );
    let mut runs = Vec::new();
    for controller in enabled {
        let ctx = ControllerContext {
            client: clients.controller_client(controller.name()).await?,
            factory: factory.clone(),
            options: options.clone(),
            feature_gates: feature_gates.clone(),
            namespace_gate: coordination.namespace_gate(),
        };
        runs.push(controller.build(&ctx)?);
    }
    Ok(Built { factory, runs })
}

impl Built {
    /// Starts the controllers (the informers must be started, with `cancel`), one at a time
    /// `interval` apart, until `cancel` fires; `/readyz` is ready once every cache synced.
    pub(super) async fn start(
        self,
        interval: Duration,
        endpoints: &Endpoints,
        cancel: CancellationToken,
    ) -> Running {
        ready_when_synced(&self.factory, endpoints, &cancel);
        let mut tasks = Vec::new();
        for (i, (name, run)) in self.runs.into_iter().enumerate() {
            if let Some(delay) = start_delay(i, interval, rand::random::<f64>()) {
                tokio::select! {
                    _ = cancel.cancelled() => break,
                    _ = tokio::time::sleep(delay) => {}
                }
            }
            let cancel = cancel.clone();
            tasks.push(tokio::spawn(async move {
                run(cancel).await;
                tracing::info!(controller = name, "controller stopped");
            }));
        }
        Running { tasks, cancel }
    }
}

/// The `informer-sync` readiness check: failing until every informer of `factory` has synced.
fn ready_when_synced(factory: &InformerFactory, endpoints: &Endpoints, cancel: &CancellationToken) {
    let synced = Arc::new(AtomicBool::new(false));
    let flag = synced.clone();
    endpoints.add_check(
        "informer-sync",
        Probe::Ready,
        Arc::new(move || {
            if flag.load(Ordering::SeqCst) {
                Ok(())
            } else {
                Err("caches not synced yet".into())
            }
        }),
    );
    let factory = factory.clone();
    let cancel = cancel.clone();
    tokio::spawn(async move {
        let result = factory.wait_for_cache_sync(None, &cancel).await;
        if result.values().all(|s| *s) {
            tracing::info!(informers = ?result.keys().collect::<Vec<_>>(), "caches are synced");
            synced.store(true, Ordering::SeqCst);
        }
    });
}

impl Running {
    /// Stops the controllers: they stop taking work and get `grace` to finish what they
    /// started. Whether they all stopped in time.
    pub(super) async fn stop(self, grace: Duration) -> bool {
        self.cancel.cancel();
        let all = futures::future::join_all(self.tasks);
        let stopped = tokio::time::timeout(grace, all).await.is_ok();
        if !stopped {
            tracing::warn!(grace = ?grace, "controllers did not stop in time; exiting anyway");
        }
        stopped
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controllers_start_an_interval_and_a_jitter_apart() {
        let second = Duration::from_secs(1);
        // (index, interval, jitter, delay)
        let cases = [
            (0, second, 0.5, None),
            (1, Duration::ZERO, 0.5, None),
            (1, second, 0.0, Some(second)),
            (2, second, 0.5, Some(Duration::from_millis(1500))),
            (
                3,
                Duration::from_millis(200),
                0.25,
                Some(Duration::from_millis(250)),
            ),
        ];
        for (index, interval, jitter, want) in cases {
            assert_eq!(
                start_delay(index, interval, jitter),
                want,
                "{index} {interval:?} {jitter}"
            );
        }
    }

    #[test]
    fn resync_periods_lie_between_the_minimum_and_twice_it() {
        let min = Duration::from_secs(12 * 3600);
        assert_eq!(resync_period(min, 1.0), min);
        assert_eq!(resync_period(min, 1.5), Duration::from_secs(18 * 3600));
        assert!(resync_period(min, 1.999) < 2 * min);
    }
}
