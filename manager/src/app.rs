//! The process: client, metrics/health server, leader election, controllers, shutdown.
//!
//! Order, as kube-controller-manager: serve health and metrics first; then (with
//! `--leader-elect`) wait for the lease; then start the enabled controllers. Losing the lease
//! exits non-zero ("leaderelection lost/stopped"); SIGTERM/SIGINT stops taking new work, lets
//! in-flight syncs finish (bounded by `--controller-shutdown-timeout`) and exits 0 without
//! releasing the lease, as upstream does while `ControllerManagerReleaseLeaderElectionLockOnExit`
//! is off (v1.37's default).
//!
//! While it leads, every write of the controllers passes the elector's write fence
//! ([`kcm_leaderelection::fence`]): a leader that was paused past its lease (by its own
//! monotonic clock, less a margin) sends nothing, and a renewal that finds another holder ends
//! leadership at once instead of at the renew deadline (`docs/reliability.md`).
//!
//! With that gate on, as upstream: a SIGTERM gives the Lease up (holder cleared, duration 1 s),
//! and losing the lease stops the controllers and exits 0. Unlike upstream, which releases as
//! soon as its context is cancelled while its controllers are still stopping, kcm releases only
//! once every controller has stopped, so a standby that takes over can never write beside it.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use kcm_controller::NamespaceGate;
use kcm_informer::{InformerFactory, InformerOptions, ReflectorConfig};

use crate::client::ClientFactory;
use crate::metrics::Metrics;
use crate::options::Options;
use crate::serving::{Endpoints, Probe};
use crate::sharding::Sharding;
use kcm_leaderelection::{
    KubeLeaseLock, LeaderElectionConfig, LeaderElector, MAX_TOLERABLE_EXPIRED_LEASE,
};

/// Up to how much longer than `--controller-start-interval` kcm waits between starting two
/// controllers (upstream's `ControllerStartJitter`).
const CONTROLLER_START_JITTER: f64 = 1.0;

/// What a controller gets when it is built.
#[derive(Clone)]
pub struct ControllerContext {
    /// The controller's own client (User-Agent `.../<controller>`, its own rate limiter, and
    /// with `--use-service-account-credentials` its service account's token).
    pub client: kube::Client,
    /// The process's one informer factory; started after every controller was built.
    pub factory: InformerFactory,
    /// Flag values (worker counts and the like).
    pub options: Options,
    /// With `--sharding=namespace`: the namespaces the controller may sync now (give it to
    /// the controller's workers); `None`: every namespace.
    pub namespace_gate: Option<NamespaceGate>,
}

impl std::fmt::Debug for ControllerContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerContext").finish_non_exhaustive()
    }
}

/// A built controller: runs until the token is cancelled and in-flight work finished.
pub type RunFuture = Pin<Box<dyn Future<Output = ()> + Send>>;

/// Builds a controller (registers its informers and handlers) and returns its run function.
pub type BuildFn = Box<
    dyn FnOnce(
            &ControllerContext,
        ) -> anyhow::Result<Box<dyn FnOnce(CancellationToken) -> RunFuture + Send>>
        + Send,
>;

/// A controller this binary can run, under its canonical `--controllers` name (a registry
/// entry of [`crate::Manager`]).
pub struct Controller {
    /// Canonical name, e.g. `deployment-controller`.
    pub name: &'static str,
    /// Builds the controller.
    pub build: BuildFn,
}

impl std::fmt::Debug for Controller {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Controller")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

/// The informer resync period: random in [min, 2×min), as kube-controller-manager's
/// `ResyncPeriod(c)`.
pub fn resync_period(min: Duration) -> Duration {
    let factor = rand::random::<f64>() + 1.0;
    min.mul_f64(factor)
}

/// How the process ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Exit {
    /// Stopped by a signal (or the given token): exit 0.
    Stopped,
    /// The leader lease was lost: exit 1, like kube-controller-manager (with
    /// `ControllerManagerReleaseLeaderElectionLockOnExit` on, upstream stops its controllers and
    /// exits 0 instead, and so does kcm: [`Exit::Stopped`]).
    LeaderElectionLost,
}

/// A unique candidate identity: `<hostname>_<uuid>`, as kube-controller-manager.
pub fn identity() -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "kcm".to_string());
    format!("{host}_{}", uuid::Uuid::new_v4())
}

