//! The process around the controllers, in the order of kube-controller-manager's `Run`
//! (`cmd/kube-controller-manager/app/controllermanager.go`), one phase a function:
//!
//! 1. [`endpoints`]: `/metrics`, `/healthz`, `/livez`, `/readyz` are set up and served first;
//! 2. [`coordination`]: with `--leader-elect`, wait for the lease; with `--sharding=namespace`,
//!    join the ring; else run alone;
//! 3. [`controllers`]: build the enabled controllers on one informer factory, start the
//!    informers, then the controllers (`--controller-start-interval` apart);
//! 4. wait for SIGTERM/SIGINT ([`signal`]) or, leading, for the lease to be lost;
//! 5. shut down: stop the controllers within `--controller-shutdown-timeout`, leave the ring or
//!    give the lease up (only once every controller has stopped), stop the informers and the
//!    server.
//!
//! Losing the lease exits non-zero ("leaderelection lost/stopped"); SIGTERM/SIGINT stops taking
//! new work, lets in-flight syncs finish and exits 0 without releasing the lease, as upstream
//! does while `ControllerManagerReleaseLeaderElectionLockOnExit` is off (v1.37's default).
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

mod controllers;
mod coordination;
mod endpoints;
pub(crate) mod signal;

use tokio_util::sync::CancellationToken;

use crate::client::ClientFactory;
use crate::controller::Controller;
use crate::feature_gates::{FeatureGates, RELEASE_LEADER_ELECTION_LOCK_ON_EXIT};
use crate::metrics::Metrics;
use crate::options::Options;

use coordination::Coordination;

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

/// Runs the `enabled` controllers with clients from `clients` until `stop` fires or leadership
/// is lost.
///
/// `metrics` is served at `/metrics` and installed as the process-wide sink of work-queue and
/// sync metrics (give `clients` the same one).
pub(crate) async fn run(
    options: &Options,
    mut clients: ClientFactory,
    metrics: Metrics,
    enabled: Vec<Controller>,
    feature_gates: FeatureGates,
    stop: CancellationToken,
) -> anyhow::Result<Exit> {
    if enabled.is_empty() {
        anyhow::bail!("--controllers enables none of the controllers this binary has");
    }
    let endpoints = endpoints::configure(options, &metrics);
    let serve_cancel = stop.child_token();
    endpoints::serve(options, &endpoints, &clients, serve_cancel.clone()).await?;

    let release_on_exit = feature_gates.enabled(&RELEASE_LEADER_ELECTION_LOCK_ON_EXIT);
    let coordination = Coordination::join(options, &mut clients, &metrics, &endpoints)?;
    if !coordination.lead(&metrics, &stop).await {
        serve_cancel.cancel();
        return Ok(Exit::Stopped);
    }

    let built = controllers::build(
        options,
        &mut clients,
        enabled,
        &feature_gates,
        &coordination,
        &stop,
    )
    .await?;
    let controllers_cancel = stop.child_token();
    built.factory.start(&controllers_cancel);
    let member = coordination.run_member(&built.factory, &endpoints);
    let factory = built.factory.clone();
    let running = built
        .start(
            options.controller_start_interval,
            &endpoints,
            controllers_cancel,
        )
        .await;

    let exit = coordination.wait(&metrics, release_on_exit, &stop).await;

    let stopped = running.stop(options.controller_shutdown_timeout).await;
    coordination
        .finish(member, stopped, release_on_exit, &metrics, &factory, &stop)
        .await;
    factory.shutdown().await;
    serve_cancel.cancel();
    Ok(exit)
}