/// Runs the enabled `controllers` with clients from `clients` until `stop` fires or leadership
/// is lost.
///
/// `metrics` is served at `/metrics` and installed as the process-wide sink of work-queue and
/// sync metrics (give `clients` the same one).
pub async fn run(
    options: &Options,
    mut clients: ClientFactory,
    metrics: Metrics,
    controllers: Vec<Controller>,
    stop: CancellationToken,
) -> anyhow::Result<Exit> {
    let endpoints = Endpoints::new();
    metrics.register(&mut endpoints.registry().write());
    endpoints
        .registry()
        .write()
        .register_collector(Box::new(crate::process_metrics::ProcessMetrics));
    if !metrics.install_global() {
        tracing::warn!(
            "work-queue or sync metrics were already installed by someone else; /metrics lacks them"
        );
    }
    if options.profiling {
        endpoints.enable_debugging(crate::serving::debug::Debugging::new(
            crate::logging::installed(),
        ));
    }
    let lease_name = options.leader_elect_resource_name.as_str();
    let release_on_exit = crate::feature_gates::resolve(options.feature_gates.as_deref())
        .map(|(g, _)| g.release_leader_election_lock_on_exit)
        .unwrap_or(false);

    let enabled: Vec<Controller> = controllers
        .into_iter()
        .filter(|c| options.controller_enabled(c.name))
        .collect();
    if enabled.is_empty() {
        anyhow::bail!("--controllers enables none of the controllers this binary has");
    }
    let names: Vec<&str> = enabled.iter().map(|c| c.name).collect();

    let serve_cancel = stop.child_token();
    let rate = (options.kube_api_qps, options.kube_api_burst);
    let serving = crate::serving::start(
        &options.serving,
        endpoints.clone(),
        &clients,
        rate,
        serve_cancel.clone(),
    )
    .await?;
    if let Some(bound) = serving {
        tracing::info!(address = %bound, "serving /metrics, /healthz, /livez and /readyz over HTTPS");
    }

    let sharding = if options.sharded() {
        let id = identity();
        let sharding = Sharding::new(options, clients.client("leader-election")?, &id)?;
        if options.leader_elect {
            tracing::info!(
                "--sharding=namespace: every replica is active on its share; no leader election"
            );
        }
        clients.set_fence(sharding.fence_layer());
        clients.set_agent_suffix(format!("shard-member/{id}"));
        metrics.watch_fence(sharding.member().identity(), sharding.member().fence());
        Some(sharding)
    } else {
        None
    };
    let elector = if options.leader_elect && sharding.is_none() {
        let id = identity();
        let lock = KubeLeaseLock::new(
            clients.client("leader-election")?,
            &options.leader_elect_resource_namespace,
            &options.leader_elect_resource_name,
            &id,
        );
        let config = LeaderElectionConfig {
            lease_duration: options.leader_elect_lease_duration,
            renew_deadline: options.leader_elect_renew_deadline,
            retry_period: options.leader_elect_retry_period,
            release_on_cancel: false,
            ..LeaderElectionConfig::default()
        };
        let elector = Arc::new(LeaderElector::new(lock, config)?);
        // Every write of the controllers passes the leader's fence.
        clients.set_fence(kcm_leaderelection::FenceLayer::new(elector.fence()));
        metrics.watch_fence(lease_name, elector.fence());
        let check = elector.clone();
        endpoints.add_check(
            "leaderElection",
            Probe::Live,
            Arc::new(move || check.check(MAX_TOLERABLE_EXPIRED_LEASE)),
        );
        if !elector.acquire(&stop).await {
            serve_cancel.cancel();
            return Ok(Exit::Stopped);
        }
        metrics.set_leader(lease_name, true);
        Some(elector)
    } else {
        None
    };

    tracing::info!(controllers = ?names, "starting controllers");
    if options.use_service_account_credentials {
        clients.use_service_account_credentials(stop.child_token())?;
    }
    let reflector = match &sharding {
        Some(s) => ReflectorConfig::default().dynamic_share(s.member().share()),
        None => ReflectorConfig::default(),
    };
    let factory = InformerFactory::new(
        clients.client("shared-informers")?,
        InformerOptions {
            resync_period: resync_period(options.min_resync_period),
            namespace: options.namespace.clone(),
            reflector,
        },
    );
    let mut runs = Vec::new();
    for controller in enabled {
        let ctx = ControllerContext {
            client: clients.controller_client(controller.name).await?,
            factory: factory.clone(),
            options: options.clone(),
            namespace_gate: sharding.as_ref().map(Sharding::namespace_gate),
        };
        let run = (controller.build)(&ctx)
            .map_err(|e| e.context(format!("starting {}", controller.name)))?;
        runs.push((controller.name, run));
    }
    let controllers_cancel = stop.child_token();
    factory.start(&controllers_cancel);
    // The member keeps renewing (its fence open) until the controllers have stopped.
    let member_stop = tokio_util::sync::CancellationToken::new();
    let member_task = sharding.as_ref().map(|s| {
        endpoints
            .registry()
            .write()
            .register_collector(s.collector(factory.clone()));
        let member = s.member().clone();
        let on_activate = Sharding::on_activate(factory.clone());
        let stop = member_stop.clone();
        tokio::spawn(async move { member.run(on_activate, stop).await })
    });

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
    let sync_factory = factory.clone();
    let sync_cancel = controllers_cancel.clone();
    tokio::spawn(async move {
        let result = sync_factory.wait_for_cache_sync(None, &sync_cancel).await;
        if result.values().all(|s| *s) {
            tracing::info!(informers = ?result.keys().collect::<Vec<_>>(), "caches are synced");
            synced.store(true, Ordering::SeqCst);
        }
    });

    let mut tasks = Vec::new();
    for (i, (name, run)) in runs.into_iter().enumerate() {
        let interval = options.controller_start_interval;
        if i > 0 && !interval.is_zero() {
            let jitter = rand::random::<f64>() * CONTROLLER_START_JITTER;
            tokio::select! {
                _ = controllers_cancel.cancelled() => break,
                _ = tokio::time::sleep(interval.mul_f64(1.0 + jitter)) => {}
            }
        }
        let cancel = controllers_cancel.clone();
        tasks.push(tokio::spawn(async move {
            run(cancel).await;
            tracing::info!(controller = name, "controller stopped");
        }));
    }

    let exit = match &elector {
        Some(elector) => {
            if elector.renew(&stop).await {
                metrics.set_leader(lease_name, false);
                tracing::error!("leaderelection lost/stopped");
                if release_on_exit {
                    Exit::Stopped
                } else {
                    Exit::LeaderElectionLost
                }
            } else {
                Exit::Stopped
            }
        }
        None => {
            stop.cancelled().await;
            Exit::Stopped
        }
    };

    controllers_cancel.cancel();
    let all = futures::future::join_all(tasks);
    let grace = options.controller_shutdown_timeout;
    let stopped = tokio::time::timeout(grace, all).await.is_ok();
    if !stopped {
        tracing::warn!(grace = ?grace, "controllers did not stop in time; exiting anyway");
    }
    member_stop.cancel();
    if let (Some(sharding), Some(task)) = (&sharding, member_task) {
        let _ = task.await;
        for (informer, objects) in factory.cached_objects() {
            tracing::info!(informer = %informer, objects, "cached objects of this replica's share at exit");
        }
        if stopped {
            // Every write has finished: hand the share over now rather than at expiry.
            if let Err(e) = sharding.member().leave().await {
                tracing::warn!(error = %e, "could not delete the membership Lease; it expires instead");
            }
        } else {
            tracing::warn!(
                "not leaving the ring: controllers may still write; the membership Lease expires instead"
            );
        }
    }
    if let Some(elector) = elector.as_ref().filter(|_| release_on_exit) {
        if !stop.is_cancelled() {
            // Leadership was lost: there is nothing to give up.
        } else if stopped {
            tracing::error!("leaderelection lost/stopped");
            metrics.set_leader(lease_name, false);
            if elector.release().await {
                tracing::info!(lease = lease_name, "released the leader lease");
            }
        } else {
            tracing::warn!(
                lease = lease_name,
                "not releasing the leader lease: controllers may still write; it expires instead"
            );
        }
    }
    factory.shutdown().await;
    serve_cancel.cancel();
    Ok(exit)
}

/// Resolves when SIGTERM or SIGINT arrives.
pub async fn shutdown_signal() {
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGTERM");
                std::future::pending::<()>().await;
            }
        }
    };
    tokio::select! {
        _ = terminate => tracing::info!("received SIGTERM, shutting down"),
        r = tokio::signal::ctrl_c() => match r {
            Ok(()) => tracing::info!("received SIGINT, shutting down"),
            Err(e) => {
                tracing::warn!(error = %e, "cannot listen for SIGINT");
                std::future::pending::<()>().await;
            }
        },
    }
}
